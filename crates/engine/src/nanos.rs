//! Instants as nanoseconds on one process-wide scale, converted once per
//! instant.
//!
//! A client keeps its requests' times as nanoseconds since its own base
//! (`Pending`, 8 bytes instead of 16). Converting an `Instant` costs
//! about 45 instructions (`Instant::saturating_duration_since`, then a
//! 128-bit product), and the I/O loop hands every client the same instant
//! for a round: at one request per connection that was three conversions
//! per operation. Here the last instant converted on the thread is
//! remembered, so a round converts each of its instants once.

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::Instant;

/// Where the scale starts: the first instant any thread converted.
/// Earlier instants are negative on it.
static EPOCH: OnceLock<Instant> = OnceLock::new();

thread_local! {
    /// The last instant converted on this thread, and its value.
    static LAST: Cell<Option<(Instant, i64)>> = const { Cell::new(None) };
}

/// `t` in nanoseconds on the process-wide scale.
#[inline]
pub(crate) fn since_epoch(t: Instant) -> i64 {
    LAST.with(|last| match last.get() {
        Some((at, ns)) if at == t => ns,
        _ => {
            let ns = convert(t);
            last.set(Some((t, ns)));
            ns
        }
    })
}

#[cold]
#[inline(never)]
fn convert(t: Instant) -> i64 {
    let epoch = *EPOCH.get_or_init(|| t);
    // 2^63 ns is 292 years: no run's instants are that far apart.
    match t.checked_duration_since(epoch) {
        Some(d) => d.as_nanos() as i64,
        None => -(epoch.duration_since(t).as_nanos() as i64),
    }
}

/// Nanoseconds from `base` to `t` (both on the scale), 0 when `t` is
/// earlier: `Instant::saturating_duration_since`, in nanoseconds.
#[inline]
pub(crate) fn between(base: i64, t: Instant) -> u64 {
    since_epoch(t).saturating_sub(base).max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn differences_are_the_instants_differences_whichever_is_converted_first() {
        let t0 = Instant::now();
        let later = t0 + Duration::from_nanos(1_234_567_891);
        let earlier = t0 - Duration::from_millis(5);
        let (a, b, c) = (since_epoch(later), since_epoch(t0), since_epoch(earlier));
        assert_eq!(a - b, 1_234_567_891);
        assert_eq!(b - c, 5_000_000);
        // Again, each now remembered or converted afresh.
        assert_eq!(since_epoch(t0) - since_epoch(earlier), 5_000_000);
        assert_eq!(between(b, later), 1_234_567_891);
        assert_eq!(between(b, earlier), 0, "an earlier instant saturates at 0");
        assert_eq!(
            between(since_epoch(earlier), t0),
            t0.saturating_duration_since(earlier).as_nanos() as u64
        );
    }

    #[test]
    fn threads_share_the_scale() {
        let t = Instant::now() + Duration::from_secs(3);
        let here = since_epoch(t);
        let there = std::thread::spawn(move || since_epoch(t))
            .join()
            .expect("the thread converts");
        assert_eq!(here, there);
    }
}
