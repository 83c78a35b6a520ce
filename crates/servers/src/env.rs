//! Facts about the machine kvbench runs on, and kvbench's own CPU use.
//!
//! It must not start or query a server: the server fields of
//! [`Environment`] are left empty for the caller to fill from
//! [`crate::Server::version`].

use kvbench_model::Environment;
use std::ffi::CStr;

/// Machine facts for [`Environment`]: host name and kernel release (uname),
/// CPU model (`/proc/cpuinfo`), logical cores visible to this process, and
/// physical memory (`/proc/meminfo`). Server fields are left empty for the
/// caller; a fact that cannot be read stays empty (or 0) rather than guessed.
pub fn machine_environment() -> Environment {
    let uts = uname();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    Environment {
        host: uts.as_ref().map(|u| u.0.clone()).unwrap_or_default(),
        kernel: uts.as_ref().map(|u| u.1.clone()).unwrap_or_default(),
        cpu_model: cpu_model(&cpuinfo)
            .or_else(|| uts.as_ref().map(|u| u.2.clone()))
            .unwrap_or_default(),
        // Honours CPU affinity and cgroup quotas, i.e. what kvbench can use.
        cores: std::thread::available_parallelism()
            .map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX))
            .unwrap_or(0),
        memory_bytes: mem_total(&meminfo).unwrap_or(0),
        kvbench_version: env!("CARGO_PKG_VERSION").to_string(),
        ..Environment::default()
    }
}

/// This process's own CPU time in seconds (user + system, all threads, live
/// and exited), from `getrusage(RUSAGE_SELF)`, microsecond resolution.
pub fn process_cpu_seconds() -> f64 {
    // SAFETY: rusage is plain data; getrusage writes it fully on success.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a rusage; RUSAGE_SELF cannot fail on Linux.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// (nodename, release, machine).
fn uname() -> Option<(String, String, String)> {
    // SAFETY: utsname is plain data; uname fills it with NUL-terminated strings.
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a utsname.
    if unsafe { libc::uname(&mut uts) } != 0 {
        return None;
    }
    let field = |chars: &[libc::c_char]| {
        // SAFETY: c_char and u8 have the same size; the kernel NUL-terminates
        // and the struct was zeroed, so a NUL is always within the array.
        let bytes = unsafe { std::slice::from_raw_parts(chars.as_ptr().cast::<u8>(), chars.len()) };
        CStr::from_bytes_until_nul(bytes)
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    Some((
        field(&uts.nodename),
        field(&uts.release),
        field(&uts.machine),
    ))
}

/// x86 says `model name`; many ARM kernels say `Hardware` or nothing useful.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Hardware", "cpu model", "Processor"]
        .iter()
        .find_map(|key| {
            cpuinfo.lines().find_map(|line| {
                let (k, v) = line.split_once(':')?;
                (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_string())
            })
        })
}

fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let kib: u64 = words.next()?.parse().ok()?;
    (words.next()? == "kB").then_some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_facts_are_filled() {
        let env = machine_environment();
        assert!(!env.host.is_empty());
        assert!(!env.kernel.is_empty());
        assert!(!env.cpu_model.is_empty());
        assert!(env.cores >= 1);
        assert!(env.memory_bytes > 0);
        assert!(env.server_version.is_empty());
    }

    #[test]
    fn parsers() {
        assert_eq!(
            cpu_model("processor\t: 0\nmodel name\t: Xeon Foo\n").as_deref(),
            Some("Xeon Foo")
        );
        assert_eq!(mem_total("MemTotal:       2048 kB\n"), Some(2048 * 1024));
    }

    #[test]
    fn own_cpu_time_grows() {
        let before = process_cpu_seconds();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(process_cpu_seconds() > before);
    }
}
