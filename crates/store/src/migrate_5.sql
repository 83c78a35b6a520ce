-- Version 5: which runs an experiment file produced. A row ties one stored
-- run to one cell of one pass over the file; it is written in the run's own
-- save transaction, so a run and its cell are stored together or not at all.
-- `cell_key` is a hash of the cell's complete configuration (kvbench's
-- version included): a later `experiment run` skips a cell whose key and
-- iteration already have a run that did not fail. `generation` starts at 1
-- and `--restart` takes the next one, so the runs of earlier passes are kept
-- but no longer count as finished.
CREATE TABLE experiment_cells (
    run_id     INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    experiment TEXT    NOT NULL,
    generation INTEGER NOT NULL CHECK (generation >= 1),
    cell_key   TEXT    NOT NULL,
    cell_index INTEGER NOT NULL CHECK (cell_index >= 0),
    iteration  INTEGER NOT NULL CHECK (iteration >= 1)
);
CREATE INDEX experiment_cells_by_pass ON experiment_cells (experiment, generation);
CREATE INDEX experiment_cells_by_key ON experiment_cells (cell_key);
