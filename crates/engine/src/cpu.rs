//! kvbench's own CPU use, so a run can say what the client cost and whether
//! the client, not the server, was the bottleneck.

/// CPU seconds (user + system, all threads) this process has used so far.
///
/// `getrusage` reports microseconds, unlike `/proc/self/stat`'s 10 ms ticks.
pub fn process_cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the struct we pass and reads nothing else.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if rc != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// CPU seconds the calling thread has used so far (`CLOCK_THREAD_CPUTIME_ID`).
/// A worker reads it at the window's edges to tell how busy it was.
pub fn thread_cpu_seconds() -> f64 {
    // SAFETY: clock_gettime writes into the struct we pass.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_time_grows_with_work() {
        let before = super::process_cpu_seconds();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed().as_millis() < 50 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(std::hint::black_box(1));
        }
        std::hint::black_box(x);
        let used = super::process_cpu_seconds() - before;
        assert!(used > 0.03, "busy 50 ms but measured {used} s");
    }
}
