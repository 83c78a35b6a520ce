-- Version 4: each second of a phase's window keeps its merged latency
-- histogram per operation kind (the `histogram` of a SeriesPoint), so that
-- interval logs can be exported exactly. Like the phase histograms, they are
-- the bulk of a run and most queries never read them, so they live here and
-- not in the phase JSON. A second without completions has no row; runs saved
-- before this version have none at all.
CREATE TABLE interval_histograms (
    run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    phase    TEXT    NOT NULL CHECK (phase IN ('load', 'run')),
    op       TEXT    NOT NULL,
    second   INTEGER NOT NULL CHECK (second >= 0),
    encoding TEXT    NOT NULL,  -- 'hdr-v2-base64': HdrHistogram V2, base64
    data     TEXT    NOT NULL,
    PRIMARY KEY (run_id, phase, op, second)
) WITHOUT ROWID;
