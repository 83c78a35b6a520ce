-- Version 7: analytics commands (`kvbench analytics pagerank` and `lookup`,
-- paper D). One row per command; record_json holds the AnalyticsRecord
-- exactly (its per-implementation results are a few numbers each, so they
-- need no table of their own). Numbered apart from runs: they are not runs
-- of a workload and never appear in `kvbench runs`.
CREATE TABLE analytics_runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    kind        TEXT    NOT NULL CHECK (kind IN ('pagerank', 'lookup')),
    started_at  TEXT    NOT NULL,
    status      TEXT    NOT NULL CHECK (status IN ('ok', 'failed')),
    graph       TEXT    NOT NULL,
    record_json TEXT    NOT NULL
);
