//! `--cleanup`: deleting exactly the records a run wrote, on a server
//! kvbench did not start, and nothing else.
//!
//! The keys are named from their record numbers (the load's range and the
//! run's insert range), routed to their node exactly as the run routed
//! them, and deleted in pipelined batches over one connection per node. A
//! key that was never written (an insert number handed out but not sent)
//! is deleted too: it has kvbench's own naming, and nothing of anyone
//! else's can be deleted unless `--allow-existing` let kvbench write over
//! such a key in the first place. The sorted-set workload's `ZUNIONSTORE`
//! destinations (one per client and group) are deleted with their sets.

use crate::driver::Driver;
use crate::route::{connect_plan, Topology};
use kvbench_connect::{Access, Stream};
use kvbench_model::SystemKind;
use kvbench_workload::keys::KeyNamer;
use kvbench_workload::{Op, WorkloadSpec};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::ops::Range;
use std::time::Duration;

/// Deletions sent on a node before their replies are read.
const BATCH: usize = 1000;

/// What to delete, and where.
pub struct Cleanup<'a> {
    /// The target.
    pub topology: &'a Topology,
    /// Its kind (selects the protocol).
    pub system: SystemKind,
    /// The workload that wrote (its data model decides the index).
    pub spec: &'a WorkloadSpec,
    /// How record numbers became keys.
    pub keys: KeyNamer,
    /// How to connect.
    pub access: &'a Access,
    /// For connecting and for each batch's replies.
    pub timeout: Duration,
    /// The record numbers written.
    pub ranges: Vec<Range<u64>>,
    /// The run's clients: with `sortedsets`, each wrote its own
    /// `ZUNIONSTORE` destination per group, deleted too.
    pub clients: u32,
}

/// What a cleanup did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cleaned {
    /// Deletions sent (one per record key, and one per index entry).
    pub requests: u64,
    /// Of those, how many removed something.
    pub deleted: u64,
}

/// One node's connection and what is pending on it.
struct Node {
    addr: SocketAddr,
    stream: Stream,
    buf: Vec<u8>,
    pending: usize,
}

/// Deletes every key of `c.ranges`.
///
/// # Errors
/// A message naming the node and why, at the first failure (keys deleted
/// before it stay deleted).
pub fn cleanup(c: &Cleanup<'_>) -> Result<Cleaned, String> {
    let driver = Driver::new(c.system, c.spec, c.keys.clone());
    let (addrs, router) =
        connect_plan(c.topology, &driver, c.access, c.timeout).map_err(|e| e.to_string())?;
    let mut nodes = Vec::with_capacity(addrs.len());
    for addr in addrs {
        let stream =
            kvbench_connect::open(addr, c.access, c.timeout).map_err(|e| format!("{addr}: {e}"))?;
        nodes.push(Node {
            addr,
            stream,
            buf: Vec::new(),
            pending: 0,
        });
    }
    let index_node = router.node_of(driver.index_key());
    let mut done = Cleaned {
        requests: 0,
        deleted: 0,
    };
    let mut key = Vec::new();
    for range in &c.ranges {
        for keynum in range.clone() {
            driver.write_key(&Op::insert(keynum), &mut key);
            let n = router.node_of(&key);
            driver.encode_delete(&key, &mut nodes[n].buf);
            nodes[n].pending += 1;
            if driver.encode_unindex(&key, &mut nodes[index_node].buf) {
                nodes[index_node].pending += 1;
            }
            for node in nodes.iter_mut().filter(|n| n.pending >= BATCH) {
                settle(node, &driver, &mut done)?;
            }
        }
    }
    if c.spec.data_model.layout == kvbench_workload::Layout::SortedSets {
        let sets = u64::from(c.spec.data_model.zsets.sets.max(1));
        let mut groups: Vec<u64> = c
            .ranges
            .iter()
            .flat_map(|r| r.start / sets..r.end.div_ceil(sets))
            .collect();
        groups.sort_unstable();
        groups.dedup();
        for group in groups {
            for client in 0..c.clients {
                let op = Op {
                    kind: kvbench_model::OpKind::Union,
                    client,
                    ..Op::insert(group * sets)
                };
                driver.write_key(&op, &mut key);
                let n = router.node_of(&key);
                driver.encode_delete(&key, &mut nodes[n].buf);
                nodes[n].pending += 1;
                if nodes[n].pending >= BATCH {
                    settle(&mut nodes[n], &driver, &mut done)?;
                }
            }
        }
    }
    for node in &mut nodes {
        settle(node, &driver, &mut done)?;
    }
    Ok(done)
}

/// Sends a node's pending deletions and reads their replies.
fn settle(node: &mut Node, driver: &Driver, done: &mut Cleaned) -> Result<(), String> {
    if node.pending == 0 {
        return Ok(());
    }
    let addr = node.addr;
    node.stream
        .write_all(&node.buf)
        .and_then(|()| node.stream.flush())
        .map_err(|e| format!("{addr}: send: {e}"))?;
    node.buf.clear();
    let mut input = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let mut at = 0;
    while node.pending > 0 {
        match driver.parse_delete_reply(&input[at..]) {
            Ok(Some((deleted, used))) => {
                at += used;
                node.pending -= 1;
                done.requests += 1;
                done.deleted += u64::from(deleted);
                continue;
            }
            Ok(None) => {}
            Err(e) => return Err(format!("{addr}: {e}")),
        }
        let n = node
            .stream
            .read(&mut chunk)
            .map_err(|e| format!("{addr}: receive: {e}"))?;
        if n == 0 {
            return Err(format!("{addr}: connection closed during cleanup"));
        }
        input.extend_from_slice(&chunk[..n]);
    }
    Ok(())
}
