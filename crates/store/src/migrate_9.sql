-- Version 9: a run's marks and warnings are typed (kvbench_model::Mark):
-- each an object with its kind, its figures and its sentence, where they
-- were sentences before. No table changes; migrate.rs rewrites the stored
-- sentences after this file (`typed_marks`), keeping each sentence and
-- giving it the kind its first word named.
SELECT 1;
