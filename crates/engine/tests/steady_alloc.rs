//! The engine allocates nothing per request once a run is under way
//! (issue 3, item 1): a counting global allocator (its own test binary, so
//! no other test's allocations count) compares a run of 10,000 operations
//! with one of 100,000 against a real redis-server. Set-up (connections,
//! recorders, histograms) costs the same in both; what grows with the run is
//! only per-second bookkeeping (one serialized histogram per second), so
//! 90,000 more requests may add a few hundred allocations, not ~90,000.

#[path = "support/load.rs"]
mod load;

use kvbench_engine::{run_phase, Io, PhaseConfig, PhaseKind, Silent, Window};
use kvbench_model::SystemKind;
use kvbench_servers::{Server, ServerSpec};
use kvbench_workload::keys::KeyNamer;
use kvbench_workload::WorkloadSpec;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

struct Counting;

/// Allocations by every thread of the process (the engine's workers too).
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarding the caller's contract to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarding the caller's contract to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarding the caller's contract to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn config(server: &Server, spec: &WorkloadSpec, kind: PhaseKind, io: Io) -> PhaseConfig {
    PhaseConfig {
        keys: KeyNamer::default(),
        io,
        ..load::phase_config(server.addr(), server.system(), spec, kind, 8, 4)
    }
}

/// Allocations made by a closed-loop run of `ops` operations.
fn allocations(server: &Server, spec: &WorkloadSpec, ops: u64, io: Io) -> usize {
    let kind = PhaseKind::Run {
        warmup: Duration::ZERO,
        window: Window::Operations(ops),
        rate: None,
    };
    let cfg = config(server, spec, kind, io);
    let stop = Arc::new(AtomicBool::new(false));
    let before = ALLOCS.load(Ordering::Relaxed);
    let out = run_phase(&cfg, &Silent, &stop).expect("run phase");
    let n = ALLOCS.load(Ordering::Relaxed) - before;
    let done: u64 = out.result.ops.iter().map(|o| o.completed).sum();
    assert_eq!(done, ops, "{io:?}: every operation completed");
    n
}

#[test]
fn allocations_do_not_grow_with_requests() {
    for system in [SystemKind::Redis, SystemKind::Memcached] {
        let server = Server::start(&ServerSpec {
            system,
            binary: None,
            memory_limit_mb: Some(64),
            eviction: None,
            extra_args: Vec::new(),
        })
        .expect("server starts");
        let spec = WorkloadSpec {
            name: "alloc".into(),
            ..load::spec(1_000, 2, 50, 0.5)
        };
        let load = config(&server, &spec, PhaseKind::Load, Io::auto());
        run_phase(&load, &Silent, &Arc::new(AtomicBool::new(false))).expect("load");
        let mut loops = vec![Io::Tokio];
        if kvbench_engine::uring::available() {
            loops.push(Io::Uring);
        }
        for io in loops {
            let small = allocations(&server, &spec, 10_000, io);
            let large = allocations(&server, &spec, 100_000, io);
            let extra = large.saturating_sub(small);
            eprintln!("{system} {io:?}: {small} allocations for 10,000 ops, {large} for 100,000");
            assert!(
                extra < 1_000,
                "{system} {io:?}: 90,000 more requests made {extra} more allocations \
                 ({small} for 10,000 ops, {large} for 100,000)"
            );
        }
    }
}
