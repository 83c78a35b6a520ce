//! The noise canary: what the machine was doing around a run's window.
//!
//! On a shared VM a block can meet a machine in another state (a
//! neighbour's burst, the hypervisor taking CPUs away, the client and
//! server waking each other across vCPUs). Verdicts pair systems within
//! blocks so such states hit both sides alike; the canary shows the blocks
//! where the machine was unusual, so a reader (and the report) can see what
//! the verdict looks like without them. It reads /proc and getrusage at the
//! window's edges and runs a loopback ping-pong, in bursts over 100 ms,
//! before the run phase; it never talks to a server.

use kvbench_model::Canary;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Machine counters at one instant.
#[derive(Debug, Clone)]
pub struct Snapshot {
    at: Instant,
    /// (steal, iowait, all) jiffies of the `cpu` line of /proc/stat.
    cpu: Option<(u64, u64, u64)>,
    /// kvbench's CPU seconds and involuntary context switches (getrusage).
    own_cpu_s: f64,
    own_involuntary: u64,
    /// Involuntary switches of every thread of the servers.
    server_involuntary: Option<u64>,
}

impl Snapshot {
    /// The counters now; `server_pids` are the local servers' processes
    /// (empty for a target).
    pub fn take(server_pids: &[u32]) -> Snapshot {
        // SAFETY: getrusage fills the struct it is given.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: a valid pointer to a zeroed rusage.
        let ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } == 0;
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Snapshot {
            at: Instant::now(),
            cpu: std::fs::read_to_string("/proc/stat")
                .ok()
                .and_then(|t| cpu_line(&t)),
            own_cpu_s: if ok {
                secs(ru.ru_utime) + secs(ru.ru_stime)
            } else {
                0.0
            },
            own_involuntary: if ok { ru.ru_nivcsw as u64 } else { 0 },
            server_involuntary: (!server_pids.is_empty())
                .then(|| server_pids.iter().map(|&p| involuntary(p)).sum()),
        }
    }

    /// The canary of the time from `self` to `end`, with the base round
    /// trip measured before it.
    pub fn until(&self, end: &Snapshot, base_rtt_us: Option<f64>) -> Canary {
        let wall = end.at.duration_since(self.at).as_secs_f64().max(1e-9);
        let (steal, iowait) = match (self.cpu, end.cpu) {
            (Some((s0, w0, a0)), Some((s1, w1, a1))) if a1 > a0 => {
                let all = (a1 - a0) as f64;
                (
                    s1.saturating_sub(s0) as f64 / all,
                    w1.saturating_sub(w0) as f64 / all,
                )
            }
            _ => (0.0, 0.0),
        };
        Canary {
            steal,
            iowait,
            client_cpu_per_wall: (end.own_cpu_s - self.own_cpu_s).max(0.0) / wall,
            client_involuntary_per_s: end.own_involuntary.saturating_sub(self.own_involuntary)
                as f64
                / wall,
            server_involuntary_per_s: match (self.server_involuntary, end.server_involuntary) {
                (Some(a), Some(b)) => Some(b.saturating_sub(a) as f64 / wall),
                _ => None,
            },
            base_rtt_us,
        }
    }
}

/// (steal, iowait, all) from /proc/stat's first line: `cpu user nice
/// system idle iowait irq softirq steal ...`.
fn cpu_line(stat: &str) -> Option<(u64, u64, u64)> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // guest and guest_nice are already counted in user and nice.
    let all: u64 = v.iter().take(8).sum();
    Some((*v.get(7)?, *v.get(4)?, all))
}

/// Involuntary context switches of every thread of `pid` (0 when gone).
fn involuntary(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("status")).ok())
        .filter_map(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("nonvoluntary_ctxt_switches:"))
                .and_then(|v| v.trim().parse::<u64>().ok())
        })
        .sum()
}

/// Round trips in one burst of the ping-pong; the first of each warms the
/// two threads and is not kept.
const BURST: usize = 10;
/// Bursts spread over the canary's span.
const BURSTS: u32 = 10;

/// The median round trip (microseconds) of a 1-byte ping-pong over a
/// loopback TCP connection: the floor any request on this machine pays
/// now. `None` when loopback cannot be used.
///
/// The round trips come in [`BURSTS`] bursts of [`BURST`] spread over
/// `span`, so the figure samples the machine across the whole span while
/// costing a few milliseconds of CPU: a continuous ping-pong for 100 ms
/// cost kvbench 70-90 ms of CPU per cell (both threads busy), about 7% of
/// the CPU of a whole 2,000,000-operation run in bench/efficiency case (c).
/// Within a burst the threads are awake, as in a continuous ping-pong, so
/// the median is the same hot floor.
pub fn base_rtt(span: Duration) -> Option<f64> {
    let listener = TcpListener::bind("127.0.0.1:0").ok()?;
    let addr = listener.local_addr().ok()?;
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        let (mut s, _) = listener.accept()?;
        s.set_nodelay(true)?;
        let mut b = [0u8; 1];
        while s.read(&mut b)? == 1 {
            s.write_all(&b)?;
        }
        Ok(())
    });
    let mut rtts = Vec::with_capacity(BURST * BURSTS as usize);
    if let Ok(mut c) = TcpStream::connect(addr) {
        let _ = c.set_nodelay(true);
        let _ = c.set_read_timeout(Some(Duration::from_secs(1)));
        let start = Instant::now();
        let mut b = [7u8; 1];
        'bursts: for burst in 0..BURSTS {
            // Each burst at its share of the span (late ones start at once).
            let due = start + span * burst / BURSTS;
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            for trip in 0..BURST {
                let t = Instant::now();
                if c.write_all(&b).is_err() || c.read_exact(&mut b).is_err() {
                    break 'bursts;
                }
                if trip > 0 {
                    rtts.push(t.elapsed().as_secs_f64() * 1e6);
                }
            }
        }
    }
    // Closing the client ends the echo thread's loop.
    let _ = echo.join();
    if rtts.is_empty() {
        return None;
    }
    rtts.sort_by(f64::total_cmp);
    Some(rtts[rtts.len() / 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_line_gives_steal_iowait_and_the_total() {
        let stat = "cpu  100 5 50 800 20 1 2 22 0 0\ncpu0 50 2 25 400 10 0 1 11 0 0\n";
        assert_eq!(cpu_line(stat), Some((22, 20, 1000)));
        assert_eq!(cpu_line("intr 1 2\n"), None);
    }

    #[test]
    fn a_busy_window_shows_in_the_canary() {
        let a = Snapshot::take(&[std::process::id()]);
        // Burn about 100 ms of CPU.
        let t = Instant::now();
        let mut x = 0u64;
        while t.elapsed() < Duration::from_millis(100) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let b = Snapshot::take(&[std::process::id()]);
        let c = a.until(&b, None);
        assert!(c.client_cpu_per_wall > 0.5, "{c:?}");
        assert!((0.0..=1.0).contains(&c.steal) && (0.0..=1.0).contains(&c.iowait));
        assert!(c.server_involuntary_per_s.is_some());
    }

    #[test]
    fn the_base_round_trip_is_a_loopback_floor() {
        let rtt = base_rtt(Duration::from_millis(50)).expect("loopback works");
        // Microseconds to a few milliseconds on any machine.
        assert!(rtt > 0.5 && rtt < 5_000.0, "{rtt}");
    }
}
