//! The hot path allocates nothing: `OpStream::next_op` (and acknowledging
//! inserts) in steady state, checked with a counting global allocator.
//! Alone in its own test binary so no other test's allocations interfere.

use kvbench_model::OpKind;
use kvbench_workload::values::fill_deterministic_value;
use kvbench_workload::{client_rngs, presets, Workload};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn next_op_does_not_allocate() {
    for p in presets::all() {
        let (spec, _) = p.spec().unwrap();
        let w = Workload::new(&spec).unwrap();
        let mut s = w.stream(client_rngs(1, 1).remove(0));
        // Warm up (the latest distribution extends its zeta as inserts land).
        for _ in 0..1000 {
            let op = s.next_op();
            if op.kind == OpKind::Insert {
                s.acknowledge_insert(op.keynum).unwrap();
            }
        }
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        for _ in 0..100_000 {
            let op = s.next_op();
            if op.kind == OpKind::Insert {
                s.acknowledge_insert(op.keynum).unwrap();
            }
        }
        let after = ALLOCATIONS.load(Ordering::Relaxed);
        assert_eq!(after - before, 0, "{}: next_op allocated", p.name);
    }
    let mut out = [0u8; 1000];
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    fill_deterministic_value(b"user123", b"field7", &mut out);
    assert_eq!(ALLOCATIONS.load(Ordering::Relaxed), before);
}
