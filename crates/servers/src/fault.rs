//! Faults caused on purpose during a window (`--fault`): a node killed,
//! restarted or paused, a failover. Real deployments meet these, and what a
//! store's restart or failover costs its clients is measured by causing one
//! under load, at a known instant, on servers kvbench started (never on a
//! `--target`: kvbench does not disturb a server it does not own).
//!
//! Written `KIND[:NODE][:SPAN]@AT`, `AT` counted from the window's start:
//! `kill:0@2s`, `restart:1@2s` (or `restart:1:500ms@2s`, down half a
//! second), `pause:0:300ms@1s`, `failover@2s` (a Sentinel group's, or
//! `failover:1@2s`: the replica of cluster master 1 takes over),
//! `drop:0:1s@2s` (with `--netns`: node 0 cut off the network for 1 s,
//! every packet dropped, connections left to stall). `NODE`
//! counts the data nodes as the probes list them: a cluster's masters,
//! then its replicas; a Sentinel group's first master, then its replicas.

use crate::deployment::Deployment;
use crate::Network;
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

/// What a fault does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// SIGKILL: a crash; the node stays down.
    Kill,
    /// Stopped as an operator would (Redis saves first), down for the
    /// span (0 by default), started again on its port with its data.
    Restart,
    /// SIGSTOP for the span, then SIGCONT: a stalled host.
    Pause,
    /// A Sentinel group's `SENTINEL FAILOVER`, or a cluster replica's
    /// `CLUSTER FAILOVER`.
    Failover,
    /// With `--netns`: the node's link down for the span, every packet to
    /// or from it dropped (a partition).
    Drop,
}

impl FaultKind {
    fn as_str(self) -> &'static str {
        match self {
            FaultKind::Kill => "kill",
            FaultKind::Restart => "restart",
            FaultKind::Pause => "pause",
            FaultKind::Failover => "failover",
            FaultKind::Drop => "drop",
        }
    }
}

/// One fault and when to cause it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// What it does.
    pub kind: FaultKind,
    /// Which data node (a failover: which master's replica; 0 when absent).
    pub node: usize,
    /// A pause's length, a restart's downtime.
    pub span: Duration,
    /// When, from the window's start.
    pub at: Duration,
}

impl FromStr for Fault {
    type Err = String;

    /// # Errors
    /// One line naming what is wrong.
    fn from_str(text: &str) -> Result<Fault, String> {
        let shape = "KIND[:NODE][:SPAN]@AT, e.g. restart:0@2s, pause:0:300ms@1s, failover@2s";
        let (what, at) = text
            .split_once('@')
            .ok_or_else(|| format!("\"{text}\" has no @AT (write {shape})"))?;
        let duration = |s: &str, of: &str| {
            humantime::parse_duration(s).map_err(|e| format!("\"{text}\": {of} \"{s}\": {e}"))
        };
        let at = duration(at, "AT")?;
        let mut parts = what.split(':');
        let kind = match parts.next().unwrap_or_default() {
            "kill" => FaultKind::Kill,
            "restart" => FaultKind::Restart,
            "pause" => FaultKind::Pause,
            "failover" => FaultKind::Failover,
            "drop" => FaultKind::Drop,
            other => {
                return Err(format!(
                    "\"{text}\": unknown fault \"{other}\" (kill, restart, pause, failover or drop)"
                ))
            }
        };
        let node = match parts.next() {
            None => 0,
            Some(n) => n
                .parse()
                .map_err(|_| format!("\"{text}\": NODE \"{n}\" is not a node number"))?,
        };
        let span = parts.next().map(|s| duration(s, "SPAN")).transpose()?;
        if parts.next().is_some() {
            return Err(format!("\"{text}\" has too many parts (write {shape})"));
        }
        let span = match (kind, span) {
            (FaultKind::Pause | FaultKind::Drop, None) => {
                let k = kind.as_str();
                return Err(format!(
                    "\"{text}\": a {k} needs its length ({k}:NODE:SPAN@AT)"
                ));
            }
            (FaultKind::Pause | FaultKind::Drop | FaultKind::Restart, Some(s)) => s,
            (FaultKind::Kill | FaultKind::Failover, Some(_)) => {
                return Err(format!("\"{text}\": a {} has no SPAN", kind.as_str()))
            }
            (_, None) => Duration::ZERO,
        };
        Ok(Fault {
            kind,
            node,
            span,
            at,
        })
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind.as_str(), self.node)?;
        if matches!(self.kind, FaultKind::Pause | FaultKind::Drop)
            || (self.kind == FaultKind::Restart && !self.span.is_zero())
        {
            write!(f, ":{}", humantime::format_duration(self.span))?;
        }
        write!(f, "@{}", humantime::format_duration(self.at))
    }
}

/// What came of one fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caused {
    /// What it hit (an address, or the group).
    pub target: String,
    /// Until it was over (`None`: a kill, or it failed).
    pub lasted: Option<Duration>,
    /// Why it could not be caused or did not finish.
    pub error: Option<String>,
}

/// Causes `fault` on `deployment` (in `network`, with `--netns`) now,
/// blocking until it is over (a pause's or a cut's end, a restarted node
/// answering, a failover's new master).
pub fn cause(deployment: &dyn Deployment, network: Option<&Network>, fault: &Fault) -> Caused {
    let started = Instant::now();
    let failed = |target: String, e: String| Caused {
        target,
        lasted: None,
        error: Some(e),
    };
    if fault.kind == FaultKind::Failover {
        return match deployment.failover(fault.node) {
            Ok(target) => Caused {
                target,
                lasted: Some(started.elapsed()),
                error: None,
            },
            Err(e) => failed(format!("node {}", fault.node), e),
        };
    }
    let nodes = deployment.fault_nodes();
    let Some(server) = nodes.get(fault.node) else {
        return failed(
            format!("node {}", fault.node),
            format!("there are {} data nodes", nodes.len()),
        );
    };
    let target = server.addr().to_string();
    let done = match fault.kind {
        FaultKind::Kill => server.kill().map(|()| None),
        FaultKind::Restart => server.restart(fault.span).map(|()| Some(started.elapsed())),
        FaultKind::Pause => server.pause(fault.span).map(|()| Some(started.elapsed())),
        FaultKind::Drop => match network {
            Some(n) => n
                .cut_off(server.addr().ip(), fault.span)
                .map(|()| Some(started.elapsed()))
                .map_err(|e| crate::ServerError::Io {
                    what: format!("cut {target} off"),
                    source: std::io::Error::other(e.to_string()),
                }),
            None => return failed(target, "a drop needs --netns".into()),
        },
        FaultKind::Failover => unreachable!("handled above"),
    };
    match done {
        Ok(lasted) => Caused {
            target,
            lasted,
            error: None,
        },
        Err(e) => failed(target, e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_parse_and_print_back() {
        for (text, shown) in [
            ("kill:0@2s", "kill:0@2s"),
            ("restart:1@2s", "restart:1@2s"),
            ("restart:1:500ms@2s", "restart:1:500ms@2s"),
            ("pause:0:300ms@1s", "pause:0:300ms@1s"),
            ("drop:2:1s@3s", "drop:2:1s@3s"),
            ("failover@2s", "failover:0@2s"),
            ("failover:2@1500ms", "failover:2@1s 500ms"),
        ] {
            let f: Fault = text.parse().expect(text);
            assert_eq!(f.to_string(), shown, "{text}");
            assert_eq!(shown.parse::<Fault>().expect(shown), f);
        }
        let f: Fault = "pause:3:2s@4s".parse().expect("parses");
        assert_eq!(
            (f.kind, f.node, f.span, f.at),
            (
                FaultKind::Pause,
                3,
                Duration::from_secs(2),
                Duration::from_secs(4)
            )
        );
    }

    #[test]
    fn bad_faults_are_named_in_one_line() {
        for (bad, says) in [
            ("kill:0", "no @AT"),
            ("explode:0@1s", "unknown fault"),
            ("pause:0@1s", "needs its length"),
            ("drop:0@1s", "a drop needs its length"),
            ("kill:0:1s@1s", "has no SPAN"),
            ("kill:x@1s", "not a node number"),
            ("kill:0@soon", "AT"),
            ("pause:0:1s:2s@1s", "too many parts"),
        ] {
            let e = bad.parse::<Fault>().expect_err(bad);
            assert!(e.contains(says) && !e.contains('\n'), "{bad}: {e}");
        }
    }
}
