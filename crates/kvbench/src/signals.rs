//! What SIGINT, SIGTERM and SIGHUP do. The first stops the run: its window
//! ends, the servers stop, and the run is saved with what it measured
//! (marked partial). A repeat within [`SAME_STOP`] is that same stop
//! delivered twice (`timeout` signals kvbench and then its process group).
//! A later second one is a person in a hurry: the servers are killed at
//! once, so the run ends now, and it still gets [`SAVE_GRACE`] to be saved
//! before kvbench exits. A third exits at once. Every run already saved
//! stays saved: each is its own committed transaction.

use crate::exit;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Signals this close to the first are the same stop.
const SAME_STOP: Duration = Duration::from_millis(500);
/// After a second stop, how long the run has to be saved.
pub const SAVE_GRACE: Duration = Duration::from_secs(5);

/// The stop flag, for code that runs before any server or run exists.
static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Installs the handler; `stop` is set by the first signal.
pub fn install(stop: Arc<AtomicBool>) {
    let _ = STOP.set(stop.clone());
    let first = OnceLock::new();
    let count = AtomicU8::new(0);
    let _ = ctrlc::set_handler(move || {
        if !stop.swap(true, Ordering::SeqCst) {
            let _ = first.set(Instant::now());
            count.store(1, Ordering::SeqCst);
            return;
        }
        if first
            .get()
            .is_some_and(|t: &Instant| t.elapsed() < SAME_STOP)
        {
            return;
        }
        match count.fetch_add(1, Ordering::SeqCst) {
            1 => {
                eprintln!(
                    "kvbench: stopping now: servers killed; the run is saved within {} s (again to exit at once)",
                    SAVE_GRACE.as_secs()
                );
                kvbench_servers::workdir::kill_own();
                // The handler thread must stay free for a third signal.
                std::thread::spawn(|| {
                    std::thread::sleep(SAVE_GRACE);
                    leave();
                });
            }
            _ => leave(),
        }
    });
}

/// Where nothing runs yet and nothing is to be saved (expanding or
/// planning an experiment): after a stop, exits at once with code 130 and
/// one line saying what was stopped, instead of finishing first.
pub fn leave_if_stopped(what: &str) {
    if STOP.get().is_some_and(|s| s.load(Ordering::Relaxed)) {
        eprintln!("kvbench: interrupted while {what}; nothing was run or stored");
        leave();
    }
}

/// Exits without destructors: the network namespaces (--netns) and the
/// servers' directories, which would outlive us, go first; the servers die
/// with us through PR_SET_PDEATHSIG.
fn leave() -> ! {
    kvbench_servers::netns::remove_own();
    kvbench_servers::workdir::remove_own();
    std::process::exit(i32::from(exit::INTERRUPTED));
}
