//! Proves the hot-path parsers do not allocate, using a counting global
//! allocator scoped to the current thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: forwarding the caller's contract to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarding the caller's contract to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocs_during(f: impl FnOnce()) -> usize {
    let before = ALLOCS.with(Cell::get);
    f();
    ALLOCS.with(Cell::get) - before
}

#[test]
fn hot_path_parsers_do_not_allocate() {
    let resp: &[&[u8]] = &[
        b"+OK\r\n",
        b"$5\r\nhello\r\n",
        b"*3\r\n$1\r\na\r\n*2\r\n:1\r\n$-1\r\n%1\r\n+k\r\n,1.5\r\n",
        b"|1\r\n+a\r\n+b\r\n>2\r\n+x\r\n=5\r\ntxt:y\r\n",
        b"$3\r\nab",
        b"$-2\r\n",
    ];
    let mc: &[&[u8]] = &[
        b"VALUE k 0 3\r\nabc\r\nVALUE j 1 1 5\r\nz\r\nEND\r\n",
        b"STAT pid 1\r\nEND\r\n",
        b"STORED\r\n",
        b"VALUE k 0 3\r\nab",
        b"garbage\r\n",
    ];
    let n = allocs_during(|| {
        for b in resp {
            let _ = std::hint::black_box(kvbench_proto::resp::parse_reply(b));
        }
        for b in mc {
            let _ = std::hint::black_box(kvbench_proto::memcache_text::parse_reply(b));
        }
    });
    assert_eq!(n, 0);
    // Sanity check that the counter works.
    assert!(allocs_during(|| drop(std::hint::black_box(vec![1u8; 8]))) > 0);
}
