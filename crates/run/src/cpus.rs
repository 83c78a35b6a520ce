//! CPU placement (`--server-cpus`, `--client-cpus`): on a small machine the
//! server and kvbench compete for the same cores, and where the scheduler
//! puts them changes the numbers (a closed loop whose client and server
//! sit on different vCPUs pays a cross-CPU wake-up per round trip). Pinning
//! makes that choice explicit, and it is recorded with the run.

use crate::usage::UsageError;
use std::collections::BTreeSet;

/// A set of CPU numbers, as written (`0`, `0-1`, `0,2-3`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub BTreeSet<usize>);

impl CpuList {
    /// Parses `text` for `flag`, refusing CPUs this process may not use.
    ///
    /// # Errors
    /// A [`UsageError`] naming the flag.
    pub fn parse(flag: &str, text: &str) -> Result<CpuList, UsageError> {
        let bad = |why: String| UsageError(format!("{flag} {text}: {why}"));
        let mut set = BTreeSet::new();
        for part in text.split(',').map(str::trim) {
            let num = |s: &str| {
                s.parse::<usize>()
                    .map_err(|_| bad(format!("`{s}` is not a CPU number")))
            };
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (num(a)?, num(b)?);
                    if a > b {
                        return Err(bad(format!("range {a}-{b} runs backwards")));
                    }
                    set.extend(a..=b);
                }
                None => {
                    set.insert(num(part)?);
                }
            }
        }
        let allowed = allowed_cpus();
        if let Some(c) = set.iter().find(|c| !allowed.contains(c)) {
            return Err(bad(format!(
                "CPU {c} is not available to kvbench (available: {})",
                CpuList(allowed)
            )));
        }
        Ok(CpuList(set))
    }

    fn mask(&self) -> libc::cpu_set_t {
        // SAFETY: cpu_set_t is plain data; CPU_SET writes within it for
        // numbers below CPU_SETSIZE, which `parse` checked (the allowed set
        // comes from a cpu_set_t).
        let mut m: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in &self.0 {
            unsafe { libc::CPU_SET(c, &mut m) };
        }
        m
    }

    /// Places every thread of process `pid` (a server kvbench started) on
    /// these CPUs; threads it starts later inherit the placement.
    ///
    /// # Errors
    /// A message naming the process or thread that could not be placed.
    pub fn place_process(&self, pid: u32) -> Result<(), String> {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
            .map_err(|e| format!("process {pid}: {e}"))?;
        let mask = self.mask();
        for t in tasks.flatten() {
            let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            // SAFETY: the mask is a valid cpu_set_t of the size passed.
            let r = unsafe {
                libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mask)
            };
            if r != 0 {
                return Err(format!(
                    "process {pid}, thread {tid}: {}",
                    std::io::Error::last_os_error()
                ));
            }
        }
        Ok(())
    }

    /// Places the calling thread on these CPUs until the guard is dropped;
    /// threads it starts meanwhile (kvbench's workers) inherit the placement.
    pub fn place_this_thread(&self) -> Placed {
        let before = current_mask();
        let mask = self.mask();
        // SAFETY: as in `place_process`; pid 0 is the calling thread.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mask) };
        Placed { before }
    }
}

impl std::fmt::Display for CpuList {
    /// Ranges collapsed: `0-3,6`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        let mut it = self.0.iter().copied().peekable();
        while let Some(a) = it.next() {
            let mut b = a;
            while it.peek() == Some(&(b + 1)) {
                b += 1;
                it.next();
            }
            parts.push(if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            });
        }
        f.write_str(&parts.join(","))
    }
}

/// Restores the thread's placement when dropped.
pub struct Placed {
    before: Option<libc::cpu_set_t>,
}

impl Drop for Placed {
    fn drop(&mut self) {
        if let Some(m) = &self.before {
            // SAFETY: a mask read by sched_getaffinity.
            unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), m) };
        }
    }
}

fn current_mask() -> Option<libc::cpu_set_t> {
    // SAFETY: sched_getaffinity fills a cpu_set_t of the size passed.
    let mut m: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut m) };
    (r == 0).then_some(m)
}

/// The CPUs this process may run on.
fn allowed_cpus() -> BTreeSet<usize> {
    let Some(m) = current_mask() else {
        return BTreeSet::new();
    };
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: reads within the set.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &m) })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_print_and_are_checked() {
        let l = CpuList::parse("--server-cpus", "0").expect("cpu 0");
        assert_eq!(l.to_string(), "0");
        let e = CpuList::parse("--client-cpus", "1-0").expect_err("backwards");
        assert!(e.0.starts_with("--client-cpus 1-0:"), "{}", e.0);
        let e = CpuList::parse("--client-cpus", "x").expect_err("not a number");
        assert!(e.0.contains("`x`"), "{}", e.0);
        let e = CpuList::parse("--server-cpus", "4096").expect_err("no such cpu");
        assert!(e.0.contains("not available"), "{}", e.0);
        assert_eq!(
            CpuList([0, 1, 2, 5].into_iter().collect()).to_string(),
            "0-2,5"
        );
    }

    #[test]
    fn a_thread_is_placed_and_restored() {
        let before = allowed_cpus();
        let first = *before.iter().next().expect("a cpu");
        let l = CpuList([first].into_iter().collect());
        {
            let _g = l.place_this_thread();
            assert_eq!(allowed_cpus(), l.0);
        }
        assert_eq!(allowed_cpus(), before);
    }
}
