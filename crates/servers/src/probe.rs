//! Reads a process's resource use from `/proc`: resident memory and CPU time.
//!
//! It must not talk to the server or interpret its numbers; a value that cannot
//! be read is an error here (the caller turns it into `None`), never a guess.

use std::io;

/// Resident set size in bytes, from `VmRSS` in `/proc/<pid>/status`.
///
/// A zombie has no `VmRSS` line, so this fails once the process has exited.
pub(crate) fn rss_bytes(pid: u32) -> io::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    parse_vm_rss(&status).ok_or_else(|| invalid(format!("no VmRSS in /proc/{pid}/status")))
}

fn parse_vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let mut words = line["VmRSS:".len()..].split_whitespace();
    let kib: u64 = words.next()?.parse().ok()?;
    // The kernel always prints kB here; anything else would be a format change
    // we do not understand, so refuse rather than mis-scale.
    (words.next()? == "kB").then_some(kib * 1024)
}

/// CPU time (user + system, all threads, in seconds) from `/proc/<pid>/stat`.
///
/// The kernel counts in clock ticks (`sysconf(_SC_CLK_TCK)`, normally 100 Hz),
/// so the resolution is 10 ms: a difference of two readings is only meaningful
/// when the window is long compared to that.
pub(crate) fn cpu_seconds(pid: u32) -> io::Result<f64> {
    let t = cpu_times(pid)?;
    Ok(t.user_s + t.system_s)
}

/// A process's CPU time split by where it was spent, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuTimes {
    /// In the process's own code (`utime`).
    pub user_s: f64,
    /// In the kernel on its behalf (`stime`): for a key-value server mostly
    /// the network stack's system calls.
    pub system_s: f64,
    /// One clock tick, the resolution of both figures.
    pub tick_s: f64,
}

/// User and system CPU time (all threads) from `/proc/<pid>/stat`, at the
/// same 10 ms resolution as [`cpu_seconds`].
pub(crate) fn cpu_times(pid: u32) -> io::Result<CpuTimes> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let (utime, stime) =
        parse_stat_ticks(&stat).ok_or_else(|| invalid(format!("cannot parse /proc/{pid}/stat")))?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz <= 0 {
        return Err(invalid("sysconf(_SC_CLK_TCK) failed".to_string()));
    }
    let hz = hz as f64;
    Ok(CpuTimes {
        user_s: utime as f64 / hz,
        system_s: stime as f64 / hz,
        tick_s: 1.0 / hz,
    })
}

/// utime and stime (fields 14 and 15). The command name (field 2) is in
/// parentheses and may itself contain spaces and ')', so fields are counted
/// from after the last ')'.
fn parse_stat_ticks(stat: &str) -> Option<(u64, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    // After ')': field 3 (state) is index 0, so field N is index N - 3.
    let mut fields = rest.split_whitespace().skip(14 - 3);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime, stime))
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_spaces_and_parens_in_comm() {
        let stat = "1234 (a) b (c)) S 1 1234 1234 0 -1 4194560 100 0 0 0 37 5 0 0 20 0 4 0";
        assert_eq!(parse_stat_ticks(stat), Some((37, 5)));
        assert_eq!(parse_stat_ticks("garbage"), None);
        assert_eq!(parse_stat_ticks("1 (x) S 1 2"), None);
    }

    #[test]
    fn vm_rss_in_bytes() {
        let status = "Name:\tredis\nVmPeak:\t  100 kB\nVmRSS:\t    8192 kB\nThreads:\t5\n";
        assert_eq!(parse_vm_rss(status), Some(8192 * 1024));
        assert_eq!(parse_vm_rss("Name:\tzombie\nState:\tZ\n"), None);
    }

    #[test]
    fn own_process_is_readable() {
        let pid = std::process::id();
        assert!(rss_bytes(pid).expect("rss") > 0);
        assert!(cpu_seconds(pid).expect("cpu") >= 0.0);
        let t = cpu_times(pid).expect("cpu times");
        assert!(t.user_s >= 0.0 && t.system_s >= 0.0 && t.tick_s > 0.0);
    }
}
