-- kvbench store, schema version 1. Applied once, by migrate.rs, inside the
-- migration's write transaction; later versions add migrations, never edit
-- this file (a database at version 1 must keep meaning what it meant).
--
-- Columns hold what reports filter and sort on; the JSON columns hold the
-- rest of the RunRecord exactly (serde_json), so adding a field to the model
-- needs no migration. Histograms live in their own table because they are the
-- bulk of a run and most queries never read them.

CREATE TABLE runs (
    -- AUTOINCREMENT: an id is never reused, even after the newest run is
    -- deleted by hand, so a run id quoted in a report stays unambiguous.
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at       TEXT    NOT NULL,  -- RFC 3339, UTC
    finished_at      TEXT    NOT NULL,
    status           TEXT    NOT NULL CHECK (status IN ('ok', 'invalid', 'failed')),
    failure          TEXT,
    marks_json       TEXT    NOT NULL,
    warnings_json    TEXT    NOT NULL,
    -- Copies of config fields, for WHERE and ORDER BY; config_json is the truth.
    system           TEXT    NOT NULL,
    workload         TEXT    NOT NULL,
    records          INTEGER NOT NULL,
    operations       INTEGER NOT NULL,
    clients          INTEGER NOT NULL,
    pipeline         INTEGER NOT NULL,
    -- Decimal text: a u64 seed does not fit SQLite's signed INTEGER.
    seed             TEXT    NOT NULL,
    -- Run-phase throughput as measured (also for failed runs); NULL without a
    -- run phase. Listings hide it for failed runs.
    throughput       REAL,
    config_json      TEXT    NOT NULL,
    environment_json TEXT    NOT NULL,
    cpu_json         TEXT,
    -- PhaseResult with each op's `histogram` moved to the histograms table.
    load_json        TEXT,
    run_json         TEXT
);

CREATE INDEX runs_system_workload ON runs (system, workload);
CREATE INDEX runs_started_at ON runs (started_at);

-- One row per operation kind per phase: a copy of the OpResult numbers for
-- SQL queries (the phase JSON stays the source for get_run).
CREATE TABLE op_results (
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    phase      TEXT    NOT NULL CHECK (phase IN ('load', 'run')),
    op         TEXT    NOT NULL,
    completed  INTEGER NOT NULL,
    misses     INTEGER NOT NULL,
    errors     INTEGER NOT NULL,
    throughput REAL    NOT NULL,
    p50_us     REAL    NOT NULL,
    p95_us     REAL    NOT NULL,
    p99_us     REAL    NOT NULL,
    p999_us    REAL    NOT NULL,
    max_us     REAL    NOT NULL,
    mean_us    REAL    NOT NULL,
    PRIMARY KEY (run_id, phase, op)
) WITHOUT ROWID;

-- The full latency histogram of each op_results row; absent when the op's
-- histogram is empty.
CREATE TABLE histograms (
    run_id   INTEGER NOT NULL,
    phase    TEXT    NOT NULL,
    op       TEXT    NOT NULL,
    encoding TEXT    NOT NULL,  -- 'hdr-v2-base64': HdrHistogram V2, base64
    data     TEXT    NOT NULL,
    PRIMARY KEY (run_id, phase, op),
    FOREIGN KEY (run_id, phase, op) REFERENCES op_results (run_id, phase, op)
        ON DELETE CASCADE
) WITHOUT ROWID;

-- Server probes; seq keeps the record's order.
CREATE TABLE probes (
    run_id              INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq                 INTEGER NOT NULL,
    stage               TEXT    NOT NULL,
    rss_bytes           INTEGER,
    server_memory_bytes INTEGER,
    cpu_seconds         REAL,
    items               INTEGER,
    evictions           INTEGER,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
