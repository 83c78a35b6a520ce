//! Facts about the machine a run used, for the record: a result without
//! its hardware is not comparable to anything.

use kvbench_model::Environment;

/// Host, kernel, CPU model, cores and memory. Server and kvbench fields are
/// left for the caller.
pub fn machine_environment() -> Environment {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default();
    let memory_bytes = read("/proc/meminfo")
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024);
    Environment {
        host: read("/proc/sys/kernel/hostname").trim().to_string(),
        kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
        cpu_model,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        memory_bytes,
        ..Environment::default()
    }
}
