-- Version 2: open-loop runs keep three histograms per operation kind
-- (response time, service time, schedule lag), so a histogram row is keyed
-- by its measure too. Existing rows are response-time ('latency') histograms.
CREATE TABLE histograms_v2 (
    run_id   INTEGER NOT NULL,
    phase    TEXT    NOT NULL,
    op       TEXT    NOT NULL,
    measure  TEXT    NOT NULL CHECK (measure IN ('latency', 'service', 'lag')),
    encoding TEXT    NOT NULL,  -- 'hdr-v2-base64': HdrHistogram V2, base64
    data     TEXT    NOT NULL,
    PRIMARY KEY (run_id, phase, op, measure),
    FOREIGN KEY (run_id, phase, op) REFERENCES op_results (run_id, phase, op)
        ON DELETE CASCADE
) WITHOUT ROWID;

INSERT INTO histograms_v2 (run_id, phase, op, measure, encoding, data)
    SELECT run_id, phase, op, 'latency', encoding, data FROM histograms;
DROP TABLE histograms;
ALTER TABLE histograms_v2 RENAME TO histograms;
