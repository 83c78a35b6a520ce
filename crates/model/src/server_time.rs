//! Where a request's time goes: the server's own time per command, read
//! from the server's counters at the window's edges, beside the client's
//! latency (taken apart in `kvbench_stats::server_time`). docs/metrics.md,
//! "Latency split", defines each figure.

use crate::OpKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Buckets of a server's per-command histogram: `2^i` µs for `i` in
/// `0..BUCKETS` (Redis's `LATENCY HISTOGRAM` lists powers of two from
/// 1 µs; 2^32 µs is over an hour).
pub const BUCKETS: usize = 33;

/// One command's counters since the server started, as read at one instant.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandCounters {
    /// Calls.
    pub calls: u64,
    /// Microseconds spent executing them.
    pub usec: u64,
    /// Calls that took at most `2^i` µs, for each bucket `i` (cumulative);
    /// empty when the server keeps no histogram.
    pub cumulative: Vec<u64>,
}

impl CommandCounters {
    /// `calls` taking `usec` in all, with this histogram (cumulative counts).
    pub fn new(calls: u64, usec: u64, cumulative: Vec<u64>) -> CommandCounters {
        CommandCounters {
            calls,
            usec,
            cumulative,
        }
    }
}

/// Every command's counters on a deployment at one instant (summed over
/// its data nodes).
pub type CommandTimes = BTreeMap<String, CommandCounters>;

/// Adds `other`'s counters to `into` (a cluster's masters, summed).
pub fn add_command_times(into: &mut CommandTimes, other: &CommandTimes) {
    for (name, c) in other {
        let e = into.entry(name.clone()).or_default();
        e.calls += c.calls;
        e.usec += c.usec;
        if e.cumulative.is_empty() {
            e.cumulative = vec![0; c.cumulative.len()];
        }
        for (a, b) in e.cumulative.iter_mut().zip(&c.cumulative) {
            *a += b;
        }
    }
}

/// The server's time for one command over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandTime {
    /// The command as the server names it (`hgetall`).
    pub name: String,
    /// Calls in the window.
    pub calls: u64,
    /// Mean execution time, µs (exact: total over calls).
    pub mean_us: f64,
    /// Percentiles from the server's histogram, as the upper bound of the
    /// power-of-two bucket they fall in (`None`: no histogram).
    pub p50_us: Option<f64>,
    /// 99th percentile, as a bucket bound.
    pub p99_us: Option<f64>,
    /// 99.9th percentile, as a bucket bound.
    pub p999_us: Option<f64>,
}

/// One operation kind's latency, taken apart (means, µs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySplit {
    /// The operation kind.
    pub op: OpKind,
    /// The commands it sends, whose server time is counted.
    pub commands: Vec<String>,
    /// Its completed requests' mean latency as kvbench timed it (closed
    /// loop: send to reply; open loop: the service time, actual send to reply).
    pub client_mean_us: f64,
    /// The server's mean execution time of those commands.
    pub server_mean_us: f64,
    /// The rest: kvbench, the kernels and the network, both ways, and the
    /// server's reading and writing around the command.
    pub client_network_mean_us: f64,
    /// Open loop: the mean wait for the schedule before the send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_mean_us: Option<f64>,
    /// Server calls of those commands in the window against the requests
    /// kvbench counted (a split is given only from 0.9 to 1.1).
    pub calls_per_request: f64,
}

/// The server's share of the latency over a window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerTime {
    /// How it was read (`LATENCY HISTOGRAM and INFO commandstats`, or
    /// `INFO commandstats` alone: means without percentiles).
    pub method: String,
    /// Each command the server ran in the window.
    pub commands: Vec<CommandTime>,
    /// Each operation kind whose commands no other kind sends.
    pub splits: Vec<LatencySplit>,
    /// The bare loopback round trip measured just before the window, µs:
    /// the floor of the client-and-network share on one machine.
    pub base_rtt_us: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_of_several_nodes_add_up_bucket_by_bucket() {
        let mut sum = CommandTimes::new();
        let a = CommandTimes::from([("get".to_string(), CommandCounters::new(2, 4, vec![1, 2]))]);
        add_command_times(&mut sum, &a);
        add_command_times(&mut sum, &a);
        assert_eq!(sum["get"], CommandCounters::new(4, 8, vec![2, 4]));
    }
}
