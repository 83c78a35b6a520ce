//! A ring of provided buffers for io_uring's multishot receives.
//!
//! A multishot receive stays armed on its socket for the whole run: each
//! reply that arrives is copied by the kernel into a buffer it takes from
//! this ring, and posts a completion naming the buffer. That spares the
//! client one receive submission, one poll arming and one poll removal per
//! reply, which is most of what io_uring itself costs per operation. The
//! loop parses the replies where they lie (copying only an incomplete tail
//! to the connection's own read buffer) and hands the buffer straight back.
//!
//! Layout (`struct io_uring_buf_ring`): `entries` slots of 16 bytes
//! `{addr: u64, len: u32, bid: u16, resv: u16}`, page-aligned; the ring's
//! tail is the `resv` field of slot 0, which the kernel reads and this side
//! advances with release ordering after filling slots.
//!
//! Public so that `bench/efficiency`'s bare reference client receives
//! exactly as the engine does.

use io_uring::types::BufRingEntry;
use io_uring::IoUring;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::sync::atomic::{AtomicU16, Ordering};

/// The buffer group id the loop's receives select from.
pub const GROUP: u16 = 0;

/// A registered ring of `count` buffers of `size` bytes each.
pub struct BufRing {
    ring: *mut BufRingEntry,
    layout: Layout,
    mask: u16,
    /// Slots filled but not yet published to the kernel.
    pending: u16,
    tail: u16,
    bufs: Vec<u8>,
    size: usize,
    registered: bool,
}

impl BufRing {
    /// Allocates `count` (a power of two, at most 32,768) buffers of `size`
    /// bytes and registers them with `ring` as group [`GROUP`].
    ///
    /// # Errors
    /// When the kernel refuses the registration (older than 5.19, or no memory).
    pub fn new(ring: &IoUring, count: u16, size: usize) -> std::io::Result<BufRing> {
        assert!(count.is_power_of_two() && count <= 1 << 15);
        let bytes = usize::from(count) * std::mem::size_of::<BufRingEntry>();
        let layout = Layout::from_size_align(bytes, 4096)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        // SAFETY: `layout` has a non-zero size (count >= 1).
        let mem = unsafe { alloc_zeroed(layout) } as *mut BufRingEntry;
        if mem.is_null() {
            return Err(std::io::ErrorKind::OutOfMemory.into());
        }
        let mut me = BufRing {
            ring: mem,
            layout,
            mask: count - 1,
            pending: 0,
            tail: 0,
            bufs: vec![0; usize::from(count) * size],
            size,
            registered: false,
        };
        // SAFETY: the memory lives as long as `me`; the caller unregisters
        // it before dropping `me`, and if it does not, Drop leaks the
        // memory instead of freeing it under the kernel.
        unsafe {
            ring.submitter()
                .register_buf_ring_with_flags(mem as u64, count, GROUP, 0)?;
        }
        me.registered = true;
        for bid in 0..count {
            me.give_back(bid);
        }
        me.publish();
        Ok(me)
    }

    /// The bytes of buffer `bid`.
    pub fn buffer(&self, bid: u16, len: usize) -> &[u8] {
        let start = usize::from(bid) * self.size;
        &self.bufs[start..start + len.min(self.size)]
    }

    /// Puts buffer `bid` back in a free slot (visible to the kernel after
    /// [`BufRing::publish`]).
    pub fn give_back(&mut self, bid: u16) {
        let slot = usize::from(self.tail.wrapping_add(self.pending) & self.mask);
        let addr = self.bufs.as_ptr() as u64 + (usize::from(bid) * self.size) as u64;
        // SAFETY: `slot` is below the ring's entry count; only addr, len and
        // bid are written, never slot 0's `resv`, which is the shared tail.
        unsafe {
            let e = &mut *self.ring.add(slot);
            e.set_addr(addr);
            e.set_len(self.size as u32);
            e.set_bid(bid);
        }
        self.pending += 1;
    }

    /// Makes every buffer given back since the last call available to the kernel.
    pub fn publish(&mut self) {
        if self.pending == 0 {
            return;
        }
        self.tail = self.tail.wrapping_add(self.pending);
        self.pending = 0;
        // SAFETY: the tail field is a properly aligned u16 inside the ring's
        // memory; the kernel reads it concurrently, hence the atomic store.
        unsafe {
            let tail = BufRingEntry::tail(self.ring) as *const AtomicU16;
            (*tail).store(self.tail, Ordering::Release);
        }
    }

    /// Unregisters the buffers from `ring`; call before dropping when the
    /// ring lives on. Nothing may still select from the group.
    pub fn unregister(&mut self, ring: &IoUring) {
        if self.registered {
            let _ = ring.submitter().unregister_buf_ring(GROUP);
            self.registered = false;
        }
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        if self.registered {
            // Still registered (an error path left early): the kernel may
            // yet select a buffer, so leave the memory to the process rather
            // than free it under the kernel.
            std::mem::forget(std::mem::take(&mut self.bufs));
            return;
        }
        // SAFETY: allocated in `new` with this layout, and unregistered, so
        // the kernel no longer reads it.
        unsafe { dealloc(self.ring as *mut u8, self.layout) }
    }
}
