//! The I/O loop of a client driven through a system's own client library
//! (Aerospike's official crate) instead of kvbench's wire codecs.
//!
//! The rules are the wire clients' (`client.rs`), so numbers compare: at
//! most `pipeline` operations in flight per client; the same sources,
//! schedule, limits and warm-up; an operation is measured when it was due
//! in the window or sent in it, and recorded when its reply arrived before
//! the window's end; closed-loop latency runs from the send, open-loop
//! response time from the intended send (service time and lag apart);
//! inserts are acknowledged whatever their outcome; errors and misses are
//! counted, never timed. The clock is read once when an operation is handed
//! to the library and once when the library hands its result back.
//!
//! Each operation is a task on the worker's single-threaded runtime (the
//! library's calls are futures that own their key and bins); the client's
//! loop waits for the next completion, its next slot, or a tick that looks
//! at the stop flag.

use crate::client::{admit, Admit};
use crate::conn::Shared;
use crate::driver::aerospike::{Done, Model};
use crate::driver::{Driver, Outcome};
use crate::limits;
use crate::phase::Plan;
use crate::recorder::ErrorKind;
use crate::timer::Timer;
use kvbench_model::OpKind;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

/// How often a client with operations in flight looks at the stop flag.
const TICK: Duration = Duration::from_millis(50);

/// One operation handed to the library, and how it ended.
struct Finished {
    kind: OpKind,
    keynum: u64,
    measured: bool,
    intended: Instant,
    sent: Instant,
    arrived: Instant,
    done: Done,
}

/// What every client of a worker shares.
pub(crate) struct Library {
    pub client: Arc<aerospike::Client>,
    pub model: Rc<Model>,
    pub driver: Rc<Driver>,
    pub pipeline: usize,
    pub measure_from: Instant,
}

/// Runs one client until its source, limit or window ends or the stop
/// flag is set; every operation in flight then completes.
pub(crate) async fn run(lib: Rc<Library>, mut plan: Plan, shared: Shared) {
    let mut inflight: JoinSet<Finished> = JoinSet::new();
    let mut timer: Option<Timer> = None;
    let mut sending = true;
    let mut measured_sent = 0u64;
    let mut key = Vec::with_capacity(32);
    // Since when the client has waited with something in flight.
    let mut waiting_since: Option<Instant> = None;
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            sending = false;
        }
        while sending && inflight.len() < lib.pipeline {
            let now = Instant::now();
            let gate = admit(
                plan.schedule.as_ref(),
                plan.limit,
                lib.measure_from,
                measured_sent,
                now,
            );
            let (intended, measured) = match gate {
                Admit::Wait => break,
                Admit::Stop => {
                    sending = false;
                    break;
                }
                Admit::Send { intended, measured } => (intended, measured),
            };
            let Some(op) = plan.source.next_op() else {
                sending = false;
                break;
            };
            lib.driver.write_key(&op, &mut key);
            let request = lib
                .model
                .prepare(lib.driver.records(), &op, &key, plan.source.rng());
            let task = lib.clone();
            let (kind, keynum) = (op.kind, op.keynum);
            inflight.spawn_local(async move {
                let done = match request {
                    Ok(r) => {
                        task.model
                            .execute(&task.client, task.driver.records(), r)
                            .await
                    }
                    Err(why) => Done::Failed(ErrorKind::Protocol, why),
                };
                Finished {
                    kind,
                    keynum,
                    measured,
                    intended,
                    sent: now,
                    arrived: Instant::now(),
                    done,
                }
            });
            waiting_since.get_or_insert(now);
            measured_sent += u64::from(measured);
            if let Some(s) = plan.schedule.as_mut() {
                s.advance();
            }
        }
        if inflight.is_empty() {
            if !sending {
                return;
            }
            // Open loop, nothing in flight: sleep until the next slot.
            if let Some(s) = &plan.schedule {
                let t = s.next();
                timer.get_or_insert_with(Timer::new).sleep_until(t).await;
            }
            continue;
        }
        let slot = plan
            .schedule
            .as_ref()
            .filter(|_| sending && inflight.len() < lib.pipeline)
            .map(|s| s.next());
        let wake = slot.unwrap_or_else(|| Instant::now() + TICK);
        let finished = tokio::select! {
            f = inflight.join_next() => f,
            _ = timer.get_or_insert_with(Timer::new).sleep_until(wake) => None,
        };
        let Some(finished) = finished else {
            continue;
        };
        let f = match finished {
            Ok(f) => f,
            // A panicking library call is a bug: surface it rather than
            // lose its share silently.
            Err(e) => panic!("an aerospike call panicked: {e}"),
        };
        if let Some(since) = waiting_since {
            if f.measured {
                shared
                    .recorder
                    .borrow_mut()
                    .note_wait(f.arrived.saturating_duration_since(since).as_nanos() as u64);
            }
        }
        waiting_since = (!inflight.is_empty()).then_some(f.arrived);
        if f.kind == OpKind::Insert {
            plan.source.acknowledge_insert(f.keynum);
        }
        if !plan.limit.records(f.measured, f.arrived) {
            continue;
        }
        let ok = record(
            &mut shared.recorder.borrow_mut(),
            &f,
            plan.schedule.is_some(),
        );
        if ok {
            shared.progress.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Records a measured operation; true when it completed.
fn record(rec: &mut crate::recorder::Recorder, f: &Finished, scheduled: bool) -> bool {
    let outcome = match &f.done {
        Done::Outcome(o) => *o,
        Done::Failed(kind, message) => {
            rec.record_failure(f.kind, 1, *kind, message, f.arrived);
            return false;
        }
    };
    let since = |t: Instant| f.arrived.saturating_duration_since(t).as_nanos() as u64;
    if scheduled {
        let lag = f.sent.saturating_duration_since(f.intended).as_nanos() as u64;
        rec.record_scheduled(
            f.kind,
            outcome,
            f.intended,
            since(f.intended),
            since(f.sent),
            lag,
            f.arrived,
        );
    } else {
        rec.record(f.kind, outcome, since(f.sent), f.arrived);
    }
    outcome == Outcome::Ok
}

/// Connections one client opens to each node of `system`: one for a wire
/// client (its requests pipelined on it); for a client library, one per
/// operation in flight (`pipeline`), as [`connect`] sizes its pool.
pub fn connections_per_node(system: kvbench_model::SystemKind, pipeline: u32) -> u64 {
    if system.protocol().through_library() {
        u64::from(pipeline.max(1))
    } else {
        1
    }
}

/// The client library's connection to the target, sized so that no
/// operation ever waits for a connection: the crate's pool does not queue
/// (a command finding every connection busy sleeps and retries), so each
/// node gets one connection per operation this worker can have in flight,
/// all opened before the start.
///
/// # Errors
/// A message naming the seeds when the cluster cannot be reached.
pub(crate) async fn connect(
    seeds: &[std::net::SocketAddr],
    access: &kvbench_connect::Access,
    in_flight: usize,
    timeout: Duration,
) -> Result<aerospike::Client, String> {
    let mut policy = aerospike::ClientPolicy::default();
    if let (Some(user), Some(password)) = (&access.user, &access.password) {
        // The library logs in on every connection it opens; the password
        // stays in the policy, never in a message.
        policy.set_auth_mode(aerospike::AuthMode::Internal(
            user.clone(),
            password.expose().to_string(),
        ));
    }
    let conns = in_flight.max(1);
    policy.max_conns_per_node = conns;
    policy.min_conns_per_node = conns;
    policy.timeout = u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX);
    policy.connect_timeout = policy.timeout;
    limits::ensure_open_files(conns as u64 * seeds.len() as u64)?;
    let hosts: Vec<String> = seeds.iter().map(|a| a.to_string()).collect();
    let hosts = hosts.join(",");
    aerospike::Client::new(&policy, &hosts)
        .await
        .map_err(|e| e.to_string().lines().next().unwrap_or_default().to_string())
}

#[cfg(test)]
mod tests {
    use kvbench_model::SystemKind;

    #[test]
    fn a_library_client_opens_a_connection_per_operation_in_flight() {
        assert_eq!(super::connections_per_node(SystemKind::Aerospike, 8), 8);
        assert_eq!(super::connections_per_node(SystemKind::Aerospike, 0), 1);
        for wire in [SystemKind::Redis, SystemKind::Valkey, SystemKind::Memcached] {
            assert_eq!(super::connections_per_node(wire, 8), 1);
        }
    }
}
