//! Tests of the store against real SQLite files in temporary directories
//! and real PostgreSQL databases on a server the tests start themselves
//! ([`crate::testing`]). They check the promises other crates rely on, on
//! both backends: exact round trips, one transaction per run, distinct ids
//! for concurrent savers, early failure on a bad location, refusal of newer
//! or foreign databases, and that both backends read back the same. They
//! never start benchmarked servers.

use super::*;
use crate::db::{Backend, Db, TxKind};
use kvbench_model::mark::{Instability, Measure};
use kvbench_model::{
    CpuCost, Environment, Finding, LatencySummary, Mark, MarkKind, NodeProbe, OpKind, OpResult,
    PhaseResult, Probe, RunConfig, RunStatus, SeriesPoint, Setting, SystemKind, TopologyKind,
};
use std::time::Duration;

fn op_result(op: OpKind, k: u64) -> OpResult {
    let f = k as f64;
    OpResult {
        op,
        completed: 1_000_003 * k,
        misses: 17 * k,
        errors: 3 * k + 1,
        throughput: 12_345.678_901_234_567 * f,
        latency: LatencySummary {
            count: 999_983 * k,
            min_us: 5e-324 * f, // subnormal: must survive JSON exactly
            mean_us: (0.1 + 0.2) * f,
            p50_us: 101.000_000_000_000_01 * f,
            p95_us: 250.123_456_789 * f,
            p99_us: 1_000.0 / 3.0 * f,
            p999_us: 2_718.281_828_459_045 * f,
            max_us: f64::MAX / (f + 1.0),
        },
        histogram: format!("HISTFAAAACl4nJNpmSzMwMDAxAABzFCaEUIzQ+j/{op}{k}=="),
        // Pipelined and open-loop extras on some kinds only, so both
        // shapes round-trip.
        per_pipeline: k.is_multiple_of(3).then(|| LatencySummary {
            count: 999_983 * k,
            mean_us: (0.1 + 0.2) * f / 50.0,
            ..LatencySummary::default()
        }),
        service: k.is_multiple_of(2).then(|| LatencySummary {
            count: 7 * k,
            p99_us: 0.1 + f,
            ..LatencySummary::default()
        }),
        service_histogram: k.is_multiple_of(2).then(|| format!("SERVICE{k}")),
        lag: k.is_multiple_of(2).then(|| LatencySummary {
            count: 7 * k,
            max_us: 1e9 + f,
            ..LatencySummary::default()
        }),
        lag_histogram: k.is_multiple_of(2).then(|| format!("LAG{k}")),
        // Misses timed on some kinds only, as a cache's reads are.
        miss_latency: (k % 2 == 1).then(|| LatencySummary {
            count: 17 * k,
            p50_us: 33.0 + f,
            ..LatencySummary::default()
        }),
        miss_histogram: (k % 2 == 1).then(|| format!("MISS{k}")),
        // Cache-aside reads keep the application's latency too.
        app_latency: (k == 1).then(|| LatencySummary {
            count: 17 + 1_000_003,
            mean_us: 321.5,
            ..LatencySummary::default()
        }),
        app_histogram: (k == 1).then(|| "APP1".to_string()),
        with: k == 3,
    }
}

/// A record with a distinctive value in every field, two phases, several
/// ops and three probes, so a dropped or swapped field shows up.
fn full_record() -> RunRecord {
    RunRecord {
        id: Some(987_654), // must be ignored by save_run
        started_at: "2024-05-01T10:00:00.123456Z".into(),
        finished_at: "2024-05-01T10:07:31.654321Z".into(),
        status: RunStatus::Invalid,
        failure: None,
        marks: vec![
            Finding::Errors {
                failed: 7,
                by_kind: vec![("timeout".into(), 7)],
                allowed: false,
            }
            .into(),
            Finding::Unstable {
                measure: Measure::Throughput,
                shape: Instability::TwoLevels {
                    low: 1000.5,
                    high: 2000.25,
                    low_seconds: 3,
                    high_seconds: 4,
                },
            }
            .into(),
            Finding::Evictions { evicted: 3 }.into(),
        ],
        warnings: vec![
            Mark::recorded("server swapped: \"free -m\" shows 12 MiB free; add memory"),
            Finding::StartSpread {
                spread_ms: 6.25,
                bound_ms: 5.0,
                window_ms: None,
            }
            .into(),
        ],
        config: full_config(),
        environment: Environment {
            host: "bench-07".into(),
            kernel: "6.8.0-31-generic".into(),
            cpu_model: "AMD EPYC 7763 64-Core Processor".into(),
            cores: 2,
            memory_bytes: 8_234_567_890,
            server_name: Some("memcached".into()),
            server_version: "1.6.29".into(),
            server_allocator: Some("libc".into()),
            kvbench_version: "0.1.0".into(),
            git_revision: Some("96863cb".into()),
            reused_server: Some(kvbench_model::ReusedServer {
                loaded_by_run: 3,
                runs_before: 2,
            }),
        },
        load: Some(PhaseResult {
            duration_s: 4.125,
            completed: 123_457,
            errors: 2,
            throughput: 29_928.969_696_969_696,
            ops: vec![op_result(OpKind::Insert, 1)],
            error_samples: vec!["SERVER_ERROR out of memory".into()],
            errors_by_kind: vec![("error_reply".into(), 2)],
            error_replies: vec![],
            series: Vec::new(),
            offered_rate: None,
            redirects_moved: 0,
            redirects_ask: 0,
            retries: 0,
            reconnects: 0,
            outage: None,
            faults: Vec::new(),
            nodes: Vec::new(),
            fills: 0,
            fill_errors: 0,
            fill_lateness: None,
            cache: None,
            server_time: None,
            scale_out: None,
        }),
        run: Some(full_run_phase()),
        probes: full_probes(),
        cpu: Some(CpuCost {
            server_seconds: Some(61.25),
            server_us_per_op: Some(6.201_562_5),
            client_seconds: 40.5,
            client_us_per_op: Some(4.100_625),
            canary: Some(kvbench_model::Canary {
                steal: 0.01,
                iowait: 0.0,
                client_cpu_per_wall: 0.93,
                client_involuntary_per_s: 12.5,
                server_involuntary_per_s: Some(3.0),
                base_rtt_us: Some(41.5),
            }),
        }),
        labels: [
            ("host", "bench-07"),
            ("flagged", ""),
            ("note", "a = b, ünïcode"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
    }
}

/// The run phase: three operation kinds, errors, two seconds of series.
fn full_run_phase() -> PhaseResult {
    PhaseResult {
        duration_s: 31.25,
        completed: 9_876_543,
        errors: 9,
        throughput: 316_049.376,
        ops: vec![
            op_result(OpKind::Read, 2),
            op_result(OpKind::Update, 3),
            op_result(OpKind::Insert, 4),
        ],
        error_samples: vec!["timeout after 1 s".into(), "ERROR".into()],
        errors_by_kind: vec![("timeout".into(), 7), ("error_reply".into(), 2)],
        error_replies: vec![kvbench_model::ErrorReplies {
            word: "OOM".into(),
            count: 2,
            first: "OOM command not allowed when used memory > 'maxmemory'.".into(),
        }],
        series: vec![
            SeriesPoint {
                second: 0,
                op: OpKind::Read,
                completed: 310_000,
                misses: 1_200,
                errors: 0,
                p50_us: 51.5,
                p99_us: 210.25,
                p999_us: 1_024.0,
                histogram: "HISTFAAAAB14nJNpmSzMwMDAyQABzFCaEUIzQ+j/SECOND0".into(),
            },
            SeriesPoint {
                second: 1,
                op: OpKind::Update,
                completed: 0,
                misses: 0,
                errors: 9,
                p50_us: 0.0,
                p99_us: 0.0,
                p999_us: 0.0,
                histogram: String::new(),
            },
        ],
        offered_rate: Some(320_000.0),
        redirects_moved: 0,
        redirects_ask: 0,
        retries: 0,
        reconnects: 0,
        outage: None,
        faults: Vec::new(),
        nodes: Vec::new(),
        fills: 40,
        fill_errors: 1,
        fill_lateness: None,
        cache: None,
        server_time: None,
        scale_out: None,
    }
}

/// Every field of the run's configuration set to something distinctive.
fn full_config() -> RunConfig {
    RunConfig {
        system: SystemKind::Memcached,
        workload: "workloads/custom-b.properties".into(),
        records: 123_457,
        operations: 9_876_543,
        duration_s: Some(31.25),
        field_count: 7,
        field_length: 113,
        read_proportion: 0.1 + 0.2,
        update_proportion: 0.55,
        insert_proportion: 0.15,
        request_distribution: "zipfian".into(),
        clients: 48,
        pipeline: 16,
        threads: 3,
        load_clients: 12,
        load_pipeline: 64,
        warmup_s: 2.5,
        seed: u64::MAX - 1, // does not fit SQLite's signed INTEGER
        seed_source: "entropy".into(),
        server_settings: vec![
            Setting {
                name: "-m".into(),
                value: "4096".into(),
                reason: "hold every record without eviction".into(),
            },
            Setting {
                name: "-t".into(),
                value: "2".into(),
                reason: "one thread per core".into(),
            },
        ],
        server_binary: "/opt/memcached-1.6.29/bin/memcached".into(),
        target: Some("10.1.2.3:11211".into()),
        rate: Some(12_500.5),
        arrival: Some("poisson".into()),
        allow_errors: true,
        allow_incomplete_load: false,
        skip_load: false,
        topology: TopologyKind::Cluster,
        nodes: 5,
        replicas: 1,
        pool_hash: Some("spymemcached".into()),
        flush: false,
        allow_existing: false,
        cleanup: false,
        netns: Some(kvbench_model::NetnsConfig {
            link_rate_bits: Some(1_000_000_000),
            link_delay_us: 50.0,
        }),
        server_cpus: Some("0".into()),
        client_cpus: Some("1-3".into()),
        scale_out: None,
        reload: Some("per-workload".into()),
        verdict: Some(kvbench_model::VerdictRule {
            margin: 0.03,
            looks: 8,
        }),
        server_args: vec!["--hz".into(), "20".into()],
        threads_reason: Some("default: test".into()),
        stall_s: None,
        reconnect: None,
        max_retries: None,
        retry_backoff: None,
        faults: Vec::new(),
        max_memory: None,
        max_memory_mb: None,
        eviction: None,
        companion: Some(kvbench_model::Companion {
            workload: "zunionstore".into(),
            clients: 2,
            pipeline: 1,
            records: 8,
            workload_properties: vec![("kvbench.zset.sets".into(), "4".into())],
        }),
        workload_properties: vec![
            ("recordcount".into(), "123457".into()),
            ("requestdistribution".into(), "zipfian".into()),
        ],
        io: Some("uring".into()),
    }
}

/// Three probes, before and after the load and after the run.
fn full_probes() -> Vec<Probe> {
    vec![
        Probe {
            stage: "before_load".into(),
            rss_bytes: Some(3_145_728),
            server_memory_bytes: Some(0),
            cpu_seconds: Some(0.015),
            items: Some(0),
            evictions: Some(0),
            nodes: Vec::new(),
        },
        Probe {
            stage: "after_load".into(),
            rss_bytes: None,
            server_memory_bytes: Some(140_123_456),
            cpu_seconds: None,
            items: Some(123_457),
            evictions: None,
            nodes: vec![
                NodeProbe {
                    addr: "127.0.0.1:7000".into(),
                    role: "master".into(),
                    rss_bytes: None,
                    server_memory_bytes: Some(70_000_000),
                    cpu_seconds: Some(1.5),
                    items: Some(61_000),
                    evictions: None,
                },
                NodeProbe {
                    addr: "127.0.0.1:7001".into(),
                    role: "replica".into(),
                    rss_bytes: Some(1),
                    server_memory_bytes: Some(70_123_456),
                    cpu_seconds: None,
                    items: Some(62_457),
                    evictions: Some(0),
                },
            ],
        },
        Probe {
            stage: "after_run".into(),
            rss_bytes: Some(i64::MAX as u64),
            server_memory_bytes: Some(150_000_001),
            cpu_seconds: Some(62.437_5),
            items: Some(123_460),
            evictions: Some(42),
            nodes: Vec::new(),
        },
    ]
}

fn failed_record() -> RunRecord {
    let mut r = full_record();
    r.status = RunStatus::Failed;
    r.failure = Some("server exited with status 1 during the run phase".into());
    r.marks.clear();
    r.cpu = None;
    // A partial run phase: stored, but never listed as a result.
    if let Some(run) = r.run.as_mut() {
        run.ops.truncate(1);
        run.ops[0].histogram.clear();
    }
    r
}

fn with_id(mut r: RunRecord, id: i64) -> RunRecord {
    r.id = Some(id);
    r
}

fn db_path(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("runs.db")
}

/// A fresh database of one backend, for a test run on both.
enum Fixture {
    Sqlite(tempfile::TempDir),
    Postgres(crate::testing::TestDatabase),
}

impl Fixture {
    fn sqlite() -> Fixture {
        Fixture::Sqlite(tempfile::tempdir().expect("temporary directory"))
    }

    fn postgres() -> Fixture {
        Fixture::Postgres(crate::testing::database())
    }

    fn location(&self) -> Location {
        match self {
            Fixture::Sqlite(dir) => Location::Sqlite(db_path(dir)),
            Fixture::Postgres(db) => db.location().clone(),
        }
    }

    fn open(&self) -> Store {
        let store = Store::open_location(&self.location()).expect("opens");
        assert_eq!(store.db.backend(), self.backend());
        store
    }

    /// A connection that neither creates nor migrates anything.
    fn raw(&self) -> Db {
        match self {
            Fixture::Sqlite(dir) => Db::Sqlite(Connection::open(db_path(dir)).expect("opens")),
            Fixture::Postgres(db) => {
                let Location::Postgres(url) = db.location() else {
                    unreachable!("a PostgreSQL fixture")
                };
                Db::Postgres(PgConn::new(connect(url).expect("connects")))
            }
        }
    }

    fn backend(&self) -> Backend {
        match self {
            Fixture::Sqlite(_) => Backend::Sqlite,
            Fixture::Postgres(_) => Backend::Postgres,
        }
    }
}

/// Runs each named `fn(&Fixture)` as two tests, `NAME::sqlite` and
/// `NAME::postgres`, each on a fresh database.
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn sqlite() {
                super::$name(&super::Fixture::sqlite());
            }
            #[test]
            fn postgres() {
                super::$name(&super::Fixture::postgres());
            }
        }
    )*};
}

on_both!(
    full_record_round_trips_exactly,
    minimal_record_round_trips,
    failed_run_is_saved_and_listed_without_numbers,
    list_is_newest_first_and_filters,
    missing_run_is_not_found,
    newer_schema_is_refused,
    read_only_open_needs_the_current_schema,
    reopening_keeps_runs_and_schema_version,
    save_interrupted_by_constraint_leaves_no_partial_rows,
    record_that_would_not_read_back_is_refused,
    version_1_database_is_migrated_and_its_runs_still_read,
    interval_histograms_live_in_their_own_table,
    selections_resolve_to_stored_ids_and_name_the_first_missing_one,
    experiment_cells_count_only_runs_that_did_not_fail,
    labels_filter_listings_and_change_all_or_nothing,
    delete_removes_every_row_of_the_run_and_nothing_else,
    selections_by_experiment_and_label,
    cell_runs_are_the_iterations_of_the_same_pass_that_did_not_fail,
    analytics_records_round_trip_exactly_and_are_numbered_apart_from_runs,
    an_analytics_record_that_would_not_read_back_is_not_saved,
    concurrent_savers_get_distinct_ids_and_whole_runs,
    concurrent_opens_of_a_fresh_database_migrate_once,
    a_writer_holding_the_lock_makes_a_save_busy,
);

/// The one value `sql` selects.
fn scalar(db: &Db, sql: &str) -> i64 {
    db.query_row(sql, &[])
        .and_then(|mut r| r.take(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Row counts of every table, to show that a refused save left nothing.
fn counts(store: &Store) -> [i64; 5] {
    [
        "runs",
        "op_results",
        "histograms",
        "probes",
        "interval_histograms",
    ]
    .map(|t| count_rows(store, t))
}

fn count_rows(store: &Store, table: &str) -> i64 {
    scalar(&store.db, &format!("SELECT count(*) FROM {table}"))
}

/// Rows per table that belong to run `id`, for every table with a run_id.
fn rows_of(store: &Store, id: i64) -> Vec<(String, i64)> {
    let tables_sql = match store.db.backend() {
        Backend::Sqlite => {
            "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c
             WHERE m.type = 'table' AND c.name = 'run_id' ORDER BY m.name"
        }
        Backend::Postgres => {
            "SELECT CAST(table_name AS TEXT) FROM information_schema.columns
             WHERE table_schema = current_schema() AND column_name = 'run_id'
             ORDER BY table_name"
        }
    };
    let tables: Vec<String> = store
        .db
        .query(tables_sql, &[])
        .expect("lists tables")
        .into_iter()
        .map(|mut r| r.take(0).expect("a name"))
        .collect();
    tables
        .into_iter()
        .map(|t| {
            let n = store
                .db
                .query_row(
                    &format!("SELECT count(*) FROM {t} WHERE run_id = ?1"),
                    &[db::Value::Int(id)],
                )
                .and_then(|mut r| r.take(0))
                .expect("counts");
            (t, n)
        })
        .collect()
}

/// The schema version the database records.
fn version(db: &Db) -> i64 {
    migrate::marks(db).expect("reads the version").0
}

/// Sets the recorded schema version, as another kvbench would have.
fn set_version(db: &Db, version: i64) {
    let sql = match db.backend() {
        Backend::Sqlite => format!("PRAGMA user_version = {version}"),
        Backend::Postgres => format!("UPDATE kvbench_meta SET version = {version}"),
    };
    db.batch(&sql).expect("sets the version");
}

fn sqlite(store: &Store) -> &Connection {
    match &store.db {
        Db::Sqlite(conn) => conn,
        Db::Postgres(_) => panic!("an SQLite store"),
    }
}

fn full_record_round_trips_exactly(fx: &Fixture) {
    let mut store = fx.open();
    if let Location::Sqlite(path) = fx.location() {
        assert_eq!(store.path(), path);
    }
    assert_eq!(store.location(), &fx.location());
    let record = full_record();
    let id = store.save_run(&record).unwrap();
    assert_eq!(id, 1, "record.id must be ignored");
    assert_eq!(store.get_run(id).unwrap(), with_id(record.clone(), id));

    // The layout reports rely on: histograms out of the JSON, into their table.
    assert_eq!(counts(&store), [1, 4, 11, 3, 1]);
    let mut row = store
        .db
        .query_row("SELECT run_json, seed FROM runs WHERE id = 1", &[])
        .unwrap();
    let (run_json, seed): (String, String) = (row.take(0).unwrap(), row.take(1).unwrap());
    assert!(!run_json.contains("histogram"), "{run_json}");
    assert_eq!(seed, (u64::MAX - 1).to_string());
    let mut row = store
        .db
        .query_row(
            "SELECT o.p99_us, h.data FROM op_results o JOIN histograms h USING (run_id, phase, op)
             WHERE o.run_id = 1 AND o.phase = 'run' AND o.op = 'update'",
            &[],
        )
        .unwrap();
    let (p99, data): (f64, String) = (row.take(0).unwrap(), row.take(1).unwrap());
    assert_eq!(p99, 1_000.0 / 3.0 * 3.0);
    assert_eq!(data, op_result(OpKind::Update, 3).histogram);
}

fn minimal_record() -> RunRecord {
    let mut r = full_record();
    r.load = None;
    r.run = Some(PhaseResult {
        ops: vec![],
        error_samples: vec![],
        ..r.run.unwrap()
    });
    r.probes.clear();
    r.cpu = None;
    r.marks.clear();
    r.warnings.clear();
    r.config.server_settings.clear();
    r.config.duration_s = None;
    r.environment = Environment::default();
    r
}

fn minimal_record_round_trips(fx: &Fixture) {
    let mut store = fx.open();
    let r = minimal_record();
    let id = store.save_run(&r).unwrap();
    assert_eq!(store.get_run(id).unwrap(), with_id(r, id));
}

fn failed_run_is_saved_and_listed_without_numbers(fx: &Fixture) {
    let mut store = fx.open();
    let record = failed_record();
    let id = store.save_run(&record).unwrap();
    assert_eq!(store.get_run(id).unwrap(), with_id(record, id));

    let list = store.list_runs(&RunFilter::default()).unwrap();
    assert_eq!(
        list,
        vec![RunSummary {
            id,
            started_at: "2024-05-01T10:00:00.123456Z".into(),
            status: "failed".into(),
            system: "memcached".into(),
            workload: "workloads/custom-b.properties".into(),
            clients: 48,
            records: 123_457,
            throughput: None,
            read_p99_us: None,
            update_p99_us: None,
            failure: Some("server exited with status 1 during the run phase".into()),
            labels: failed_record().labels,
        }]
    );
}

/// The ids `filter` lists, in the listing's order.
fn listed(store: &Store, filter: RunFilter) -> Vec<i64> {
    store
        .list_runs(&filter)
        .unwrap()
        .iter()
        .map(|s| s.id)
        .collect()
}

/// Runs of several systems, workloads, statuses and start times, with a
/// tie and a time that sorts wrong as text.
fn listing_records() -> Vec<RunRecord> {
    let run = |system, workload: &str, status, started_at: &str| {
        let mut r = if status == RunStatus::Failed {
            failed_record()
        } else {
            full_record()
        };
        r.status = status;
        r.config.system = system;
        r.config.workload = workload.into();
        r.started_at = started_at.into();
        r
    };
    use RunStatus::*;
    use SystemKind::*;
    vec![
        run(Redis, "a", Ok, "2024-05-01T10:00:00Z"),     // id 1
        run(Redis, "b", Failed, "2024-05-03T09:00:00Z"), // id 2
        run(Memcached, "a", Ok, "2024-05-02T08:00:00Z"), // id 3
        run(Memcached, "a", Invalid, "2024-05-01T10:00:00.5Z"), // id 4: later than id 1
        run(Redis, "a", Ok, "2024-05-02T08:00:00Z"),     // id 5: ties with 3, saved later
    ]
}

fn list_is_newest_first_and_filters(fx: &Fixture) {
    let mut store = fx.open();
    for r in &listing_records() {
        store.save_run(r).unwrap();
    }
    let ids = |filter: RunFilter| listed(&store, filter);
    let some = |s: &str| Some(s.to_string());
    assert_eq!(ids(RunFilter::default()), [2, 5, 3, 4, 1]);
    assert_eq!(
        ids(RunFilter {
            system: some("redis"),
            ..Default::default()
        }),
        [2, 5, 1]
    );
    assert_eq!(
        ids(RunFilter {
            workload: some("a"),
            ..Default::default()
        }),
        [5, 3, 4, 1]
    );
    assert_eq!(
        ids(RunFilter {
            status: some("ok"),
            ..Default::default()
        }),
        [5, 3, 1]
    );
    assert_eq!(
        ids(RunFilter {
            system: some("memcached"),
            workload: some("a"),
            status: some("invalid"),
            limit: None,
            labels: Vec::new(),
            ids: None,
        }),
        [4]
    );
    assert_eq!(
        ids(RunFilter {
            limit: Some(2),
            ..Default::default()
        }),
        [2, 5]
    );
    assert_eq!(
        ids(RunFilter {
            limit: Some(0),
            ..Default::default()
        }),
        Vec::<i64>::new()
    );
    assert!(ids(RunFilter {
        system: some("none"),
        ..Default::default()
    })
    .is_empty());
    // Case matters, on both backends.
    assert!(ids(RunFilter {
        system: some("Redis"),
        ..Default::default()
    })
    .is_empty());

    // A measured run lists its run-phase numbers.
    let top = &store
        .list_runs(&RunFilter {
            status: some("ok"),
            limit: Some(1),
            ..Default::default()
        })
        .unwrap()[0];
    assert_eq!(top.throughput, Some(316_049.376));
    assert_eq!(top.read_p99_us, Some(1_000.0 / 3.0 * 2.0));
    assert_eq!(top.update_p99_us, Some(1_000.0 / 3.0 * 3.0));
    assert_eq!(top.failure, None);

    // A start time that is no time sorts last.
    let mut odd = full_record();
    odd.started_at = "not a time".into();
    let id = store.save_run(&odd).unwrap();
    assert_eq!(listed(&store, RunFilter::default()), [2, 5, 3, 4, 1, id]);
}

fn missing_run_is_not_found(fx: &Fixture) {
    let store = fx.open();
    let err = store.get_run(42).unwrap_err();
    assert!(matches!(err, StoreError::NotFound(42)), "{err:?}");
    assert_eq!(err.to_string(), "no run with id 42");
}

#[test]
fn open_in_missing_directory_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-such-dir").join("x.db");
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "cannot open database {}: unable to open database file",
            path.display()
        )
    );
}

#[test]
fn open_under_a_regular_file_fails() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let path = file.path().join("x.db");
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
}

#[test]
fn open_on_unwritable_location_fails() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    drop(Store::open(&path).unwrap());
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    // Root (CAP_DAC_OVERRIDE) writes through 0444; only assert where the
    // permission is real, and use /proc, unwritable to everyone, as well.
    if std::fs::OpenOptions::new().write(true).open(&path).is_err() {
        let err = Store::open(&path).unwrap_err();
        assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
    }
    let proc_path = Path::new("/proc/kvbench-store-test.db");
    let err = Store::open(proc_path).unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    assert!(
        err.to_string().contains("/proc/kvbench-store-test.db"),
        "{err}"
    );
}

#[test]
fn non_database_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    std::fs::write(
        &path,
        "this is a text file, not SQLite, and long enough to matter\n".repeat(20),
    )
    .unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    assert!(err.to_string().ends_with("file is not a database"), "{err}");
}

#[test]
fn foreign_sqlite_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE runs (x); INSERT INTO runs VALUES (1);")
        .unwrap();
    drop(conn);
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Foreign { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "{} is an SQLite database not created by kvbench; choose another --db",
            path.display()
        )
    );
    // Untouched: still the other program's single table.
    let conn = Connection::open(&path).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn foreign_postgres_database_is_refused_and_left_alone() {
    let fx = Fixture::postgres();
    fx.raw()
        .batch("CREATE TABLE runs (x BIGINT); INSERT INTO runs VALUES (1);")
        .unwrap();
    for err in [
        Store::open_location(&fx.location()).unwrap_err(),
        Store::open_read_only_location(&fx.location()).unwrap_err(),
    ] {
        assert!(matches!(err, StoreError::Foreign { .. }), "{err:?}");
        assert!(
            err.to_string()
                .contains("a PostgreSQL database not created by kvbench"),
            "{err}"
        );
    }
    let raw = fx.raw();
    assert_eq!(
        scalar(
            &raw,
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
        ),
        1
    );
    assert_eq!(scalar(&raw, "SELECT count(*) FROM runs"), 1);
}

fn newer_schema_is_refused(fx: &Fixture) {
    let mut store = fx.open();
    store.save_run(&full_record()).unwrap();
    drop(store);
    set_version(&fx.raw(), SCHEMA_VERSION + 1);

    for err in [
        Store::open_location(&fx.location()).unwrap_err(),
        Store::open_read_only_location(&fx.location()).unwrap_err(),
    ] {
        match &err {
            StoreError::SchemaTooNew {
                found, supported, ..
            } => assert_eq!((*found, *supported), (SCHEMA_VERSION + 1, SCHEMA_VERSION)),
            other => panic!("expected SchemaTooNew, got {other:?}"),
        }
        let text = err.to_string();
        assert!(
            text.contains(&fx.location().to_string()) && text.contains("newer"),
            "{text}"
        );
    }
    // Refusing did not lower the version.
    assert_eq!(version(&fx.raw()), SCHEMA_VERSION + 1);
}

fn read_only_open_needs_the_current_schema(fx: &Fixture) {
    let mut store = fx.open();
    let id = store.save_run(&full_record()).unwrap();
    drop(store);
    let reader = Store::open_read_only_location(&fx.location()).unwrap();
    assert_eq!(reader.get_run(id).unwrap(), with_id(full_record(), id));
    assert_eq!(listed(&reader, RunFilter::default()), [id]);
    drop(reader);
    set_version(&fx.raw(), SCHEMA_VERSION - 1);
    let err = Store::open_read_only_location(&fx.location()).unwrap_err();
    assert!(matches!(err, StoreError::SchemaTooOld { .. }), "{err:?}");
    assert_eq!(version(&fx.raw()), SCHEMA_VERSION - 1, "nothing migrated");
}

fn reopening_keeps_runs_and_schema_version(fx: &Fixture) {
    let mut store = fx.open();
    let first = store.save_run(&full_record()).unwrap();
    drop(store);
    let mut store = fx.open();
    assert_eq!(version(&store.db), SCHEMA_VERSION);
    assert_eq!(store.get_run(first).unwrap(), with_id(full_record(), first));
    assert_eq!(store.save_run(&full_record()).unwrap(), first + 1);
}

fn save_interrupted_by_constraint_leaves_no_partial_rows(fx: &Fixture) {
    let mut store = fx.open();
    let good = store.save_run(&full_record()).unwrap();
    let before = counts(&store);

    // Two "read" results in the run phase violate op_results' primary key,
    // after the run row, the load phase and the first run op are inserted.
    let mut bad = full_record();
    let dup = op_result(OpKind::Read, 9);
    bad.run.as_mut().unwrap().ops.push(dup);
    let err = store.save_run(&bad).unwrap_err();
    assert!(matches!(err, StoreError::Sql { .. }), "{err:?}");
    let expected = match fx.backend() {
        Backend::Sqlite => "UNIQUE constraint failed",
        Backend::Postgres => "duplicate key value violates unique constraint",
    };
    assert!(err.to_string().contains(expected), "{err}");
    assert!(!err.is_busy());

    assert_eq!(counts(&store), before, "refused save left rows behind");
    assert_eq!(store.get_run(good).unwrap(), with_id(full_record(), good));
    assert_eq!(store.list_runs(&RunFilter::default()).unwrap().len(), 1);
    // The store is still usable after the failure.
    store.save_run(&full_record()).unwrap();
}

fn record_that_would_not_read_back_is_refused(fx: &Fixture) {
    let mut store = fx.open();
    let mut nan = full_record();
    nan.cpu.as_mut().unwrap().client_seconds = f64::NAN;
    let err = store.save_run(&nan).unwrap_err();
    assert!(
        matches!(err, StoreError::NotExact { part: "cpu", .. }),
        "{err:?}"
    );
    let mut inf = full_record();
    inf.config.warmup_s = f64::INFINITY;
    let err = store.save_run(&inf).unwrap_err();
    assert!(
        matches!(err, StoreError::NotExact { part: "config", .. }),
        "{err:?}"
    );
    // A u64 that no signed 64-bit column holds is refused, not wrapped.
    let mut huge = full_record();
    huge.config.records = u64::MAX;
    let err = store.save_run(&huge).unwrap_err();
    assert!(matches!(err, StoreError::Sql { .. }), "{err:?}");
    assert_eq!(counts(&store), [0, 0, 0, 0, 0]);
}

#[test]
fn reader_does_not_block_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    let mut writer = Store::open(&path).unwrap();
    let reader = Store::open(&path).unwrap();
    let mode: String = sqlite(&writer)
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    writer.save_run(&full_record()).unwrap();

    // Without WAL the commit would need the reader gone; with no busy
    // timeout it would then fail at once instead of waiting.
    writer.set_busy_timeout(Duration::ZERO).unwrap();
    let snapshot = sqlite(&reader).unchecked_transaction().unwrap();
    assert_eq!(reader.list_runs(&RunFilter::default()).unwrap().len(), 1);
    let second = writer.save_run(&full_record()).unwrap();
    assert_eq!(reader.list_runs(&RunFilter::default()).unwrap().len(), 1);
    drop(snapshot);
    assert_eq!(reader.list_runs(&RunFilter::default()).unwrap().len(), 2);
    assert_eq!(
        reader.get_run(second).unwrap(),
        with_id(full_record(), second)
    );
}

const CRASH_ENV: &str = "KVBENCH_STORE_CRASH_DB";

/// Child half of `crash_mid_save_keeps_earlier_runs`: starts a save, writes
/// part of a run (spilling uncommitted pages to the WAL), then exits without
/// committing or closing, as a killed kvbench would.
#[test]
#[ignore = "run only as a child process by crash_mid_save_keeps_earlier_runs"]
fn crash_child() {
    let Some(path) = std::env::var_os(CRASH_ENV) else {
        return;
    };
    let store = Store::open(Path::new(&path)).unwrap();
    sqlite(&store)
        .execute_batch(
            "PRAGMA cache_size = 1;
             BEGIN IMMEDIATE;
             INSERT INTO runs (started_at, finished_at, status, failure, marks_json,
                               warnings_json, system, workload, records, operations, clients,
                               pipeline, seed, throughput, config_json, environment_json,
                               cpu_json, load_json, run_json)
               SELECT started_at, finished_at, status, failure, marks_json, warnings_json,
                      system, workload, records, operations, clients, pipeline, seed,
                      throughput, config_json, environment_json, cpu_json, load_json,
                      run_json || printf('%.*c', 200000, ' ')
               FROM runs WHERE id = 1;
             INSERT INTO op_results
               SELECT last_insert_rowid(), phase, op, completed, misses, errors, throughput,
                      p50_us, p95_us, p99_us, p999_us, max_us, mean_us
               FROM op_results WHERE run_id = 1;",
        )
        .unwrap();
    let partial: i64 = sqlite(&store)
        .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    println!("partial runs visible before crash: {partial}");
    std::process::exit(0);
}

#[test]
fn crash_mid_save_keeps_earlier_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    let mut store = Store::open(&path).unwrap();
    let first = store.save_run(&full_record()).unwrap();
    drop(store);

    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "tests::crash_child", "--nocapture"])
        .env(CRASH_ENV, &path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("partial runs visible before crash: 2"),
        "child did not get mid-save: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let store = Store::open(&path).unwrap();
    assert_eq!(
        counts(&store),
        [1, 4, 11, 3, 1],
        "uncommitted rows survived"
    );
    assert_eq!(store.get_run(first).unwrap(), with_id(full_record(), first));
}

fn version_1_database_is_migrated_and_its_runs_still_read(fx: &Fixture) {
    // A database as version 1 of the schema wrote it, with one run.
    {
        let db = fx.raw();
        let schema = match db.backend() {
            Backend::Sqlite => MIGRATIONS_1.to_string(),
            Backend::Postgres => {
                db.batch(migrate::POSTGRES_PRELUDE).unwrap();
                migrate::to_postgres(MIGRATIONS_1)
            }
        };
        db.batch(&schema).unwrap();
        let mark = match db.backend() {
            Backend::Sqlite => "PRAGMA application_id = 1802920497; PRAGMA user_version = 1;",
            Backend::Postgres => "UPDATE kvbench_meta SET application_id = 1802920497, version = 1",
        };
        db.batch(mark).unwrap();
        db.batch(
            r#"INSERT INTO runs (id, started_at, finished_at, status, failure, marks_json, warnings_json,
                               system, workload, records, operations, clients, pipeline, seed,
                               config_json, environment_json, cpu_json, load_json, run_json, throughput)
             SELECT 1, '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z', 'ok', NULL,
                    '["evictions: the server evicted 3 items, so some reads could not hit"]',
                    '["42 latencies were above 60 s and were clamped to 60 s in the histograms"]',
                    'redis', 'w', 1, 1, 1, 1, '1', '{}', '{}', NULL, NULL, NULL, NULL;
             INSERT INTO op_results (run_id, phase, op, completed, misses, errors, throughput,
                                     p50_us, p95_us, p99_us, p999_us, max_us, mean_us)
             VALUES (1, 'run', 'read', 1, 0, 0, 1.0, 1, 1, 1, 1, 1, 1);
             INSERT INTO histograms (run_id, phase, op, encoding, data)
             VALUES (1, 'run', 'read', 'hdr-v2-base64', 'OLD');"#,
        )
        .unwrap();
    }
    let store = fx.open();
    assert_eq!(version(&store.db), SCHEMA_VERSION);
    let mut row = store
        .db
        .query_row("SELECT measure, data FROM histograms WHERE run_id = 1", &[])
        .unwrap();
    let (measure, data): (String, String) = (row.take(0).unwrap(), row.take(1).unwrap());
    assert_eq!((measure.as_str(), data.as_str()), ("latency", "OLD"));
    // Its sentences became typed marks (version 9): the same words, the
    // kind their first word named, and `note` where it named none.
    let mut row = store
        .db
        .query_row(
            "SELECT marks_json, warnings_json FROM runs WHERE id = 1",
            &[],
        )
        .unwrap();
    let (marks, warnings): (String, String) = (row.take(0).unwrap(), row.take(1).unwrap());
    let marks: Vec<Mark> = serde_json::from_str(&marks).unwrap();
    let warnings: Vec<Mark> = serde_json::from_str(&warnings).unwrap();
    assert_eq!(marks.len(), 1);
    assert_eq!(marks[0].kind(), MarkKind::Evictions);
    assert_eq!(
        marks[0].text(),
        "evictions: the server evicted 3 items, so some reads could not hit"
    );
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].kind(), MarkKind::Note);
    assert!(warnings[0].text().starts_with("42 latencies"));
    // The migrated tables take new runs (after the hand-written id 1).
    if fx.backend() == Backend::Sqlite {
        let mut store = store;
        assert_eq!(store.save_run(&full_record()).unwrap(), 2);
    }
}

const MIGRATIONS_1: &str = include_str!("schema.sql");

#[test]
fn application_id_is_kvb1() {
    assert_eq!(migrate::APPLICATION_ID, 1_802_920_497);
}

fn interval_histograms_live_in_their_own_table(fx: &Fixture) {
    let mut store = fx.open();
    let id = store.save_run(&full_record()).unwrap();
    let mut r = store
        .db
        .query_row(
            "SELECT phase, op, second, data FROM interval_histograms WHERE run_id = ?1",
            &[db::Value::Int(id)],
        )
        .unwrap();
    let row: (String, String, i64, String) = (
        r.take(0).unwrap(),
        r.take(1).unwrap(),
        r.take(2).unwrap(),
        r.take(3).unwrap(),
    );
    let point = &full_record().run.unwrap().series[0];
    assert_eq!(
        row,
        ("run".into(), "read".into(), 0, point.histogram.clone())
    );
}

#[test]
fn version_3_database_is_migrated_and_its_runs_read_without_interval_histograms() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    // A run as version 3 stored it: the same tables and JSON, but no
    // interval histograms anywhere.
    {
        let mut store = Store::open(&path).unwrap();
        store.save_run(&full_record()).unwrap();
        sqlite(&store)
            .execute_batch(
                "DROP TABLE analytics_runs; DROP TABLE run_labels; DROP TABLE experiment_cells;
                 DROP TABLE interval_histograms; PRAGMA user_version = 3;",
            )
            .unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(version(&store.db), SCHEMA_VERSION);
    let back = store.get_run(1).unwrap();
    let mut expected = with_id(full_record(), 1);
    if let Some(run) = expected.run.as_mut() {
        for point in &mut run.series {
            point.histogram.clear();
        }
    }
    // Labels came with version 6: a run stored before has none.
    expected.labels.clear();
    assert_eq!(back, expected);
    assert_eq!(counts(&store), [1, 4, 11, 3, 0]);
}

fn selections_resolve_to_stored_ids_and_name_the_first_missing_one(fx: &Fixture) {
    let mut store = fx.open();
    for _ in 0..5 {
        store.save_run(&failed_record()).unwrap();
    }
    store
        .db
        .execute("DELETE FROM runs WHERE id = 4", &[])
        .unwrap();
    assert_eq!(store.select_runs(&RunSelection::All).unwrap(), [1, 2, 3, 5]);
    let ids =
        |ranges: Vec<std::ops::RangeInclusive<i64>>| store.select_runs(&RunSelection::Ids(ranges));
    assert_eq!(ids(vec![5..=5, 1..=3, 2..=2]).unwrap(), [1, 2, 3, 5]);
    assert!(matches!(
        ids(vec![1..=1, 3..=5]),
        Err(StoreError::NotFound(4))
    ));
    assert!(matches!(
        ids(vec![6..=1_000_000_000]),
        Err(StoreError::NotFound(6))
    ));
    assert!(matches!(ids(vec![0..=1]), Err(StoreError::NotFound(0))));
}

fn tag(key: &str, generation: i64, iteration: u32) -> CellTag {
    CellTag {
        experiment: "sweep".into(),
        generation,
        cell_key: key.into(),
        cell_index: 0,
        iteration,
    }
}

fn experiment_cells_count_only_runs_that_did_not_fail(fx: &Fixture) {
    let mut store = fx.open();
    assert_eq!(store.experiment_generation("sweep").unwrap(), None);
    let mut ok = full_record();
    ok.started_at = "2024-05-01T10:00:00Z".into();
    ok.finished_at = "2024-05-01T10:00:04Z".into();
    let a = store.save_cell_run(&ok, &tag("a", 1, 1)).unwrap();
    store
        .save_cell_run(&failed_record(), &tag("b", 1, 1))
        .unwrap();
    store.save_cell_run(&ok, &tag("a", 2, 1)).unwrap();
    assert_eq!(store.experiment_generation("sweep").unwrap(), Some(2));
    let first = store.finished_cells("sweep", 1).unwrap();
    assert_eq!(
        first,
        vec![FinishedCell {
            cell_key: "a".into(),
            iteration: 1,
            run_id: a
        }]
    );
    assert_eq!(store.finished_cells("other", 1).unwrap(), vec![]);
    let secs = store.cell_seconds("a").unwrap().unwrap();
    assert!((secs - 4.0).abs() < 1e-3, "{secs}");
    assert_eq!(store.cell_seconds("b").unwrap(), None);
}

fn labelled(pairs: &[(&str, &str)]) -> RunRecord {
    let mut r = failed_record();
    r.labels = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    r
}

fn labels_filter_listings_and_change_all_or_nothing(fx: &Fixture) {
    let mut store = fx.open();
    store
        .save_run(&labelled(&[("env", "ci"), ("k", "")]))
        .unwrap(); // 1
    store.save_run(&labelled(&[("env", "laptop")])).unwrap(); // 2
    store.save_run(&labelled(&[])).unwrap(); // 3
    let ids = |labels: &[(&str, Option<&str>)]| -> Vec<i64> {
        let filter = RunFilter {
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
                .collect(),
            ..Default::default()
        };
        listed(&store, filter)
    };
    assert_eq!(ids(&[("env", None)]), [2, 1]);
    assert_eq!(ids(&[("env", Some("ci"))]), [1]);
    assert_eq!(ids(&[("env", Some("CI"))]), Vec::<i64>::new());
    assert_eq!(ids(&[("env", None), ("k", Some(""))]), [1]);
    assert_eq!(ids(&[("k", Some("x"))]), Vec::<i64>::new());
    let all = store.list_runs(&RunFilter::default()).unwrap();
    assert_eq!(all[2].labels, labelled(&[("env", "ci"), ("k", "")]).labels);
    let only = RunFilter {
        ids: Some(vec![3, 1, 99]),
        ..Default::default()
    };
    assert_eq!(listed(&store, only), [3, 1]);
    let none = RunFilter {
        ids: Some(vec![]),
        ..Default::default()
    };
    assert_eq!(listed(&store, none), Vec::<i64>::new());

    let add: Labels = [("env".to_string(), "prod".to_string())].into();
    store.relabel(&[1, 3], &add, &["k".to_string()]).unwrap();
    assert_eq!(store.get_run(1).unwrap().labels, add);
    assert_eq!(store.get_run(3).unwrap().labels, add);
    assert_eq!(
        store.get_run(2).unwrap().labels,
        labelled(&[("env", "laptop")]).labels
    );
    // An unknown id changes nothing, also on the runs named before it.
    let other: Labels = [("x".to_string(), String::new())].into();
    let err = store.relabel(&[2, 42], &other, &[]).unwrap_err();
    assert!(matches!(err, StoreError::NotFound(42)), "{err:?}");
    assert!(!store.get_run(2).unwrap().labels.contains_key("x"));
}

fn delete_removes_every_row_of_the_run_and_nothing_else(fx: &Fixture) {
    let mut store = fx.open();
    let a = store
        .save_cell_run(&full_record(), &tag("a", 1, 1))
        .unwrap();
    let b = store
        .save_cell_run(&full_record(), &tag("a", 1, 2))
        .unwrap();
    let before_b = rows_of(&store, b);
    // Every child table holds rows of the run, or the test proves nothing.
    assert!(before_b.iter().all(|(_, n)| *n > 0), "{before_b:?}");
    assert!(
        before_b.iter().any(|(t, _)| t == "run_labels"),
        "{before_b:?}"
    );

    let err = store.delete_runs(&[a, 77]).unwrap_err();
    assert!(matches!(err, StoreError::NotFound(77)), "{err:?}");
    assert_eq!(
        rows_of(&store, a),
        before_b
            .iter()
            .map(|(t, n)| (t.clone(), *n))
            .collect::<Vec<_>>()
    );

    assert_eq!(store.delete_runs(&[a]).unwrap(), 1);
    assert!(matches!(store.get_run(a), Err(StoreError::NotFound(_))));
    assert!(
        rows_of(&store, a).iter().all(|(_, n)| *n == 0),
        "{:?}",
        rows_of(&store, a)
    );
    assert_eq!(rows_of(&store, b), before_b);
    assert_eq!(store.get_run(b).unwrap(), with_id(full_record(), b));
    assert_eq!(count_rows(&store, "runs"), 1);
    // Ids are never reused.
    assert_eq!(store.save_run(&full_record()).unwrap(), b + 1);
}

fn selections_by_experiment_and_label(fx: &Fixture) {
    let mut store = fx.open();
    store
        .save_cell_run(&labelled(&[]), &tag("a", 1, 1))
        .unwrap(); // 1
    store.save_run(&labelled(&[("env", "ci")])).unwrap(); // 2
    store
        .save_cell_run(&labelled(&[("env", "x")]), &tag("a", 2, 1))
        .unwrap(); // 3
    let sel = |s: RunSelection| store.select_runs(&s).unwrap();
    assert_eq!(sel(RunSelection::Experiment("sweep".into())), [1, 3]);
    assert_eq!(
        sel(RunSelection::Experiment("none".into())),
        Vec::<i64>::new()
    );
    assert_eq!(sel(RunSelection::Label("env".into(), None)), [2, 3]);
    assert_eq!(
        sel(RunSelection::Label("env".into(), Some("ci".into()))),
        [2]
    );
}

fn cell_runs_are_the_iterations_of_the_same_pass_that_did_not_fail(fx: &Fixture) {
    let mut store = fx.open();
    let ok = full_record();
    let one = store.save_cell_run(&ok, &tag("a", 1, 1)).unwrap();
    store
        .save_cell_run(&failed_record(), &tag("a", 1, 2))
        .unwrap();
    let two = store.save_cell_run(&ok, &tag("a", 1, 2)).unwrap();
    store.save_cell_run(&ok, &tag("b", 1, 1)).unwrap();
    store.save_cell_run(&ok, &tag("a", 2, 1)).unwrap();
    let plain = store.save_run(&ok).unwrap();
    let cell = store.cell_runs(two).unwrap().unwrap();
    assert_eq!(
        cell,
        CellRuns {
            experiment: "sweep".into(),
            generation: 1,
            cell_key: "a".into(),
            iteration: 2,
            run_ids: vec![one, two],
        }
    );
    assert_eq!(store.cell_runs(plain).unwrap(), None);
}

fn analytics_record() -> AnalyticsRecord {
    use kvbench_model::analytics::*;
    AnalyticsRecord {
        id: None,
        kind: AnalyticsKind::Pagerank,
        started_at: "2026-11-25T10:00:00Z".into(),
        finished_at: "2026-11-25T10:06:00Z".into(),
        status: RunStatus::Ok,
        failure: None,
        graph: GraphInfo {
            source: "synthetic:google".into(),
            description: "synthetic:google x1 (R-MAT, seed 1)".into(),
            scale: 1.0,
            seed: u64::MAX,
            nodes: 875_713,
            edges: 5_105_039,
            dangling: 120_001,
        },
        settings: AnalyticsSettings {
            implementations: vec!["reference".into(), "redis".into()],
            iterations: Some(10),
            damping: Some(0.85),
            drivers: None,
            count: None,
            setget_s: None,
            spark_master: "local[2]".into(),
            tolerance: Some(1e-6),
        },
        environment: Environment::default(),
        pagerank: vec![PagerankResult {
            implementation: "redis".into(),
            load_s: 1.41,
            map_s: vec![1.1, 1.2 + 1e-15],
            reduce_s: vec![0.7, 0.8],
            iterations_s: 3.8,
            memory_bytes: Some(176_685_056),
            server_cpu_s: Some(3.6),
            client_cpu_s: Some(1.0 / 3.0),
            requests: Some(68_700),
            max_relative_error: 6.0e-12,
            detail: "redis 7.0.15, 6 drivers".into(),
        }],
        lookups: Vec::new(),
    }
}

fn analytics_records_round_trip_exactly_and_are_numbered_apart_from_runs(fx: &Fixture) {
    let mut store = fx.open();
    store.save_run(&full_record()).unwrap();
    let first = store.save_analytics(&analytics_record()).unwrap();
    assert_eq!(first, 1, "analytics ids do not count runs");
    let mut failed = analytics_record();
    failed.status = RunStatus::Failed;
    failed.failure = Some("spark: ranks differ".into());
    let second = store.save_analytics(&failed).unwrap();
    let mut expected = analytics_record();
    expected.id = Some(first);
    assert_eq!(store.get_analytics(first).unwrap(), expected);
    let listed: Vec<Option<i64>> = store
        .list_analytics(None)
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(listed, [Some(second), Some(first)], "newest first");
    assert_eq!(store.list_analytics(Some(1)).unwrap().len(), 1);
    assert_eq!(count_rows(&store, "runs"), 1, "runs untouched");
    let err = store.get_analytics(9).unwrap_err();
    assert_eq!(err.to_string(), "no analytics run with id 9");
}

fn an_analytics_record_that_would_not_read_back_is_not_saved(fx: &Fixture) {
    let mut store = fx.open();
    let mut r = analytics_record();
    r.pagerank[0].map_s[0] = f64::NAN;
    let err = store.save_analytics(&r).unwrap_err();
    assert!(matches!(err, StoreError::NotExact { .. }), "{err:?}");
    assert_eq!(count_rows(&store, "analytics_runs"), 0);
}

fn concurrent_savers_get_distinct_ids_and_whole_runs(fx: &Fixture) {
    drop(fx.open()); // created once, so the savers only save
    const EACH: usize = 6;
    let location = fx.location();
    let savers: Vec<_> = (0..3)
        .map(|n| {
            let location = location.clone();
            std::thread::spawn(move || {
                let mut store = Store::open_location(&location).expect("opens");
                (0..EACH)
                    .map(|i| {
                        let mut r = labelled(&[("saver", &n.to_string())]);
                        r.failure = Some(format!("saver {n} run {i}"));
                        let id = store.save_run(&r).expect("saves");
                        (id, r)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let saved: Vec<(i64, RunRecord)> = savers
        .into_iter()
        .flat_map(|s| s.join().expect("saver thread"))
        .collect();
    let mut ids: Vec<i64> = saved.iter().map(|(id, _)| *id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 3 * EACH, "ids were shared");
    let store = fx.open();
    for (id, r) in saved {
        assert_eq!(store.get_run(id).unwrap(), with_id(r, id));
    }
    assert_eq!(count_rows(&store, "runs"), 3 * EACH as i64);
}

fn concurrent_opens_of_a_fresh_database_migrate_once(fx: &Fixture) {
    let location = fx.location();
    let openers: Vec<_> = (0..4)
        .map(|_| {
            let location = location.clone();
            std::thread::spawn(move || Store::open_location(&location).map(|s| s.db.backend()))
        })
        .collect();
    for o in openers {
        o.join().expect("opener thread").expect("opens");
    }
    let store = fx.open();
    assert_eq!(version(&store.db), SCHEMA_VERSION);
    if fx.backend() == Backend::Postgres {
        assert_eq!(scalar(&store.db, "SELECT count(*) FROM kvbench_meta"), 1);
    }
}

fn a_writer_holding_the_lock_makes_a_save_busy(fx: &Fixture) {
    let holder = fx.open();
    let mut waiter = fx.open();
    waiter.set_busy_timeout(Duration::from_millis(200)).unwrap();
    let lock = holder.db.begin(TxKind::Write).unwrap();
    let started = std::time::Instant::now();
    let err = waiter.save_run(&full_record()).unwrap_err();
    assert!(err.is_busy(), "{err:?}");
    assert!(
        started.elapsed() >= Duration::from_millis(150),
        "did not wait"
    );
    drop(lock);
    waiter.set_busy_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(waiter.save_run(&full_record()).unwrap(), 1);
}

#[test]
fn sqlite_and_postgres_read_back_the_same() {
    let (lite, pg) = (Fixture::sqlite(), Fixture::postgres());
    let (mut a, mut b) = (lite.open(), pg.open());
    let mut records = listing_records();
    records.push(minimal_record());
    records.push(labelled(&[("env", "ci"), ("empty", ""), ("ünï", "cödé")]));
    let mut odd = full_record();
    odd.started_at = "2024-05-01T10:00:00.1234567Z".into();
    odd.config.seed = u64::MAX;
    odd.failure = Some("it's 'quoted' -- and ?1 $1 \\ %".into());
    records.push(odd);
    for r in &records {
        let (x, y) = (a.save_run(r).unwrap(), b.save_run(r).unwrap());
        assert_eq!(x, y);
        assert_eq!(a.get_run(x).unwrap(), b.get_run(y).unwrap());
        assert_eq!(a.get_run(x).unwrap(), with_id(r.clone(), x));
    }
    let cell = tag("k", 1, 1);
    assert_eq!(
        a.save_cell_run(&full_record(), &cell).unwrap(),
        b.save_cell_run(&full_record(), &cell).unwrap()
    );
    let filters = [
        RunFilter::default(),
        RunFilter {
            status: Some("ok".into()),
            limit: Some(3),
            ..Default::default()
        },
        RunFilter {
            labels: vec![("env".into(), None)],
            ids: Some(vec![1, 6, 7, 100]),
            ..Default::default()
        },
    ];
    for f in &filters {
        assert_eq!(a.list_runs(f).unwrap(), b.list_runs(f).unwrap(), "{f:?}");
    }
    for s in [
        RunSelection::All,
        RunSelection::Experiment("sweep".into()),
        RunSelection::Label("env".into(), Some("ci".into())),
        RunSelection::Ids(vec![2..=4]),
    ] {
        assert_eq!(a.select_runs(&s).unwrap(), b.select_runs(&s).unwrap());
    }
    assert_eq!(
        a.finished_cells("sweep", 1).unwrap(),
        b.finished_cells("sweep", 1).unwrap()
    );
    assert_eq!(a.cell_seconds("k").unwrap(), b.cell_seconds("k").unwrap());
    assert_eq!(
        a.save_analytics(&analytics_record()).unwrap(),
        b.save_analytics(&analytics_record()).unwrap()
    );
    assert_eq!(
        a.list_analytics(None).unwrap(),
        b.list_analytics(None).unwrap()
    );
}

#[test]
fn no_error_shows_the_password() {
    const SECRET: &str = "Pa55-w0rd-never-shown";
    let fx = Fixture::postgres();
    let server = match &fx {
        Fixture::Postgres(db) => db.server(),
        Fixture::Sqlite(_) => unreachable!("a PostgreSQL fixture"),
    };
    let Location::Postgres(_) = fx.location() else {
        unreachable!("a PostgreSQL fixture")
    };
    let with_secret = |port: u16, db: &str| {
        Location::parse(&format!(
            "postgres://{}:{SECRET}@127.0.0.1:{port}/{db}?application_name=t&password={SECRET}",
            crate::testing::USER
        ))
        .expect("valid URL")
    };
    let name = fx.location().to_string();
    let name = name
        .rsplit('/')
        .next()
        .expect("a database name")
        .to_string();
    let good = with_secret(server.port(), &name);
    let mut errors: Vec<StoreError> = Vec::new();
    // Unreachable server, missing database.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    errors.push(Store::open_location(&with_secret(closed, &name)).unwrap_err());
    errors.push(Store::open_location(&with_secret(server.port(), "no_such_db")).unwrap_err());
    errors.push(Store::open_read_only_location(&good).unwrap_err()); // not created yet
                                                                     // Errors from an open store (trust authentication ignores the password).
    let mut store = Store::open_location(&good).unwrap();
    assert!(!format!("{store:?}").contains(SECRET));
    assert!(!store.location().to_string().contains(SECRET));
    assert!(!store.path().display().to_string().contains(SECRET));
    let mut bad = full_record();
    bad.run
        .as_mut()
        .unwrap()
        .ops
        .push(op_result(OpKind::Read, 9));
    errors.push(store.save_run(&bad).unwrap_err());
    let mut nan = full_record();
    nan.config.warmup_s = f64::NAN;
    errors.push(store.save_run(&nan).unwrap_err());
    errors.push(store.get_run(7).unwrap_err());
    drop(store);
    set_version(&fx.raw(), SCHEMA_VERSION + 1);
    errors.push(Store::open_location(&good).unwrap_err());
    assert!(
        matches!(errors[0], StoreError::Open { .. }),
        "{:?}",
        errors[0]
    );
    assert!(
        matches!(errors[1], StoreError::Open { .. }),
        "{:?}",
        errors[1]
    );
    for err in &errors {
        let (shown, debug) = (err.to_string(), format!("{err:?}"));
        assert!(
            !shown.contains(SECRET) && !debug.contains(SECRET),
            "{shown}\n{debug}"
        );
    }
    assert!(
        errors[0].to_string().contains(":***@127.0.0.1"),
        "{}",
        errors[0]
    );
    assert!(
        errors[1].to_string().contains("no_such_db"),
        "{}",
        errors[1]
    );
}

#[test]
fn a_store_can_move_to_another_thread() {
    fn send<T: Send>() {}
    fn shared<T: Send + Sync + 'static>() {}
    send::<Store>();
    shared::<Location>();
    // anyhow (the CLI's errors) needs all three.
    shared::<StoreError>();
}
