//! PageRank map/reduce over a key-value store, as paper D ran it on
//! Memcached and Redis: a driver per partition of the nodes, each with its
//! own connection, and the master (this thread) starting each step on every
//! driver and waiting for all of them.
//!
//! Data model (what the paper's "one object per node for its neighbour
//! list and one for its rank" becomes on the wire): `pr:n:V` holds node V's
//! out-neighbours as little-endian u32s (4 bytes an edge: no decoding
//! beyond a copy, and within a few bytes of a varint for graphs whose ids
//! span millions), `pr:r:V` its rank as a little-endian f64.
//!
//! An iteration: **map** — driver p reads the lists and ranks of its nodes
//! (V mod P = p) in batches, adds each node's share to its targets in a
//! local array, then writes one blob per destination partition q
//! (`pr:c:p:q:k`: (u32 node, f64 sum) pairs, cut at 512 KB for Memcached's
//! item limit) and its dangling nodes' rank (`pr:d:p`). **Reduce** — driver
//! q reads every blob for q and every `pr:d:*`, and writes the new rank of
//! each of its nodes. The store is the shuffle: no rank moves between
//! drivers except through it.

use crate::kv::{Kv, Wire};
use crate::Graph;
use anyhow::{Context, Result};
use std::net::SocketAddr;
use std::time::Instant;

/// Nodes per batch of reads or writes.
const BATCH: usize = 256;
/// The largest contribution blob (Memcached stores at most 1 MB an item).
const BLOB_BYTES: usize = 512 * 1024;
/// One (node, contribution) entry of a blob.
const ENTRY: usize = 12;

/// What to run.
pub struct Job<'a> {
    /// The graph to load (the drivers read it back from the store only).
    pub graph: &'a Graph,
    /// Where the server listens.
    pub addr: SocketAddr,
    /// Its protocol.
    pub wire: Wire,
    /// Driver threads (each a partition of the nodes).
    pub drivers: u32,
    /// PageRank iterations.
    pub iterations: u32,
    /// Damping factor.
    pub damping: f64,
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Loading the lists and initial ranks.
    pub load_s: f64,
    /// Each iteration's map and reduce wall times.
    pub steps: Vec<(f64, f64)>,
    /// The final ranks, read back from the store.
    pub ranks: Vec<f64>,
    /// Commands sent during the iterations.
    pub requests: u64,
}

fn key(prefix: &[u8], v: u32, out: &mut Vec<u8>) {
    use std::io::Write;
    out.clear();
    out.extend_from_slice(prefix);
    let _ = write!(out, "{v}");
}

/// The key node `v`'s rank is stored under (also what paper D's set/get
/// test reads and writes).
pub fn rank_key(v: u32, out: &mut Vec<u8>) {
    key(b"pr:r:", v, out);
}

pub(crate) fn nodes_of(p: u32, drivers: u32, n: u32) -> impl Iterator<Item = u32> {
    (p..n).step_by(drivers as usize)
}

/// Loads the graph, runs the iterations, reads the ranks back.
/// `step` is called before each step with its name (for progress).
///
/// # Errors
/// A driver's connection or a reply that is not what was stored.
pub fn run(job: &Job<'_>, step: &mut dyn FnMut(&str)) -> Result<Outcome> {
    let n = job.graph.nodes();
    let p_count = job.drivers.max(1);
    let mut conns: Vec<Kv> = (0..p_count)
        .map(|_| Kv::connect(job.addr, job.wire))
        .collect::<Result<_>>()?;
    step("load");
    let started = Instant::now();
    on_each(&mut conns, |p, kv| load(kv, job.graph, p, p_count))?;
    let load_s = started.elapsed().as_secs_f64();
    let before: u64 = conns.iter().map(|c| c.requests).sum();
    let mut steps = Vec::with_capacity(job.iterations as usize);
    for i in 0..job.iterations {
        step(&format!("iteration {} map", i + 1));
        let t = Instant::now();
        let maps = on_each(&mut conns, |p, kv| map(kv, n, p, p_count))?;
        let map_s = t.elapsed().as_secs_f64();
        step(&format!("iteration {} reduce", i + 1));
        let t = Instant::now();
        let chunks: Vec<Vec<u32>> = maps.into_iter().collect();
        on_each(&mut conns, |q, kv| {
            reduce(kv, n, q, p_count, &chunks, job.damping)
        })?;
        steps.push((map_s, t.elapsed().as_secs_f64()));
    }
    let requests = conns.iter().map(|c| c.requests).sum::<u64>() - before;
    step("read ranks");
    let parts = on_each(&mut conns, |p, kv| read_ranks(kv, n, p, p_count))?;
    let mut ranks = vec![f64::NAN; n as usize];
    for (p, part) in parts.into_iter().enumerate() {
        for (v, r) in nodes_of(p as u32, p_count, n).zip(part) {
            ranks[v as usize] = r;
        }
    }
    Ok(Outcome {
        load_s,
        steps,
        ranks,
        requests,
    })
}

/// Runs `f` for every driver on its own thread and waits for all; the
/// first error wins.
pub fn on_each<T: Send>(
    conns: &mut [Kv],
    f: impl Fn(u32, &mut Kv) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = conns
            .iter_mut()
            .enumerate()
            .map(|(p, kv)| {
                let f = &f;
                s.spawn(move || f(p as u32, kv).with_context(|| format!("driver {p}")))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a driver panicked")))
            })
            .collect()
    })
}

/// Driver `p` of `drivers` writes its nodes' neighbour lists and initial
/// ranks.
pub fn load(kv: &mut Kv, g: &Graph, p: u32, drivers: u32) -> Result<()> {
    let n = g.nodes();
    let init = (1.0 / f64::from(n)).to_le_bytes().to_vec();
    let nodes: Vec<u32> = nodes_of(p, drivers, n).collect();
    let mut items = Vec::with_capacity(2 * BATCH);
    for batch in nodes.chunks(BATCH) {
        items.clear();
        for &v in batch {
            let mut k = Vec::new();
            key(b"pr:n:", v, &mut k);
            let list: Vec<u8> = g
                .neighbours(v)
                .iter()
                .flat_map(|t| t.to_le_bytes())
                .collect();
            items.push((k, list));
            let mut k = Vec::new();
            key(b"pr:r:", v, &mut k);
            items.push((k, init.clone()));
        }
        kv.set_many(&items)?;
    }
    Ok(())
}

/// Map for driver `p`: returns the number of blobs it wrote for each
/// destination partition.
fn map(kv: &mut Kv, n: u32, p: u32, drivers: u32) -> Result<Vec<u32>> {
    let mut acc = vec![0.0f64; n as usize];
    let mut touched = vec![false; n as usize];
    let mut dangling = 0.0f64;
    let nodes: Vec<u32> = nodes_of(p, drivers, n).collect();
    let mut keys = Vec::with_capacity(2 * BATCH);
    let mut vals = Vec::with_capacity(2 * BATCH);
    for batch in nodes.chunks(BATCH) {
        keys.clear();
        for &v in batch {
            let mut k = Vec::new();
            key(b"pr:n:", v, &mut k);
            keys.push(k);
            let mut k = Vec::new();
            key(b"pr:r:", v, &mut k);
            keys.push(k);
        }
        kv.get_many(&keys, &mut vals)?;
        for (i, &v) in batch.iter().enumerate() {
            let list = vals[2 * i]
                .as_deref()
                .with_context(|| format!("node {v}: no neighbour list stored"))?;
            let rank = rank_of(v, vals[2 * i + 1].as_deref())?;
            if list.is_empty() {
                dangling += rank;
                continue;
            }
            let share = rank / (list.len() / 4) as f64;
            for t in list.chunks_exact(4) {
                let t = u32::from_le_bytes([t[0], t[1], t[2], t[3]]) as usize;
                acc[t] += share;
                touched[t] = true;
            }
        }
    }
    let mut items = Vec::new();
    let mut counts = vec![0u32; drivers as usize];
    for q in 0..drivers {
        let mut blob = Vec::new();
        for w in nodes_of(q, drivers, n) {
            if !touched[w as usize] {
                continue;
            }
            blob.extend_from_slice(&w.to_le_bytes());
            blob.extend_from_slice(&acc[w as usize].to_le_bytes());
            if blob.len() + ENTRY > BLOB_BYTES {
                items.push((
                    blob_key(p, q, counts[q as usize]),
                    std::mem::take(&mut blob),
                ));
                counts[q as usize] += 1;
            }
        }
        if !blob.is_empty() {
            items.push((blob_key(p, q, counts[q as usize]), blob));
            counts[q as usize] += 1;
        }
        if items.len() >= 4 {
            kv.set_many(&items)?;
            items.clear();
        }
    }
    let mut k = Vec::new();
    key(b"pr:d:", p, &mut k);
    items.push((k, dangling.to_le_bytes().to_vec()));
    kv.set_many(&items)?;
    Ok(counts)
}

fn blob_key(p: u32, q: u32, k: u32) -> Vec<u8> {
    format!("pr:c:{p}:{q}:{k}").into_bytes()
}

fn rank_of(v: u32, value: Option<&[u8]>) -> Result<f64> {
    let b = value.with_context(|| format!("node {v}: no rank stored"))?;
    let b: [u8; 8] = b
        .try_into()
        .map_err(|_| anyhow::anyhow!("node {v}: a rank of {} bytes, not 8", b.len()))?;
    Ok(f64::from_le_bytes(b))
}

/// Reduce for driver `q`: `chunks[p][q]` blobs from each mapper.
fn reduce(
    kv: &mut Kv,
    n: u32,
    q: u32,
    drivers: u32,
    chunks: &[Vec<u32>],
    damping: f64,
) -> Result<()> {
    let mut keys: Vec<Vec<u8>> = Vec::new();
    for (p, counts) in chunks.iter().enumerate() {
        for k in 0..counts[q as usize] {
            keys.push(blob_key(p as u32, q, k));
        }
    }
    let blobs_end = keys.len();
    for p in 0..drivers {
        let mut k = Vec::new();
        key(b"pr:d:", p, &mut k);
        keys.push(k);
    }
    let mut vals = Vec::new();
    kv.get_many(&keys, &mut vals)?;
    let mut acc = vec![0.0f64; n.div_ceil(drivers) as usize];
    for (i, blob) in vals[..blobs_end].iter().enumerate() {
        let blob = blob.as_deref().with_context(|| {
            format!(
                "contribution blob {} missing",
                String::from_utf8_lossy(&keys[i])
            )
        })?;
        for e in blob.chunks_exact(ENTRY) {
            let w = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
            let mut s = [0u8; 8];
            s.copy_from_slice(&e[4..]);
            acc[(w / drivers) as usize] += f64::from_le_bytes(s);
        }
    }
    let mut dangling = 0.0;
    for (i, d) in vals[blobs_end..].iter().enumerate() {
        dangling += rank_of(i as u32, d.as_deref()).context("a mapper's dangling rank")?;
    }
    let nf = f64::from(n);
    let base = (1.0 - damping) / nf + damping * dangling / nf;
    let nodes: Vec<u32> = nodes_of(q, drivers, n).collect();
    let mut items = Vec::with_capacity(BATCH);
    for batch in nodes.chunks(BATCH) {
        items.clear();
        for &v in batch {
            let mut k = Vec::new();
            key(b"pr:r:", v, &mut k);
            let r = base + damping * acc[(v / drivers) as usize];
            items.push((k, r.to_le_bytes().to_vec()));
        }
        kv.set_many(&items)?;
    }
    Ok(())
}

pub(crate) fn read_ranks(kv: &mut Kv, n: u32, p: u32, drivers: u32) -> Result<Vec<f64>> {
    let nodes: Vec<u32> = nodes_of(p, drivers, n).collect();
    let mut out = Vec::with_capacity(nodes.len());
    let mut keys = Vec::with_capacity(BATCH);
    let mut vals = Vec::with_capacity(BATCH);
    for batch in nodes.chunks(BATCH) {
        keys.clear();
        for &v in batch {
            let mut k = Vec::new();
            key(b"pr:r:", v, &mut k);
            keys.push(k);
        }
        kv.get_many(&keys, &mut vals)?;
        for (&v, val) in batch.iter().zip(&vals) {
            out.push(rank_of(v, val.as_deref())?);
        }
    }
    Ok(out)
}
