//! `--fault`: each fault is caused at its instant of the window, on a
//! thread of its own, beside the phase (a restart blocks until the server
//! answers again; the clients meanwhile see what clients see). A fault
//! whose instant the window never reaches (it ended early) is recorded as
//! not caused. The faults are independent: two on one node at once are
//! the user's to avoid.

use kvbench_model::InjectedFault;
use kvbench_servers::fault::{self, Fault};
use kvbench_servers::{Deployment, Network};
use std::sync::{Condvar, Mutex, PoisonError};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

/// The window's start, as the phase reports it, and its end.
#[derive(Default)]
pub struct Clock {
    state: Mutex<(Option<Instant>, bool)>,
    changed: Condvar,
}

impl Clock {
    /// The measured window starts now.
    pub fn window_started(&self) {
        self.set(|s| s.0 = Some(Instant::now()));
    }

    /// The phase is over: faults not yet caused will not be.
    pub fn over(&self) {
        self.set(|s| s.1 = true);
    }

    fn set(&self, f: impl FnOnce(&mut (Option<Instant>, bool))) {
        f(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner));
        self.changed.notify_all();
    }

    /// Blocks until `at` after the window's start; the start, or `None`
    /// when the phase ended first.
    pub(crate) fn wait_until(&self, at: Duration) -> Option<Instant> {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if s.1 {
                return None;
            }
            let wait = match s.0 {
                Some(start) if Instant::now() >= start + at => return Some(start),
                Some(start) => (start + at).saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            s = self
                .changed
                .wait_timeout(s, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// Starts one thread per fault in `scope`; each returns what came of it.
pub fn spawn_all<'scope, 'env>(
    scope: &'scope Scope<'scope, 'env>,
    server: &'env dyn Deployment,
    network: Option<&'env Network>,
    faults: &'env [Fault],
    clock: &'env Clock,
) -> Vec<ScopedJoinHandle<'scope, InjectedFault>> {
    faults
        .iter()
        .map(|f| scope.spawn(move || cause_when_due(server, network, f, clock)))
        .collect()
}

fn cause_when_due(
    server: &dyn Deployment,
    network: Option<&Network>,
    f: &Fault,
    clock: &Clock,
) -> InjectedFault {
    let Some(start) = clock.wait_until(f.at) else {
        return InjectedFault {
            spec: f.to_string(),
            target: String::new(),
            at_s: f.at.as_secs_f64(),
            lasted_s: None,
            error: Some("the window ended before it was due".into()),
        };
    };
    let at = start.elapsed();
    let caused = fault::cause(server, network, f);
    InjectedFault {
        spec: f.to_string(),
        target: caused.target,
        at_s: at.as_secs_f64(),
        lasted_s: caused.lasted.map(|d| d.as_secs_f64()),
        error: caused.error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_waits_for_the_window_and_not_past_its_end() {
        let clock = Clock::default();
        std::thread::scope(|s| {
            let due = s.spawn(|| clock.wait_until(Duration::from_millis(50)));
            let never = s.spawn(|| clock.wait_until(Duration::from_secs(60)));
            std::thread::sleep(Duration::from_millis(20));
            let t0 = Instant::now();
            clock.window_started();
            let start = due.join().expect("joins").expect("caused");
            assert!(start.elapsed() >= Duration::from_millis(50));
            assert!(start >= t0);
            clock.over();
            assert_eq!(never.join().expect("joins"), None);
        });
    }
}
