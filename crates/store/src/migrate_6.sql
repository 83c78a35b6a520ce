-- Version 6: labels, KEY=VALUE pairs a user attaches to runs (`--label`,
-- `kvbench label`) to find, group and delete them. A key appears once per
-- run; a label given without a value has the empty value. Labels of a run
-- are saved in the run's own transaction and go with it when it is deleted.
CREATE TABLE run_labels (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key    TEXT    NOT NULL CHECK (length(key) > 0),
    value  TEXT    NOT NULL,
    PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
CREATE INDEX run_labels_by_key ON run_labels (key, value);
