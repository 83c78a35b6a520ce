-- Version 8: a read that misses is timed too (`--max-memory`: a cache's
-- hits and misses apart), and a cache-aside run keeps the application's
-- latency, so a histogram row may hold the misses' latency (measure
-- 'miss') or the application's ('app'). The rows are copied unchanged.
CREATE TABLE histograms_v8 (
    run_id   INTEGER NOT NULL,
    phase    TEXT    NOT NULL,
    op       TEXT    NOT NULL,
    measure  TEXT    NOT NULL CHECK (measure IN ('latency', 'service', 'lag', 'miss', 'app')),
    encoding TEXT    NOT NULL,  -- 'hdr-v2-base64': HdrHistogram V2, base64
    data     TEXT    NOT NULL,
    PRIMARY KEY (run_id, phase, op, measure),
    FOREIGN KEY (run_id, phase, op) REFERENCES op_results (run_id, phase, op)
        ON DELETE CASCADE
) WITHOUT ROWID;

INSERT INTO histograms_v8 (run_id, phase, op, measure, encoding, data)
    SELECT run_id, phase, op, measure, encoding, data FROM histograms;
DROP TABLE histograms;
ALTER TABLE histograms_v8 RENAME TO histograms;
