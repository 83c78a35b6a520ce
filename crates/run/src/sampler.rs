//! `--max-memory`: the servers' own counters (memory, items, evictions)
//! read once a second through the window, on a thread beside the phase, so
//! a cache run shows evictions and memory over time, not only at its ends.
//! One INFO (or `stats`) per node per second: the clients' requests are
//! thousands a second, so the sampler's share of the server is negligible.

use crate::inject::Clock;
use kvbench_model::ServerSecond;
use kvbench_servers::Deployment;
use std::thread::{Scope, ScopedJoinHandle};
use std::time::Duration;

/// Starts the sampler in `scope`: a sample at the window's start, one at
/// each whole second after it, and a last one when the phase is over (its
/// window just ended, labelled with the second it ended in). A probe that
/// fails (a node restarting) is skipped, not guessed.
pub fn spawn<'scope, 'env>(
    scope: &'scope Scope<'scope, 'env>,
    server: &'env dyn Deployment,
    clock: &'env Clock,
) -> ScopedJoinHandle<'scope, Vec<ServerSecond>> {
    scope.spawn(move || {
        let mut samples = Vec::new();
        for at_s in 0u32.. {
            let over = clock
                .wait_until(Duration::from_secs(u64::from(at_s)))
                .is_none();
            if over && samples.is_empty() {
                break;
            }
            if let Ok(p) = server.probe("window") {
                samples.push(kvbench_stats::cache::server_second(at_s, &p));
            }
            if over {
                break;
            }
        }
        samples
    })
}
