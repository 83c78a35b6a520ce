//! The rate search, apart from running anything: given a probe that says
//! whether a rate met the objective, find the highest rate that did, to a
//! relative precision, and say why the search ended.
//!
//! Expand by doubling (or halving) until one rate passes and a higher one
//! fails, then bisect geometrically (rates span orders of magnitude, so
//! the midpoint of a ratio is the geometric one). On a shared machine one
//! probe is a sample, not a verdict: a stall can fail a rate well below the
//! limit, and luck can pass one above it. So a rate's verdict is the
//! majority of its probes (a tie is probed again), and the search ends only
//! when the rate found has passed twice and the failing rate within the
//! precision above it has failed twice; either may take a third probe.

/// Why the search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// A passing rate and a failing one within the precision, each
    /// confirmed by a second probe.
    Converged,
    /// Even the highest rate allowed (`--max-rate`) passed.
    MaxRate,
    /// Even the lowest rate allowed (`--min-rate`) failed.
    MinRate,
    /// The step limit was reached first.
    Steps,
}

impl Stop {
    /// Why the search ended, in a sentence.
    pub fn explain(self) -> &'static str {
        match self {
            Stop::Converged => "converged: the rate found met the objective in two probes, and a rate within the precision above it failed in two",
            Stop::MaxRate => "stopped at --max-rate, which still met the objective: the limit is higher",
            Stop::MinRate => "stopped at --min-rate, which did not meet the objective: no rate tried did",
            Stop::Steps => "stopped after --max-steps steps before converging",
        }
    }
}

/// How the search went.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The highest rate that passed and never failed (`None`: none did).
    pub best: Option<f64>,
    /// The lowest rate that failed (`None`: none did).
    pub lowest_failure: Option<f64>,
    /// Why the search ended.
    pub stop: Stop,
    /// Each probed rate and whether it passed, in order.
    pub steps: Vec<(f64, bool)>,
}

/// Limits of the search.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// The first rate probed.
    pub start: f64,
    /// The lowest rate the search may probe.
    pub min: f64,
    /// The highest rate the search may probe.
    pub max: f64,
    /// Converged when the lowest failure is at most this much above the best.
    pub precision: f64,
    /// The most probes.
    pub max_steps: usize,
}

/// Searches with `probe(rate) -> passed`; a probe error ends the search
/// with that error (an interrupted or failed run).
pub fn search<E>(b: Bounds, mut probe: impl FnMut(f64) -> Result<bool, E>) -> Result<Outcome, E> {
    let mut steps: Vec<(f64, bool)> = Vec::new();
    let mut rate = b.start.clamp(b.min, b.max);
    loop {
        if steps.len() >= b.max_steps {
            return Ok(outcome(steps, Stop::Steps));
        }
        let passed = probe(rate)?;
        steps.push((rate, passed));
        if let Some(t) = tied(&steps) {
            rate = t;
            continue;
        }
        let (best, fail) = state(&steps);
        let count = |r: f64, outcome: bool| steps.iter().filter(|s| *s == &(r, outcome)).count();
        rate = match (best, fail) {
            (Some(l), None) if l >= b.max => return Ok(outcome(steps, Stop::MaxRate)),
            (Some(l), None) => (l * 2.0).min(b.max),
            (None, Some(h)) if h <= b.min => return Ok(outcome(steps, Stop::MinRate)),
            (None, Some(h)) => (h / 2.0).max(b.min),
            (Some(l), Some(h)) if h <= l * (1.0 + b.precision) => {
                if count(l, true) < 2 {
                    l
                } else if count(h, false) < 2 {
                    h
                } else {
                    return Ok(outcome(steps, Stop::Converged));
                }
            }
            (Some(l), Some(h)) => (l * h).sqrt(),
            (None, None) => unreachable!("a step was just taken"),
        };
    }
}

/// The majority of a rate's probes; `None` for a tie.
fn verdict(steps: &[(f64, bool)], rate: f64) -> Option<bool> {
    let (pass, fail) = steps
        .iter()
        .filter(|s| s.0 == rate)
        .fold(
            (0, 0),
            |(p, f), s| if s.1 { (p + 1, f) } else { (p, f + 1) },
        );
    (pass != fail).then_some(pass > fail)
}

/// A rate whose probes are tied, to be probed again.
fn tied(steps: &[(f64, bool)]) -> Option<f64> {
    steps
        .iter()
        .map(|s| s.0)
        .find(|&r| verdict(steps, r).is_none())
}

/// The lowest rate whose verdict is a failure, and the highest rate below
/// it whose verdict is a pass.
fn state(steps: &[(f64, bool)]) -> (Option<f64>, Option<f64>) {
    let judged = || steps.iter().map(|s| (s.0, verdict(steps, s.0)));
    let fail = judged()
        .filter(|s| s.1 == Some(false))
        .map(|s| s.0)
        .min_by(f64::total_cmp);
    let best = judged()
        .filter(|s| s.1 == Some(true) && !fail.is_some_and(|f| s.0 >= f))
        .map(|s| s.0)
        .max_by(f64::total_cmp);
    (best, fail)
}

fn outcome(steps: Vec<(f64, bool)>, stop: Stop) -> Outcome {
    let (best, lowest_failure) = state(&steps);
    Outcome {
        best,
        lowest_failure,
        stop,
        steps,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds() -> Bounds {
        Bounds {
            start: 1000.0,
            min: 10.0,
            max: 1e7,
            precision: 0.05,
            max_steps: 40,
        }
    }

    fn run(b: Bounds, capacity: f64) -> Outcome {
        search(b, |r| Ok::<bool, ()>(r <= capacity)).expect("no errors")
    }

    #[test]
    fn converges_below_the_capacity_within_the_precision() {
        for capacity in [37_000.0, 1_500.0, 999.0, 12.5] {
            let o = run(bounds(), capacity);
            assert_eq!(o.stop, Stop::Converged, "{capacity}: {o:?}");
            let best = o.best.expect("a passing rate");
            let fail = o.lowest_failure.expect("a failing rate");
            assert!(best <= capacity && fail > capacity, "{o:?}");
            assert!(fail <= best * 1.05, "{o:?}");
            // A rate 10% above the result is above a rate that failed.
            assert!(best * 1.1 > fail);
            let probes = |r: f64| o.steps.iter().filter(|s| s.0 == r).count();
            assert_eq!((probes(best), probes(fail)), (2, 2), "confirmed: {o:?}");
        }
    }

    #[test]
    fn says_when_the_bounds_stopped_it() {
        let o = run(bounds(), 1e9);
        assert_eq!((o.stop, o.best), (Stop::MaxRate, Some(1e7)));
        let o = run(bounds(), 1.0);
        assert_eq!((o.stop, o.best), (Stop::MinRate, None));
        let few = Bounds {
            max_steps: 3,
            ..bounds()
        };
        assert_eq!(run(few, 37_000.0).stop, Stop::Steps);
    }

    #[test]
    fn a_confirmation_that_fails_moves_the_result_down() {
        // The first probe at each rate near the edge passes by luck; every
        // later one at or above 30,000 fails.
        let mut seen = std::collections::HashMap::new();
        let o = search(bounds(), |r: f64| {
            let n = seen.entry(r.to_bits()).or_insert(0);
            *n += 1;
            Ok::<bool, ()>(r < 30_000.0 || (*n == 1 && r < 33_000.0))
        })
        .expect("no errors");
        assert_eq!(o.stop, Stop::Converged);
        let best = o.best.expect("best");
        assert!(best < 30_000.0, "{o:?}");
    }

    #[test]
    fn a_stall_far_below_the_limit_does_not_end_the_search_there() {
        // One probe at 8,000 fails (a stall); the limit is 40,000.
        let mut stalled = false;
        let o = search(bounds(), |r: f64| {
            let stall = !stalled && r > 7_000.0 && r < 9_000.0;
            stalled |= stall;
            Ok::<bool, ()>(!stall && r <= 40_000.0)
        })
        .expect("no errors");
        assert!(stalled, "the stall happened: {o:?}");
        assert_eq!(o.stop, Stop::Converged);
        assert!(o.best.expect("best") > 38_000.0, "{o:?}");
    }

    #[test]
    fn a_probe_error_ends_the_search() {
        let r = search(
            bounds(),
            |r| if r > 3000.0 { Err("stopped") } else { Ok(true) },
        );
        assert_eq!(r, Err("stopped"));
    }
}
