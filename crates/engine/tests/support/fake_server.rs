//! A RESP server that answers every command with `+OK` after a fixed delay,
//! one command at a time, to check what the engine measures when replies
//! are slow. It complements the real servers (delays, faults); it never
//! replaces them.

use kvbench_proto::resp;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub struct SlowServer {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl SlowServer {
    /// Serves one connection at a time on 127.0.0.1, replying `+OK` to each
    /// command `delay` after it has been read or after the reply before it,
    /// whichever is later.
    pub fn start(delay: Duration) -> SlowServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        listener.set_nonblocking(true).expect("nonblocking");
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                let Ok((mut sock, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                let _ = sock.set_nonblocking(false);
                let _ = sock.set_read_timeout(Some(Duration::from_millis(200)));
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                // Replies are due at fixed instants (a command's reply
                // `delay` after the later of its arrival and the previous
                // reply), so a sleep that overshoots, or a descheduled
                // server thread, delays one reply and not every later one.
                let mut due = Instant::now();
                while !flag.load(Ordering::Relaxed) {
                    let arrived = match sock.read(&mut chunk) {
                        Ok(0) => break,
                        Ok(n) => {
                            buf.extend_from_slice(&chunk[..n]);
                            Instant::now()
                        }
                        Err(_) => continue,
                    };
                    while let Ok(Some((_, used))) = resp::parse_value(&buf) {
                        buf.drain(..used);
                        due = due.max(arrived) + delay;
                        std::thread::sleep(due.saturating_duration_since(Instant::now()));
                        if sock.write_all(b"+OK\r\n").is_err() {
                            break;
                        }
                    }
                }
            }
        });
        SlowServer {
            addr,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for SlowServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Runs a timing check up to `attempts` times and passes on the first
/// attempt that holds. On this shared 2-core machine a thread is sometimes
/// descheduled for tens of milliseconds, which shifts a few replies of one
/// attempt; what these checks catch (a batch timed as one, a per-request
/// time off by a whole step) fails every attempt alike.
pub fn within_attempts(attempts: u32, mut check: impl FnMut() -> Result<(), String>) {
    let mut failures = Vec::new();
    for _ in 0..attempts {
        match check() {
            Ok(()) => return,
            Err(e) => failures.push(e),
        }
    }
    panic!("failed {attempts} attempts:\n{}", failures.join("\n"));
}
