//! PageRank inside Redis (paper D's "Redis server-side"): each step is
//! computed by Lua scripts in the server, over the same data model as the
//! client-side drivers; kvbench only loads the graph and sequences the
//! scripts. A script call covers a range of nodes sized so that it keeps
//! the server busy about [`TARGET`]: the server is never blocked by one
//! call much longer than that (the longest call is measured and reported),
//! so a benchmark beside it would still be served.
//!
//! Map: for each node of the range, its share of rank goes to its targets'
//! accumulators (`pr:a:V`, little-endian f64, read-modify-written once per
//! target per call) and a dangling node's rank to `pr:ad`. Reduce: each
//! node's new rank from its accumulator and `pr:ad`, the accumulator
//! deleted. Redis's Lua has `struct` to read and write the binary values.

use crate::kv::{Kv, Wire};
use crate::mapreduce::{self, Outcome};
use crate::Graph;
use anyhow::{bail, Context, Result};
use kvbench_proto::resp::Value;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// What one script call aims to take.
pub const TARGET: Duration = Duration::from_millis(5);

const MAP: &str = r#"
local first, last = tonumber(ARGV[1]), tonumber(ARGV[2])
local acc, dangling = {}, 0
for v = first, last - 1 do
  local list = redis.call('GET', 'pr:n:' .. v)
  local r = struct.unpack('<d', redis.call('GET', 'pr:r:' .. v))
  local deg = #list / 4
  if deg == 0 then
    dangling = dangling + r
  else
    local share = r / deg
    for i = 1, #list, 4 do
      local t = struct.unpack('<I4', list, i)
      acc[t] = (acc[t] or 0) + share
    end
  end
end
for t, s in pairs(acc) do
  local k = 'pr:a:' .. t
  local old = redis.call('GET', k)
  if old then s = s + struct.unpack('<d', old) end
  redis.call('SET', k, struct.pack('<d', s))
end
if dangling > 0 then
  local old = redis.call('GET', 'pr:ad')
  if old then dangling = dangling + struct.unpack('<d', old) end
  redis.call('SET', 'pr:ad', struct.pack('<d', dangling))
end
return last - first
"#;

const REDUCE: &str = r#"
local first, last = tonumber(ARGV[1]), tonumber(ARGV[2])
local n, d = tonumber(ARGV[3]), tonumber(ARGV[4])
local ad = redis.call('GET', 'pr:ad')
local dangling = 0
if ad then dangling = struct.unpack('<d', ad) end
local base = (1 - d) / n + d * dangling / n
for v = first, last - 1 do
  local k = 'pr:a:' .. v
  local a = redis.call('GET', k)
  local s = 0
  if a then s = struct.unpack('<d', a); redis.call('DEL', k) end
  redis.call('SET', 'pr:r:' .. v, struct.pack('<d', base + d * s))
end
return last - first
"#;

/// What the scripts measured beyond the common outcome.
pub struct LuaOutcome {
    /// Load, steps, ranks, commands.
    pub outcome: Outcome,
    /// The longest script call.
    pub longest_call: Duration,
    /// Where it was: `iteration I map|reduce, nodes A..B`.
    pub longest_at: String,
    /// The 99th percentile of the calls' times.
    pub p99_call: Duration,
    /// Script calls over the iterations.
    pub calls: u64,
}

/// Loads with `loaders` client-side connections, then runs the iterations
/// as scripts on one connection, then reads the ranks back.
///
/// # Errors
/// A connection, a script error, or a rank not stored.
pub fn run(
    g: &Graph,
    addr: SocketAddr,
    loaders: u32,
    iterations: u32,
    damping: f64,
    step: &mut dyn FnMut(&str),
) -> Result<LuaOutcome> {
    let n = g.nodes();
    let mut conns: Vec<Kv> = (0..loaders.max(1))
        .map(|_| Kv::connect(addr, Wire::Resp))
        .collect::<Result<_>>()?;
    step("load");
    let t = Instant::now();
    let p_count = conns.len() as u32;
    mapreduce::on_each(&mut conns, |p, kv| mapreduce::load(kv, g, p, p_count))?;
    let load_s = t.elapsed().as_secs_f64();
    let kv = &mut conns[0];
    let map_sha = load_script(kv, MAP)?;
    let reduce_sha = load_script(kv, REDUCE)?;
    let before = kv.requests;
    let mut record = Calls::default();
    let mut steps = Vec::with_capacity(iterations as usize);
    // Each call's range is sized by its work (a map touches a node and
    // each of its edges; a reduce, each node once), adapted call by call
    // to take about TARGET: sizing by node count alone let a range of
    // high-degree nodes follow a cheap one and take 70 ms.
    let mut map_chunks = Chunker::new((0..n).map(|v| 1 + g.neighbours(v).len() as u64), 256.0);
    let mut reduce_chunks = Chunker::new((0..n).map(|_| 1), 256.0);
    let (nf, df) = (n.to_string(), damping.to_string());
    for i in 0..iterations {
        let map = format!("iteration {} map", i + 1);
        step(&map);
        let t = Instant::now();
        record.pass(kv, &map_sha, &mut map_chunks, &[], &map)?;
        let map_s = t.elapsed().as_secs_f64();
        let reduce = format!("iteration {} reduce", i + 1);
        step(&reduce);
        let t = Instant::now();
        record.pass(kv, &reduce_sha, &mut reduce_chunks, &[&nf, &df], &reduce)?;
        kv.command(&[b"DEL", b"pr:ad"])?;
        steps.push((map_s, t.elapsed().as_secs_f64()));
    }
    let requests = kv.requests - before;
    step("read ranks");
    let parts = mapreduce::on_each(&mut conns, |p, kv| mapreduce::read_ranks(kv, n, p, p_count))?;
    let mut ranks = vec![f64::NAN; n as usize];
    for (p, part) in parts.into_iter().enumerate() {
        for (v, r) in mapreduce::nodes_of(p as u32, p_count, n).zip(part) {
            ranks[v as usize] = r;
        }
    }
    Ok(LuaOutcome {
        outcome: Outcome {
            load_s,
            steps,
            ranks,
            requests,
        },
        calls: record.times.len() as u64,
        p99_call: record.p99(),
        longest_call: record.longest,
        longest_at: record.longest_at,
    })
}

/// Every script call's time, and where the longest was.
#[derive(Default)]
struct Calls {
    times: Vec<Duration>,
    longest: Duration,
    longest_at: String,
}

impl Calls {
    /// One step over every node: calls of the script `sha` on the ranges
    /// `chunks` cuts (their first and end node, then `extra`), each timed.
    fn pass(
        &mut self,
        kv: &mut Kv,
        sha: &[u8],
        chunks: &mut Chunker,
        extra: &[&str],
        what: &str,
    ) -> Result<()> {
        let n = chunks.nodes();
        let mut first = 0u32;
        while first < n {
            let last = chunks.next_end(first);
            let (f, l) = (first.to_string(), last.to_string());
            let mut args = vec![f.as_str(), l.as_str()];
            args.extend_from_slice(extra);
            let took = call(kv, sha, &args)?;
            self.times.push(took);
            if took > self.longest {
                self.longest = took;
                self.longest_at = format!("{what}, nodes {first}..{last}");
            }
            chunks.adapt(first, last, took);
            first = last;
        }
        Ok(())
    }

    /// The 99th percentile of the calls' times.
    fn p99(&mut self) -> Duration {
        self.times.sort_unstable();
        self.times
            .get((self.times.len() * 99).div_ceil(100).saturating_sub(1))
            .copied()
            .unwrap_or_default()
    }
}

fn load_script(kv: &mut Kv, body: &str) -> Result<Vec<u8>> {
    match kv.command(&[b"SCRIPT", b"LOAD", body.as_bytes()])? {
        Value::Bulk(sha) => Ok(sha),
        other => bail!("SCRIPT LOAD answered {other:?}"),
    }
}

/// One EVALSHA with no keys; returns how long it took.
fn call(kv: &mut Kv, sha: &[u8], args: &[&str]) -> Result<Duration> {
    let mut cmd: Vec<&[u8]> = vec![b"EVALSHA", sha, b"0"];
    cmd.extend(args.iter().map(|a| a.as_bytes()));
    let t = Instant::now();
    let reply = kv.command(&cmd).context("a PageRank script")?;
    let took = t.elapsed();
    if !matches!(reply, Value::Integer(_)) {
        bail!("a PageRank script answered {reply:?}");
    }
    Ok(took)
}

/// Cuts the nodes into script calls of about [`TARGET`] each, by work:
/// `prefix[v]` is the work of nodes `0..v`.
struct Chunker {
    prefix: Vec<u64>,
    /// Work per call, adapted from each call's time.
    budget: f64,
}

impl Chunker {
    fn new(work: impl Iterator<Item = u64>, budget: f64) -> Chunker {
        let mut prefix = vec![0u64];
        let mut sum = 0;
        for w in work {
            sum += w;
            prefix.push(sum);
        }
        Chunker { prefix, budget }
    }

    /// The nodes it cuts.
    fn nodes(&self) -> u32 {
        (self.prefix.len() - 1) as u32
    }

    /// The end of the call starting at `first`: the smallest range with at
    /// least the budget's work, and at least one node.
    fn next_end(&self, first: u32) -> u32 {
        let n = self.prefix.len() - 1;
        let f = first as usize;
        let goal = self.prefix[f] + (self.budget.max(1.0) as u64);
        let end = self.prefix[f + 1..].partition_point(|&p| p < goal) + f + 1;
        end.min(n) as u32
    }

    /// Scales the budget towards [`TARGET`] from the call `first..last`
    /// that took `took`, at most doubling and at least halving per call.
    fn adapt(&mut self, first: u32, last: u32, took: Duration) {
        let work = (self.prefix[last as usize] - self.prefix[first as usize]).max(1) as f64;
        let rate = work / took.as_secs_f64().max(1e-9);
        let want = TARGET.as_secs_f64() * rate;
        self.budget = want.clamp(self.budget / 2.0, self.budget * 2.0).max(1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_cut_by_work_and_cover_every_node_once() {
        // Node 3 has a thousand edges, the others one.
        let work = [2u64, 2, 2, 1001, 2, 2, 2, 2];
        let c = Chunker::new(work.iter().copied(), 4.0);
        let mut ends = Vec::new();
        let mut first = 0;
        while first < 8 {
            let end = c.next_end(first);
            assert!(end > first);
            ends.push(end);
            first = end;
        }
        assert_eq!(
            ends,
            [2, 4, 6, 8],
            "the heavy node has a call nearly to itself"
        );
    }

    #[test]
    fn the_budget_follows_the_measured_rate_within_a_factor_of_two() {
        let mut c = Chunker::new(std::iter::repeat_n(1, 100_000), 1000.0);
        // 1000 units in 1 ms: the rate says 5000 for 5 ms, capped at 2000.
        c.adapt(0, 1000, Duration::from_millis(1));
        assert_eq!(c.budget, 2000.0);
        // 2000 units in 5 ms: exactly the target.
        c.adapt(0, 2000, Duration::from_millis(5));
        assert_eq!(c.budget, 2000.0);
        // 2000 units in 100 ms: halved, not cut to 100.
        c.adapt(0, 2000, Duration::from_millis(100));
        assert_eq!(c.budget, 1000.0);
    }
}
