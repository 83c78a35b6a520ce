//! After a `ZUNIONSTORE` run: reads back a sample of the destination keys
//! and checks each against the union the workload defines (its cardinality
//! and the sum of its scores, `kvbench_workload::zsets`). Every union's
//! reply was already checked for its cardinality as it arrived; this checks
//! what the server stored, which the reply does not show.
//!
//! One blocking connection per node, one `ZRANGE ... WITHSCORES` at a time:
//! a cold path after the measured window, never inside it.

use crate::driver::Driver;
use crate::route::{connect_plan, Topology};
use kvbench_connect::Access;
use kvbench_model::{OpKind, SystemKind};
use kvbench_proto::resp::{self, Value};
use kvbench_workload::{Op, WorkloadSpec};
use std::time::Duration;

/// Clients whose destinations are read back (spread over all clients).
const SAMPLE_CLIENTS: u32 = 8;
/// Groups read back per sampled client (spread over all groups).
const SAMPLE_GROUPS: u64 = 4;

/// What to check, and where.
pub struct UnionCheck<'a> {
    /// The target the run wrote to.
    pub topology: &'a Topology,
    /// Its kind (the Redis family).
    pub system: SystemKind,
    /// The workload (its data model has the sets' shape).
    pub spec: &'a WorkloadSpec,
    /// How to connect.
    pub access: &'a Access,
    /// For connecting and for each reply.
    pub timeout: Duration,
    /// The run's clients (each has its own destinations).
    pub clients: u32,
}

/// What the check found: how many destinations it read and found right
/// (destinations a client never wrote are skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnionsChecked {
    /// Destinations read back and matching the expected union.
    pub checked: u32,
}

/// Reads back the sampled destinations.
///
/// # Errors
/// The first destination that differs from its expected union (naming the
/// key, what it holds and what it should), or a connection failure.
pub fn check_unions(c: &UnionCheck<'_>) -> Result<UnionsChecked, String> {
    let driver = Driver::new(c.system, c.spec, c.spec.key_namer());
    let shape = c.spec.data_model.zsets;
    let groups = (c.spec.record_count / u64::from(shape.sets.max(1))).max(1);
    let (addrs, router) =
        connect_plan(c.topology, &driver, c.access, c.timeout).map_err(|e| e.to_string())?;
    let mut streams = Vec::with_capacity(addrs.len());
    for addr in &addrs {
        streams.push(
            kvbench_connect::open(*addr, c.access, c.timeout)
                .map_err(|e| format!("{addr}: {e}"))?,
        );
    }
    let expected_len = shape.union_cardinality();
    // Far above what a right union's reply takes (a member and its score
    // are well under 64 bytes on the wire): a wrong, larger one still fails.
    let max_reply = usize::try_from(expected_len)
        .unwrap_or(usize::MAX)
        .saturating_mul(64)
        .saturating_add(1 << 20);
    let mut checked = 0;
    let mut key = Vec::new();
    for client in spread(u64::from(c.clients), u64::from(SAMPLE_CLIENTS)) {
        for group in spread(groups, SAMPLE_GROUPS) {
            let op = Op {
                kind: OpKind::Union,
                keynum: group * u64::from(shape.sets),
                field: None,
                read_field: None,
                scan_length: 0,
                client: client as u32,
            };
            driver.write_key(&op, &mut key);
            let node = router.node_of(&key);
            let mut request = Vec::new();
            resp::encode_command(&mut request, &[b"ZRANGE", &key, b"0", b"-1", b"WITHSCORES"]);
            let reply =
                kvbench_connect::exchange_on(&mut streams[node], &request, max_reply, |b| {
                    resp::parse_value(b)
                })
                .map_err(|e| format!("{}: {e}", addrs[node]))?;
            let name = String::from_utf8_lossy(&key);
            let (len, sum) = union_of(&reply).map_err(|e| format!("{name}: {e}"))?;
            if len == 0 {
                continue;
            }
            let expected_sum = shape.union_score_sum(group);
            if len != expected_len || sum != expected_sum as f64 {
                return Err(format!(
                    "{name} holds {len} members with scores summing to {sum}, expected \
                     {expected_len} summing to {expected_sum}"
                ));
            }
            checked += 1;
        }
    }
    Ok(UnionsChecked { checked })
}

/// Up to `n` values spread evenly over `0..total`, the first and last
/// included.
fn spread(total: u64, n: u64) -> Vec<u64> {
    if total <= n {
        return (0..total).collect();
    }
    let mut v: Vec<u64> = (0..n).map(|i| i * (total - 1) / (n - 1)).collect();
    v.dedup();
    v
}

/// The member count and score sum of a `ZRANGE ... WITHSCORES` reply
/// (RESP2's flat member/score array, or RESP3's pairs).
fn union_of(reply: &Value) -> Result<(u64, f64), String> {
    let score = |v: &Value| -> Result<f64, String> {
        match v {
            Value::Double(d) => Ok(*d),
            other => other
                .as_bytes()
                .and_then(|b| std::str::from_utf8(b).ok())
                .and_then(|s| s.parse::<f64>().ok())
                .ok_or_else(|| format!("a score that is not a number: {other:?}")),
        }
    };
    match reply {
        Value::Array(items) if items.iter().all(|i| matches!(i, Value::Array(_))) => {
            let mut sum = 0.0;
            for pair in items {
                if let Value::Array(p) = pair {
                    sum += score(p.get(1).ok_or("a member without a score")?)?;
                }
            }
            Ok((items.len() as u64, sum))
        }
        Value::Array(items) => {
            let mut sum = 0.0;
            for s in items.iter().skip(1).step_by(2) {
                sum += score(s)?;
            }
            Ok((items.len() as u64 / 2, sum))
        }
        Value::Error(e) => Err(e.clone()),
        other => Err(format!("unexpected reply {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_spread_over_the_range() {
        assert_eq!(spread(3, 8), [0, 1, 2]);
        assert_eq!(spread(100, 4), [0, 33, 66, 99]);
        assert!(spread(0, 4).is_empty());
    }

    #[test]
    fn both_reply_shapes_give_count_and_sum() {
        let b = |s: &str| Value::Bulk(s.as_bytes().to_vec());
        let resp2 = Value::Array(vec![b("m1"), b("3"), b("m2"), b("4.5")]);
        assert_eq!(union_of(&resp2), Ok((2, 7.5)));
        let resp3 = Value::Array(vec![
            Value::Array(vec![b("m1"), Value::Double(3.0)]),
            Value::Array(vec![b("m2"), Value::Double(4.5)]),
        ]);
        assert_eq!(union_of(&resp3), Ok((2, 7.5)));
        assert!(union_of(&Value::Array(vec![b("m1"), b("x")])).is_err());
    }
}
