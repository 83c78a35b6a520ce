//! Paper D's fine-grained set/get throughput: on a store already loaded
//! with the graph, the paper's drivers (five threads for Memcached, six for
//! Redis) each keep one single-key request in flight on their own
//! connection (`GET`/`SET` on Redis, `get`/`set` on Memcached), half gets
//! and half sets of a random node's rank (8 bytes),
//! for a fixed window. The server's CPU time over the window is read split
//! into user and system time, which is what the paper's "where the time
//! goes" is about: how much of the server's work is the kernel's TCP
//! stack rather than the store itself.

use anyhow::{bail, Result};
use kvbench_analytics::kv::{Kv, Wire};
use kvbench_analytics::mapreduce;
use kvbench_model::analytics::SetGetResult;
use kvbench_servers::Server;
use rand_core::{RngCore, SeedableRng};
use std::time::{Duration, Instant};

/// Runs the set/get window of `seconds` against `server` (loaded with a
/// graph of `nodes` nodes by `mapreduce::load`) and measures it.
///
/// # Errors
/// A connection that fails, or a get that does not find its node's rank.
pub fn measure(
    server: &Server,
    wire: Wire,
    nodes: u32,
    seconds: f64,
    seed: u64,
) -> Result<SetGetResult> {
    if nodes == 0 {
        bail!("set/get needs a graph with at least one node");
    }
    let drivers = super::paper_drivers(wire);
    let mut conns: Vec<Kv> = (0..drivers)
        .map(|_| Kv::connect(server.addr(), wire))
        .collect::<Result<_>>()?;
    let value = (1.0 / f64::from(nodes)).to_le_bytes();
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let before = server.cpu_times();
    let c0 = kvbench_engine::cpu::process_cpu_seconds();
    let t0 = Instant::now();
    let counts = mapreduce::on_each(&mut conns, |i, kv| {
        driver(kv, nodes, &value, seed ^ (u64::from(i) << 32), deadline)
    });
    let wall = t0.elapsed().as_secs_f64();
    let after = server.cpu_times();
    let client_cpu = kvbench_engine::cpu::process_cpu_seconds() - c0;
    let (mut gets, mut sets) = (0, 0);
    for (g, s) in counts? {
        gets += g;
        sets += s;
    }
    let split = before.zip(after);
    Ok(SetGetResult {
        drivers,
        seconds: wall,
        gets,
        sets,
        server_user_s: split.map(|(b, a)| a.user_s - b.user_s),
        server_system_s: split.map(|(b, a)| a.system_s - b.system_s),
        tick_s: after.or(before).map_or(0.01, |t| t.tick_s),
        client_cpu_s: client_cpu,
    })
}

/// One driver: a random node's rank got or set (its own value written
/// back, so the graph stays as loaded) until `deadline`; counts of gets
/// and sets answered.
fn driver(
    kv: &mut Kv,
    nodes: u32,
    value: &[u8; 8],
    seed: u64,
    deadline: Instant,
) -> Result<(u64, u64)> {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut key = Vec::with_capacity(16);
    let mut out = Vec::with_capacity(1);
    let (mut gets, mut sets) = (0u64, 0u64);
    while Instant::now() < deadline {
        let r = rng.next_u64();
        let v = (r % u64::from(nodes)) as u32;
        mapreduce::rank_key(v, &mut key);
        if r >> 63 == 0 {
            kv.get_one(&key, &mut out)?;
            match out.first() {
                Some(Some(b)) if b.len() == 8 => gets += 1,
                got => bail!("set/get: node {v}'s rank answered {got:?}, not 8 bytes"),
            }
        } else {
            kv.set_one(&key, value)?;
            sets += 1;
        }
    }
    Ok((gets, sets))
}
