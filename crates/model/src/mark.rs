//! What a run's reader must know beyond its numbers, as data: a mark (a
//! reason to doubt the numbers: the run is `invalid`) or a warning (worth
//! knowing; the numbers stand).
//!
//! Each is a [`Finding`], named by its kind and carrying its figures, with
//! the sentence rendered from them when it was recorded. The report, the
//! takeaways and `findmax` decide on [`Finding::kind`], never on the
//! sentence, so rewording a warning cannot change what is flagged (hyperfine
//! keeps its warnings as an enum for the same reason). The sentence is
//! stored beside the figures so that a program reading the JSON gets both.

use crate::fault::InjectedFault;
use serde::{Deserialize, Serialize};
use std::fmt;

/// One mark or warning: what it is, and its sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    #[serde(flatten)]
    finding: Finding,
    text: String,
}

impl Mark {
    /// What it is about, with its figures.
    pub fn finding(&self) -> &Finding {
        &self.finding
    }

    /// Its kind: what the report and `findmax` decide on.
    pub fn kind(&self) -> MarkKind {
        self.finding.kind()
    }

    /// The sentence for people, as rendered when it was recorded.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// A mark or warning recorded before they were typed (a database of
    /// schema 8 or older): its kind from the word before its first colon,
    /// the way the report used to read it, and its sentence unchanged.
    pub fn recorded(text: &str) -> Mark {
        let word = text.split(':').next().unwrap_or("").trim();
        Mark {
            finding: Finding::Recorded {
                was: MarkKind::from_name(word).unwrap_or(MarkKind::Note),
            },
            text: text.to_string(),
        }
    }
}

impl From<Finding> for Mark {
    fn from(finding: Finding) -> Mark {
        let text = finding.to_string();
        Mark { finding, text }
    }
}

impl fmt::Display for Mark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The kinds of [`Finding`], by the names the report shows as flags. Each
/// variant's meaning is its [`Finding`] namesake's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum MarkKind {
    Clock,
    StartSpread,
    IncompleteLoad,
    Empty,
    Errors,
    Unstable,
    Misses,
    Evictions,
    NodeDown,
    Partial,
    Stall,
    NoProbe,
    ClientBound,
    Overloaded,
    Clamped,
    Reconnects,
    ConnectionFailures,
    Fault,
    FailedKeys,
    Cleanup,
    UnionsUnchecked,
    Property,
    /// A sentence recorded before marks were typed whose first word names
    /// no kind.
    Note,
}

impl MarkKind {
    /// Every kind, in declaration order.
    pub const ALL: [MarkKind; 23] = [
        MarkKind::Clock,
        MarkKind::StartSpread,
        MarkKind::IncompleteLoad,
        MarkKind::Empty,
        MarkKind::Errors,
        MarkKind::Unstable,
        MarkKind::Misses,
        MarkKind::Evictions,
        MarkKind::NodeDown,
        MarkKind::Partial,
        MarkKind::Stall,
        MarkKind::NoProbe,
        MarkKind::ClientBound,
        MarkKind::Overloaded,
        MarkKind::Clamped,
        MarkKind::Reconnects,
        MarkKind::ConnectionFailures,
        MarkKind::Fault,
        MarkKind::FailedKeys,
        MarkKind::Cleanup,
        MarkKind::UnionsUnchecked,
        MarkKind::Property,
        MarkKind::Note,
    ];

    /// The kind's name, as stored and shown.
    pub fn name(self) -> &'static str {
        match self {
            MarkKind::Clock => "clock",
            MarkKind::StartSpread => "start-spread",
            MarkKind::IncompleteLoad => "incomplete-load",
            MarkKind::Empty => "empty",
            MarkKind::Errors => "errors",
            MarkKind::Unstable => "unstable",
            MarkKind::Misses => "misses",
            MarkKind::Evictions => "evictions",
            MarkKind::NodeDown => "node-down",
            MarkKind::Partial => "partial",
            MarkKind::Stall => "stall",
            MarkKind::NoProbe => "no-probe",
            MarkKind::ClientBound => "client-bound",
            MarkKind::Overloaded => "overloaded",
            MarkKind::Clamped => "clamped",
            MarkKind::Reconnects => "reconnects",
            MarkKind::ConnectionFailures => "connection-failures",
            MarkKind::Fault => "fault",
            MarkKind::FailedKeys => "failed-keys",
            MarkKind::Cleanup => "cleanup",
            MarkKind::UnionsUnchecked => "unions-unchecked",
            MarkKind::Property => "property",
            MarkKind::Note => "note",
        }
    }

    /// The kind named `name`, if any.
    pub fn from_name(name: &str) -> Option<MarkKind> {
        MarkKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for MarkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the server answered when it refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerSaid {
    /// Its most frequent error reply, as it said it.
    pub reply: String,
    /// How often that reply came in the window (0: only before it).
    pub count: u64,
}

/// What a load left undone; also the failure of a cell whose load fell
/// short, so it renders without its kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadShortfall {
    /// Records inserted.
    pub inserted: u64,
    /// Records planned.
    pub planned: u64,
    /// Inserts that failed.
    pub failed: u64,
    /// What the server answered, if it refused.
    pub server_said: Option<ServerSaid>,
}

impl fmt::Display for LoadShortfall {
    /// `90 of 100 records inserted, 10 inserts failed (the server said ...)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} of {} records inserted", self.inserted, self.planned)?;
        if self.failed > 0 {
            write!(f, ", {} inserts failed", self.failed)?;
        }
        Said(&self.server_said).fmt(f)
    }
}

/// Which per-second figure of the window was unstable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Measure {
    /// Operations per second.
    Throughput,
    /// The median latency of the commonest operation (microseconds).
    MedianLatency,
}

/// How it was unstable (kvbench_stats::Stability), in the measure's unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Instability {
    /// It held a low and a high level, each for some whole seconds.
    TwoLevels {
        /// The low level.
        low: f64,
        /// The high level.
        high: f64,
        /// Seconds at the low level.
        low_seconds: u64,
        /// Seconds at the high level.
        high_seconds: u64,
    },
    /// It moved steadily from one value to another.
    Drifting {
        /// Where it started.
        from: f64,
        /// Where it ended.
        to: f64,
    },
}

/// Why reads found no record, as far as kvbench can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MissCause {
    /// Scans on Redis read YCSB's index of keys, which the load did not write.
    ScanIndex,
    /// The load did not insert every record.
    NotLoaded,
    /// `--no-load` or a reused server: the records were said to be there.
    SaidThere,
    /// Every record was loaded.
    Loaded,
}

/// How an open-loop run fell behind its schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Overload {
    /// Fewer operations completed than were offered.
    Rate {
        /// Completed (and failed) operations per second.
        achieved: f64,
        /// The offered rate (--rate).
        offered: f64,
    },
    /// The lag behind the schedule kept growing.
    Lag {
        /// Mean lag in the window's first tenth (microseconds).
        first_us: f64,
        /// Mean lag in its last tenth (microseconds).
        last_us: f64,
    },
}

/// What kind of workload property a [`Finding::Property`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PropertyIssue {
    /// No YCSB or kvbench component reads it: probably a typo.
    Unknown,
    /// A CoreWorkload setting kvbench does not implement.
    Unsupported,
}

/// What a mark or warning is about, with its figures. Stored tagged by
/// `kind`; the sentence is [`fmt::Display`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Finding {
    /// Scale-out: a worker's clock known to within more than the bound.
    Clock {
        /// Half the worker's best round trip to the driver (ms).
        uncertainty_ms: f64,
        /// The bound (ms).
        bound_ms: f64,
    },
    /// Scale-out: the workers' starts spread beyond the bound.
    StartSpread {
        /// Latest start minus earliest (ms).
        spread_ms: f64,
        /// The bound (ms).
        bound_ms: f64,
        /// The window (ms), when the spread is over 1% of it: then a mark,
        /// else a warning.
        window_ms: Option<f64>,
    },
    /// The load inserted fewer records than planned.
    IncompleteLoad(LoadShortfall),
    /// No operation was answered in the window.
    Empty,
    /// Operations failed.
    Errors {
        /// Failed operations.
        failed: u64,
        /// Failed operations by kind of error.
        by_kind: Vec<(String, u64)>,
        /// Kept valid by --allow-errors (a warning, not a mark).
        allowed: bool,
    },
    /// A per-second figure held two levels or drifted.
    Unstable {
        /// Which figure.
        measure: Measure,
        /// How.
        shape: Instability,
    },
    /// Reads or scans found no record.
    Misses {
        /// Operations that found no record.
        misses: u64,
        /// Why, as far as kvbench can tell.
        cause: MissCause,
    },
    /// The server evicted items.
    Evictions {
        /// Items evicted, the most any probe saw.
        evicted: u64,
    },
    /// Local server nodes exited during the run.
    NodeDown {
        /// Their addresses.
        nodes: Vec<String>,
    },
    /// The window ended early.
    Partial {
        /// The run's failure sentence: what ended it, and when.
        why: String,
        /// Operations completed until then.
        completed: u64,
    },
    /// Connections waited longer than the stall bound for a reply.
    Stall {
        /// How many times.
        stalls: u64,
        /// The bound (--stall, seconds).
        bound_s: f64,
        /// The longest wait (seconds).
        longest_s: f64,
    },
    /// The server could not be probed after the run.
    NoProbe {
        /// Why, in one line.
        error: String,
    },
    /// A kvbench worker thread was busy nearly all the window.
    ClientBound {
        /// The thread's index.
        worker: usize,
        /// Its busy share of the window (0-1).
        busy: f64,
    },
    /// An open-loop run did not keep its schedule.
    Overloaded {
        /// How it fell behind.
        cause: Overload,
        /// Scale-out: the worker whose share of the schedule was not kept.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        worker: Option<u32>,
    },
    /// Latencies above the histograms' range were clamped to it.
    Clamped {
        /// How many.
        latencies: u64,
        /// The range's top (seconds).
        limit_s: f64,
    },
    /// Lost connections were opened again.
    Reconnects {
        /// How many times.
        reconnects: u64,
    },
    /// Connections ended on an error.
    ConnectionFailures {
        /// Connections that failed.
        failed: u64,
        /// Connections in all.
        of: u64,
        /// What the server answered, if it refused.
        server_said: Option<ServerSaid>,
    },
    /// Faults were injected into the window (--inject).
    Fault {
        /// Each fault, as caused.
        faults: Vec<InjectedFault>,
    },
    /// The --failed-keys file could not be written.
    FailedKeys {
        /// The file.
        path: String,
        /// Why.
        error: String,
    },
    /// The keys kvbench wrote on a target could not all be deleted.
    Cleanup {
        /// The target, its password redacted.
        target: String,
        /// Why.
        error: String,
    },
    /// No ZUNIONSTORE destination could be read back to check it.
    UnionsUnchecked,
    /// A workload property kvbench does not use.
    Property {
        /// Where it was set (file and line, or the flag).
        origin: String,
        /// Its name.
        property: String,
        /// Unknown or unsupported.
        issue: PropertyIssue,
        /// What kvbench does about it.
        message: String,
    },
    /// Recorded before marks were typed ([`Mark::recorded`]).
    Recorded {
        /// The kind read from its sentence.
        was: MarkKind,
    },
}

impl Finding {
    /// Its kind.
    pub fn kind(&self) -> MarkKind {
        match self {
            Finding::Clock { .. } => MarkKind::Clock,
            Finding::StartSpread { .. } => MarkKind::StartSpread,
            Finding::IncompleteLoad { .. } => MarkKind::IncompleteLoad,
            Finding::Empty => MarkKind::Empty,
            Finding::Errors { .. } => MarkKind::Errors,
            Finding::Unstable { .. } => MarkKind::Unstable,
            Finding::Misses { .. } => MarkKind::Misses,
            Finding::Evictions { .. } => MarkKind::Evictions,
            Finding::NodeDown { .. } => MarkKind::NodeDown,
            Finding::Partial { .. } => MarkKind::Partial,
            Finding::Stall { .. } => MarkKind::Stall,
            Finding::NoProbe { .. } => MarkKind::NoProbe,
            Finding::ClientBound { .. } => MarkKind::ClientBound,
            Finding::Overloaded { .. } => MarkKind::Overloaded,
            Finding::Clamped { .. } => MarkKind::Clamped,
            Finding::Reconnects { .. } => MarkKind::Reconnects,
            Finding::ConnectionFailures { .. } => MarkKind::ConnectionFailures,
            Finding::Fault { .. } => MarkKind::Fault,
            Finding::FailedKeys { .. } => MarkKind::FailedKeys,
            Finding::Cleanup { .. } => MarkKind::Cleanup,
            Finding::UnionsUnchecked => MarkKind::UnionsUnchecked,
            Finding::Property { .. } => MarkKind::Property,
            Finding::Recorded { was } => *was,
        }
    }
}

/// How many connections failed, of how many: "every connection" only when
/// every one did and there was one.
pub fn connections_failed(failed: u64, of: u64) -> String {
    match (failed, of) {
        (f, all) if f > 0 && f < all => format!("{f} of {all} connections"),
        (_, all) if all > 1 => format!("all {all} connections"),
        _ => "every connection".to_string(),
    }
}

impl fmt::Display for ServerSaid {
    /// ` (the server said "OOM ..." 12 times)`, with its leading space.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.count {
            0 => write!(f, " (the server said \"{}\" before the window)", self.reply),
            n => write!(f, " (the server said \"{}\" {n} times)", self.reply),
        }
    }
}

/// A [`ServerSaid`] that may be absent, rendered as nothing then.
struct Said<'a>(&'a Option<ServerSaid>);

impl fmt::Display for Said<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(s) => s.fmt(f),
            None => Ok(()),
        }
    }
}

/// One injected fault, as the `fault` mark lists it.
fn fault_text(f: &InjectedFault) -> String {
    match (&f.error, f.lasted_s) {
        (Some(e), _) => format!("{} failed: {e}", f.spec),
        (None, Some(l)) => format!(
            "{} hit {} at {:.2} s, over after {:.2} s",
            f.spec, f.target, f.at_s, l
        ),
        (None, None) => format!("{} hit {} at {:.2} s", f.spec, f.target, f.at_s),
    }
}

fn start_spread(
    f: &mut fmt::Formatter<'_>,
    spread_ms: f64,
    bound_ms: f64,
    window_ms: Option<f64>,
) -> fmt::Result {
    write!(
        f,
        "start-spread: the workers started {spread_ms:.1} ms apart (bound {bound_ms} ms)"
    )?;
    match window_ms {
        Some(w) => write!(
            f,
            ", over 1% of the {w:.0} ms window, so their windows cover different stretches of time"
        ),
        None => f.write_str("; a busy client machine wakes them late (docs/scale-out.md)"),
    }
}

fn errors(
    f: &mut fmt::Formatter<'_>,
    failed: u64,
    by_kind: &[(String, u64)],
    allowed: bool,
) -> fmt::Result {
    let kinds: Vec<String> = by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
    write!(
        f,
        "errors: {failed} operations failed ({})",
        kinds.join(", ")
    )?;
    if allowed {
        f.write_str("; kept valid by --allow-errors")?;
    }
    Ok(())
}

fn unstable(f: &mut fmt::Formatter<'_>, measure: Measure, shape: &Instability) -> fmt::Result {
    let (what, unit) = match measure {
        Measure::Throughput => ("throughput", "ops/s"),
        Measure::MedianLatency => ("median latency", "us"),
    };
    match shape {
        Instability::TwoLevels {
            low,
            high,
            low_seconds,
            high_seconds,
        } => write!(
            f,
            "unstable: per-second {what} held two levels, {low:.0} {unit} for {low_seconds} s and {high:.0} {unit} for {high_seconds} s; the totals describe neither (see docs/metrics.md, \"Stability\")"
        ),
        Instability::Drifting { from, to } => write!(
            f,
            "unstable: per-second {what} drifted from {from:.0} to {to:.0} {unit} over the window; the totals describe neither end (see docs/metrics.md, \"Stability\")"
        ),
    }
}

fn missed(f: &mut fmt::Formatter<'_>, misses: u64, cause: MissCause) -> fmt::Result {
    match cause {
        MissCause::ScanIndex => write!(
            f,
            "misses: {misses} scans found no record: on Redis a scan reads YCSB's index of keys, which only a load with kvbench.redis.index=ycsb writes (the default when the loading workload scans)"
        ),
        MissCause::NotLoaded => write!(
            f,
            "misses: {misses} reads found no record of the records the load did not insert"
        ),
        MissCause::SaidThere => write!(
            f,
            "misses: {misses} reads found no record although the records were said to be there"
        ),
        MissCause::Loaded => write!(
            f,
            "misses: {misses} reads found no record although every record was loaded"
        ),
    }
}

fn overloaded(f: &mut fmt::Formatter<'_>, cause: &Overload, worker: Option<u32>) -> fmt::Result {
    f.write_str("overloaded: ")?;
    if let Some(w) = worker {
        write!(f, "worker {w}: ")?;
    }
    match cause {
        Overload::Rate { achieved, offered } => write!(
            f,
            "achieved {achieved:.0} ops/s of the {offered:.0} offered ({:.1}%); latencies include queueing behind the schedule",
            100.0 * achieved / offered
        ),
        Overload::Lag { first_us, last_us } => write!(
            f,
            "schedule lag grew from {first_us:.0} us in the window's first tenth to {last_us:.0} us in its last; the client or server cannot keep this rate"
        ),
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::Clock {
                uncertainty_ms,
                bound_ms,
            } => write!(
                f,
                "clock: a worker's clock is known to within {uncertainty_ms:.1} ms only (half its best round trip to the driver), above the {bound_ms} ms bound; its start and seconds may be misaligned"
            ),
            Finding::StartSpread {
                spread_ms,
                bound_ms,
                window_ms,
            } => start_spread(f, *spread_ms, *bound_ms, *window_ms),
            Finding::IncompleteLoad(shortfall) => write!(f, "incomplete-load: {shortfall}"),
            Finding::Empty => f.write_str(
                "empty: no operation was answered in the measured window, so it measured nothing \
                 (each took longer than the window, or the window was too short for any); give a \
                 longer --duration",
            ),
            Finding::Errors {
                failed,
                by_kind,
                allowed,
            } => errors(f, *failed, by_kind, *allowed),
            Finding::Unstable { measure, shape } => unstable(f, *measure, shape),
            Finding::Misses { misses, cause } => missed(f, *misses, *cause),
            Finding::Evictions { evicted } => write!(
                f,
                "evictions: the server evicted {evicted} items, so some reads could not hit"
            ),
            Finding::NodeDown { nodes } => write!(
                f,
                "node-down: {} exited during the run; its requests failed from then on",
                nodes.join(", ")
            ),
            Finding::Partial { why, completed } => write!(
                f,
                "partial: {why}; the {completed} operations measured until then are kept, not a result"
            ),
            Finding::Stall {
                stalls,
                bound_s,
                longest_s,
            } => write!(
                f,
                "stall: {stalls} times a connection with requests outstanding went more than {bound_s} s without a reply (longest {longest_s:.2} s), so the window does not describe a steady state"
            ),
            Finding::NoProbe { error } => write!(f, "no probe after the run: {error}"),
            Finding::ClientBound { worker, busy } => write!(
                f,
                "client-bound: kvbench worker thread {worker} was {:.0}% busy in the window, so throughput may be limited by the client, not the server; use fewer clients per thread, more --threads on a bigger machine, or run kvbench on another host",
                busy * 100.0
            ),
            Finding::Overloaded { cause, worker } => overloaded(f, cause, *worker),
            Finding::Clamped { latencies, limit_s } => write!(
                f,
                "{latencies} latencies were above {limit_s} s and were clamped to {limit_s} s in the histograms"
            ),
            Finding::Reconnects { reconnects } => write!(
                f,
                "reconnects: {reconnects} lost connections were opened again; while they were down the load was lighter than asked (see the outage)"
            ),
            Finding::ConnectionFailures {
                failed,
                of,
                server_said,
            } => write!(
                f,
                "connection-failures: {} ended on an error{}",
                connections_failed(*failed, *of),
                Said(server_said)
            ),
            Finding::Fault { faults } => {
                let each: Vec<String> = faults.iter().map(fault_text).collect();
                write!(
                    f,
                    "fault: {} (the window includes it: not a steady state)",
                    each.join("; ")
                )
            }
            Finding::FailedKeys { path, error } => {
                write!(f, "--failed-keys {path}: not written: {error}")
            }
            Finding::Cleanup { target, error } => write!(
                f,
                "cleanup failed: {error}; some keys kvbench wrote may remain on {target}"
            ),
            Finding::UnionsUnchecked => {
                f.write_str("no ZUNIONSTORE destination could be read back to check its scores")
            }
            Finding::Property {
                origin,
                property,
                message,
                ..
            } => write!(f, "{origin}: {property}: {message}"),
            Finding::Recorded { was } => write!(f, "{was}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_round_trips_through_json_with_its_kind_figures_and_sentence() {
        let m: Mark = Finding::Evictions { evicted: 1200 }.into();
        let json = serde_json::to_value(&m).expect("serializes");
        assert_eq!(
            json,
            serde_json::json!({
                "kind": "evictions",
                "evicted": 1200,
                "text": "evictions: the server evicted 1200 items, so some reads could not hit"
            })
        );
        let back: Mark = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, m);
        assert_eq!(back.kind(), MarkKind::Evictions);
    }

    #[test]
    fn the_kind_is_read_from_the_data_not_the_sentence() {
        // A sentence that begins like another kind does not change the kind.
        let m: Mark = Finding::NoProbe {
            error: "errors: connection refused".into(),
        }
        .into();
        assert_eq!(m.kind(), MarkKind::NoProbe);
        let stored = serde_json::to_string(&m).expect("serializes");
        let back: Mark = serde_json::from_str(&stored).expect("reads back");
        assert_eq!(back.kind(), MarkKind::NoProbe);
    }

    #[test]
    fn a_sentence_from_an_old_database_keeps_its_words_and_gets_its_first_words_kind() {
        let old = Mark::recorded("client-bound: kvbench worker thread 0 was 99% busy");
        assert_eq!(old.kind(), MarkKind::ClientBound);
        assert_eq!(
            old.text(),
            "client-bound: kvbench worker thread 0 was 99% busy"
        );
        let json = serde_json::to_value(&old).expect("serializes");
        assert_eq!(json["kind"], "recorded");
        assert_eq!(json["was"], "client-bound");
        let back: Mark = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, old);
        assert_eq!(
            Mark::recorded("42 latencies were above 60 s").kind(),
            MarkKind::Note
        );
    }

    #[test]
    fn every_kind_has_a_distinct_name_that_reads_back() {
        for k in MarkKind::ALL {
            assert_eq!(MarkKind::from_name(k.name()), Some(k));
            assert_eq!(
                serde_json::to_value(k).expect("serializes"),
                serde_json::json!(k.name())
            );
        }
    }

    #[test]
    fn each_sentence_begins_with_its_kind_where_it_always_did() {
        let said = Some(ServerSaid {
            reply: "OOM command not allowed".into(),
            count: 3,
        });
        let cases: Vec<(Finding, &str)> = vec![
            (
                Finding::IncompleteLoad(LoadShortfall {
                    inserted: 90,
                    planned: 100,
                    failed: 10,
                    server_said: said.clone(),
                }),
                "incomplete-load: 90 of 100 records inserted, 10 inserts failed (the server said \"OOM command not allowed\" 3 times)",
            ),
            (
                Finding::ConnectionFailures {
                    failed: 15,
                    of: 20,
                    server_said: None,
                },
                "connection-failures: 15 of 20 connections ended on an error",
            ),
            (
                Finding::Errors {
                    failed: 4,
                    by_kind: vec![("timeout".into(), 4)],
                    allowed: true,
                },
                "errors: 4 operations failed (4 timeout); kept valid by --allow-errors",
            ),
            (
                Finding::Overloaded {
                    cause: Overload::Rate {
                        achieved: 900.0,
                        offered: 1000.0,
                    },
                    worker: None,
                },
                "overloaded: achieved 900 ops/s of the 1000 offered (90.0%); latencies include queueing behind the schedule",
            ),
        ];
        for (finding, text) in cases {
            let m: Mark = finding.into();
            assert_eq!(m.text(), text);
            assert!(text.starts_with(m.kind().name()), "{text}");
        }
    }

    /// One of each finding, with figures that are not round numbers.
    fn one_of_each() -> Vec<Finding> {
        let said = Some(ServerSaid {
            reply: "ERR max clients".into(),
            count: 0,
        });
        vec![
            Finding::Clock {
                uncertainty_ms: 7.25,
                bound_ms: 5.0,
            },
            Finding::StartSpread {
                spread_ms: 12.5,
                bound_ms: 5.0,
                window_ms: Some(1000.0),
            },
            Finding::IncompleteLoad(LoadShortfall {
                inserted: 9,
                planned: 10,
                failed: 0,
                server_said: None,
            }),
            Finding::Empty,
            Finding::Errors {
                failed: 3,
                by_kind: vec![("timeout".into(), 2), ("server".into(), 1)],
                allowed: false,
            },
            Finding::Unstable {
                measure: Measure::MedianLatency,
                shape: Instability::Drifting {
                    from: 51.5,
                    to: 80.125,
                },
            },
            Finding::Misses {
                misses: 4,
                cause: MissCause::SaidThere,
            },
            Finding::Evictions { evicted: 5 },
            Finding::NodeDown {
                nodes: vec!["127.0.0.1:7001".into()],
            },
            Finding::Partial {
                why: "interrupted by the user 1.20 s into the 10 s window".into(),
                completed: 77,
            },
            Finding::Stall {
                stalls: 2,
                bound_s: 0.5,
                longest_s: 2.0625,
            },
            Finding::NoProbe {
                error: "connection refused".into(),
            },
            Finding::ClientBound {
                worker: 1,
                busy: 0.975,
            },
            Finding::Overloaded {
                cause: Overload::Lag {
                    first_us: 12.0,
                    last_us: 4500.5,
                },
                worker: Some(2),
            },
            Finding::Clamped {
                latencies: 6,
                limit_s: 60.0,
            },
            Finding::Reconnects { reconnects: 8 },
            Finding::ConnectionFailures {
                failed: 1,
                of: 1,
                server_said: said,
            },
            Finding::Fault {
                faults: vec![InjectedFault {
                    spec: "kill:0@2s".into(),
                    target: "127.0.0.1:7000".into(),
                    at_s: 2.001,
                    lasted_s: None,
                    error: None,
                }],
            },
            Finding::FailedKeys {
                path: "/tmp/keys".into(),
                error: "permission denied".into(),
            },
            Finding::Cleanup {
                target: "redis://127.0.0.1:6379".into(),
                error: "timed out".into(),
            },
            Finding::UnionsUnchecked,
            Finding::Property {
                origin: "w.properties:3".into(),
                property: "readproprtion".into(),
                issue: PropertyIssue::Unknown,
                message: "no YCSB or kvbench component reads it".into(),
            },
            Finding::Recorded {
                was: MarkKind::Stall,
            },
        ]
    }

    #[test]
    fn every_finding_reads_back_as_it_was_stored_and_has_its_own_kind() {
        let all = one_of_each();
        let mut kinds: Vec<MarkKind> = all.iter().map(Finding::kind).collect();
        kinds.sort();
        kinds.dedup();
        // Every kind but `note` (only an old sentence's) is made by one
        // finding; `recorded` takes the kind it was read as.
        assert_eq!(kinds.len(), MarkKind::ALL.len() - 1);
        for f in all {
            let m = Mark::from(f);
            let json = serde_json::to_string(&m).expect("serializes");
            let back: Mark = serde_json::from_str(&json).expect("reads back");
            assert_eq!(back, m, "{json}");
            assert_eq!(back.text(), m.finding().to_string());
        }
    }

    #[test]
    fn failed_connections_are_counted_in_words() {
        assert_eq!(connections_failed(15, 20), "15 of 20 connections");
        assert_eq!(connections_failed(20, 20), "all 20 connections");
        assert_eq!(connections_failed(1, 0), "every connection");
    }
}
