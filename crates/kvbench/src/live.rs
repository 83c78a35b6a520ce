//! The live view of a command that runs cells: the progress bars, one line
//! per second of each measured window, and the `--metrics-listen` figures.
//!
//! - Bars (an overall bar over the cells with its ETA, and one per phase)
//!   are drawn only when stderr is a terminal, and never with `--quiet`.
//! - The per-second lines go to stderr unless `--quiet`: above the bars on
//!   a terminal, and also when stderr is a file or a pipe, since the log of
//!   a long experiment is where one looks for a stall afterwards.
//! - The metrics endpoint, when asked for, is served with or without
//!   `--quiet`.
//!
//! Everything here runs on the thread that runs the cells (the engine calls
//! its observer from there), so plain cells suffice; only the metrics
//! snapshot is shared, with the thread that answers scrapes.

use crate::metrics::{CellLabels, Metrics, State};
use crate::progress::PhaseBar;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use kvbench_engine::{Observer, Progress, SecondStats};
use kvbench_report::format;
use kvbench_run::settings::RunSettings;
use kvbench_run::view::{Phase, View};
use std::cell::RefCell;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// The live view of one command.
pub struct Live {
    quiet: bool,
    multi: MultiProgress,
    overall: RefCell<Option<Overall>>,
    metrics: Option<Metrics>,
}

/// The overall bar: its position is the time spent so far and its length
/// that plus the time left, so the bar moves during a cell and its ETA is
/// the estimate of what is left (not a rate extrapolated from finished
/// cells, which a few long cells would throw off).
struct Overall {
    bar: ProgressBar,
    started: Instant,
    /// Each cell's estimate, in the order they run.
    estimates: Vec<Duration>,
    /// The cell running (index into `estimates`), and when it started.
    current: Option<(usize, Instant)>,
    /// What is left of the current cell, as its run phase knows it.
    known: Option<(Instant, Duration)>,
    /// Cells counted in the header line: those to run.
    finished: usize,
}

impl Overall {
    /// Estimated time until the last cell is done.
    fn left(&self, now: Instant) -> Duration {
        let (index, current) = match self.current {
            Some((i, since)) => {
                let cur = match self.known {
                    Some((at, left)) => left.saturating_sub(now.saturating_duration_since(at)),
                    None => self.estimates[i].saturating_sub(now.saturating_duration_since(since)),
                };
                (i + 1, cur)
            }
            None => (self.finished, Duration::ZERO),
        };
        current + self.estimates.iter().skip(index).sum::<Duration>()
    }

    fn refresh(&self, now: Instant) -> Duration {
        let left = self.left(now);
        let spent = now.saturating_duration_since(self.started).as_millis() as u64;
        self.bar.set_length(spent + left.as_millis() as u64);
        self.bar.set_position(spent);
        left
    }
}

impl Live {
    /// The live view: bars unless `quiet` or stderr is not a terminal,
    /// per-second lines unless `quiet`, the endpoint when given.
    pub fn new(quiet: bool, metrics: Option<Metrics>) -> Live {
        let target = if quiet || !std::io::stderr().is_terminal() {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr_with_hz(10)
        };
        if let (Some(m), false) = (&metrics, quiet) {
            eprintln!("metrics: http://{}/metrics", m.addr());
        }
        Live {
            quiet,
            multi: MultiProgress::with_draw_target(target),
            overall: RefCell::new(None),
            metrics,
        }
    }

    /// `--metrics-listen ADDR` when given: binds before anything starts.
    ///
    /// # Errors
    /// Bad input naming the flag (see [`Metrics::listen`]).
    pub fn listen(addr: Option<&str>) -> Result<Option<Metrics>, crate::exit::UsageError> {
        addr.map(Metrics::listen).transpose()
    }

    pub fn quiet(&self) -> bool {
        self.quiet
    }

    fn bars(&self) -> bool {
        !self.multi.is_hidden()
    }

    /// A line on stderr, above the bars when they are drawn.
    pub fn println(&self, line: &str) {
        if self.bars() {
            let _ = self.multi.println(line);
        } else {
            eprintln!("{line}");
        }
    }

    /// The cells this command runs: `estimates` of those still to run (in
    /// order), `done` of `total` already stored. Draws the overall bar.
    pub fn plan(&self, estimates: &[f64], done: usize, total: usize) {
        let bar = if self.bars() {
            let style = ProgressStyle::with_template("cells {msg} [{bar:30}] ETA {left}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .with_key("left", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let left = s.len().unwrap_or(0).saturating_sub(s.pos());
                    let _ = w.write_str(&duration_text(left as f64 / 1e3));
                })
                .progress_chars("=> ");
            let b = self.multi.add(ProgressBar::new(1));
            b.set_style(style);
            b
        } else {
            ProgressBar::hidden()
        };
        let overall = Overall {
            bar,
            started: Instant::now(),
            estimates: estimates
                .iter()
                .map(|&s| Duration::from_secs_f64(s.max(0.0)))
                .collect(),
            current: None,
            known: None,
            finished: 0,
        };
        let left = overall.refresh(Instant::now());
        *self.overall.borrow_mut() = Some(overall);
        if let Some(m) = &self.metrics {
            let mut s = m.lock();
            s.cells = total as u64;
            s.cells_done = done as u64;
            s.eta_s = Some(left.as_secs_f64());
        }
    }

    /// Cell `index` (0-based, of those to run) starts; `what` names it.
    /// Without [`Live::plan`] (findmax: the steps are not known ahead) it
    /// only counts the cell.
    pub fn begin_cell(&self, index: usize, what: &str) {
        if let Some(m) = &self.metrics {
            let mut s = m.lock();
            s.cells = s.cells.max(s.cells_done + 1);
        }
        let mut o = self.overall.borrow_mut();
        let Some(o) = o.as_mut() else { return };
        let n = o.estimates.len();
        o.current = Some((index.min(n.saturating_sub(1)), Instant::now()));
        o.known = None;
        o.bar.set_message(format!("{}/{n} {what}", index + 1));
        o.refresh(Instant::now());
        if !self.quiet {
            self.println(&format!("cell {}/{n}: {what}", index + 1));
        }
    }

    /// The current cell is done (stored, whatever its status).
    pub fn end_cell(&self) {
        let mut o = self.overall.borrow_mut();
        let left = o.as_mut().map(|o| {
            if let Some((i, _)) = o.current.take() {
                o.finished = i + 1;
            }
            o.known = None;
            o.refresh(Instant::now())
        });
        if let Some(m) = &self.metrics {
            let mut s = m.lock();
            s.cells_done += 1;
            s.state = State::Idle;
            s.eta_s = left.map(|l| l.as_secs_f64());
        }
    }

    /// Clears the bars.
    pub fn finish(&self) {
        let overall = self.overall.borrow_mut().take();
        if let Some(m) = &self.metrics {
            let mut s = m.lock();
            s.state = State::Idle;
            s.eta_s = overall.as_ref().map(|_| 0.0);
        }
        if let Some(o) = overall {
            o.bar.finish_and_clear();
        }
    }

    fn set_state(&self, state: State) {
        if let Some(m) = &self.metrics {
            m.lock().state = state;
        }
    }

    fn progress(&self, p: &Progress, run: bool) {
        let now = Instant::now();
        let mut eta = None;
        if let Some(o) = self.overall.borrow_mut().as_mut() {
            if run {
                o.known = phase_left(p).map(|left| (now, left));
            }
            eta = Some(o.refresh(now));
        }
        if let Some(m) = &self.metrics {
            let mut s = m.lock();
            if run {
                s.completed = p.completed;
            }
            if let Some(eta) = eta {
                s.eta_s = Some(eta.as_secs_f64());
            }
        }
    }

    fn second(&self, s: &SecondStats) {
        if !self.quiet {
            self.println(&second_line(s));
        }
        if let Some(m) = &self.metrics {
            let mut snap = m.lock();
            snap.errors += s.errors;
            snap.second = Some(s.clone());
        }
    }
}

/// What is left of a run phase: exact for a time-bound window, else from
/// the rate so far; `None` before anything was measured.
fn phase_left(p: &Progress) -> Option<Duration> {
    if let Some(window) = p.window {
        return Some((p.warmup + window).saturating_sub(p.elapsed));
    }
    let total = p.total?;
    let measured = p.elapsed.checked_sub(p.warmup)?.as_secs_f64();
    if p.completed == 0 || measured <= 0.0 {
        return None;
    }
    let rate = p.completed as f64 / measured;
    Some(Duration::from_secs_f64(
        total.saturating_sub(p.completed) as f64 / rate,
    ))
}

/// `  run 3s  41,230 ops/s  p50 112 us  p99 480 us  errors 0`: the window's
/// second ending at 3 s (a last, shorter second ends at the window's end).
pub fn second_line(s: &SecondStats) -> String {
    let end = f64::from(s.second) + s.length_s;
    let at = if (end - end.round()).abs() < 1e-9 {
        format!("{end:.0}s")
    } else {
        // A short last part must not read as a whole second ("1.0s" after
        // "1s"): as few decimals as keep it off the whole number.
        (1..=6)
            .map(|d| format!("{end:.d$}s"))
            .find(|t| !t.trim_end_matches('s').trim_end_matches('0').ends_with('.'))
            .unwrap_or_else(|| format!("{end:.6}s"))
    };
    format!(
        "  run {at}  {} ops/s  p50 {} us  p99 {} us  errors {}",
        format::rate(s.throughput()),
        format::micros(s.p50_us),
        format::micros(s.p99_us),
        format::count(s.errors)
    )
}

/// The observer of one phase: its bar, the per-second lines, the metrics.
struct PhaseView<'a> {
    live: &'a Live,
    bar: PhaseBar,
    run: bool,
}

impl Phase for PhaseView<'_> {
    /// Clears the phase's bar.
    fn finish(&self) {
        self.bar.finish();
        self.live.set_state(State::Idle);
    }
}

/// The per-cell sequence (`kvbench_run`) shows its cells and phases here.
impl View for Live {
    /// A cell with settings `s` starts (its servers, then its phases).
    /// The metrics name it by `tag` (an experiment's cell index from 0 and
    /// iteration), else by its place among the command's cells from 0.
    fn cell(&self, s: &RunSettings, tag: Option<(u32, u32)>) {
        let (cell, iteration) = tag.unwrap_or_else(|| {
            let place = self
                .overall
                .borrow()
                .as_ref()
                .and_then(|o| o.current)
                .map_or(0, |(i, _)| i as u32);
            (place, 1)
        });
        if let Some(m) = &self.metrics {
            let mut snap = m.lock();
            snap.cell = Some(CellLabels {
                system: s.system.to_string(),
                workload: s.spec.name.clone(),
                topology: s.topology.to_string(),
                clients: s.clients,
                pipeline: s.pipeline,
                cell: cell.to_string(),
                iteration,
            });
            snap.state = State::Starting;
            snap.second = None;
            snap.completed = 0;
            snap.errors = 0;
        }
    }

    /// The observer of one phase: `run` for the run phase (its seconds are
    /// shown), else the load phase.
    fn phase(&self, run: bool) -> Box<dyn Phase + '_> {
        self.set_state(State::Starting);
        let label = if run { "run" } else { "load" };
        let bar = PhaseBar::new(label, &self.multi);
        Box::new(PhaseView {
            live: self,
            bar,
            run,
        })
    }

    fn quiet(&self) -> bool {
        Live::quiet(self)
    }
    fn println(&self, line: &str) {
        Live::println(self, line);
    }
    fn plan(&self, estimates: &[f64], done: usize, total: usize) {
        Live::plan(self, estimates, done, total);
    }
    fn begin_cell(&self, index: usize, what: &str) {
        Live::begin_cell(self, index, what);
    }
    fn end_cell(&self) {
        Live::end_cell(self);
    }
    fn finish(&self) {
        Live::finish(self);
    }
}

impl Observer for PhaseView<'_> {
    fn started(&self) {
        self.bar.started();
        self.live.set_state(if self.run {
            State::Warmup
        } else {
            State::Loading
        });
    }
    fn window_started(&self) {
        self.bar.window_started();
        if self.run {
            self.live.set_state(State::Measuring);
        }
    }
    fn progress(&self, p: &Progress) {
        self.bar.progress(p);
        self.live.progress(p, self.run);
    }
    fn second(&self, s: &SecondStats) {
        if self.run {
            self.live.second(s);
        }
    }
}

pub use kvbench_report::format::duration_text;

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(second: u32, length_s: f64, completed: u64) -> SecondStats {
        SecondStats {
            second,
            length_s,
            completed,
            errors: 1234,
            p50_us: 41.26,
            p99_us: 1480.4,
            ops: Vec::new(),
        }
    }

    #[test]
    fn a_second_reads_as_one_line() {
        assert_eq!(
            second_line(&stats(2, 1.0, 41_230)),
            "  run 3s  41,230 ops/s  p50 41.3 us  p99 1,480 us  errors 1,234"
        );
        // The last half second of a 2.5 s window: its rate, not its count.
        assert_eq!(
            second_line(&stats(2, 0.5, 500)),
            "  run 2.5s  1,000 ops/s  p50 41.3 us  p99 1,480 us  errors 1,234"
        );
        // A window ending 40 ms past a whole second is not "2.0s".
        assert!(second_line(&stats(2, 0.04, 40)).starts_with("  run 2.04s  1,000 ops/s"));
        assert!(second_line(&stats(2, 0.0004, 4)).starts_with("  run 2.0004s"));
    }

    #[test]
    fn what_is_left_of_a_run_phase() {
        let p = Progress {
            completed: 300,
            total: None,
            elapsed: Duration::from_secs(3),
            warmup: Duration::from_secs(1),
            window: Some(Duration::from_secs(10)),
        };
        assert_eq!(phase_left(&p), Some(Duration::from_secs(8)));
        let ops = Progress {
            total: Some(1000),
            window: None,
            ..p
        };
        // 300 in 2 s measured: 700 more take 4.67 s.
        let left = phase_left(&ops).unwrap().as_secs_f64();
        assert!((left - 14.0 / 3.0).abs() < 1e-6, "{left}");
        let warming = Progress {
            elapsed: Duration::from_millis(500),
            ..ops
        };
        assert_eq!(phase_left(&warming), None);
    }

    #[test]
    fn the_overall_estimate_moves_during_a_cell() {
        let t0 = Instant::now();
        let mut o = Overall {
            bar: ProgressBar::hidden(),
            started: t0,
            estimates: vec![Duration::from_secs(10), Duration::from_secs(20)],
            current: Some((0, t0)),
            known: None,
            finished: 0,
        };
        assert_eq!(o.left(t0), Duration::from_secs(30));
        // 4 s into the first cell by its estimate: 26 s left.
        assert_eq!(o.left(t0 + Duration::from_secs(4)), Duration::from_secs(26));
        // Its run phase says 2 s are left (it was faster than estimated).
        o.known = Some((t0 + Duration::from_secs(4), Duration::from_secs(2)));
        assert_eq!(o.left(t0 + Duration::from_secs(5)), Duration::from_secs(21));
        // A cell past its estimate counts nothing more for itself.
        o.known = None;
        assert_eq!(
            o.left(t0 + Duration::from_secs(60)),
            Duration::from_secs(20)
        );
        o.current = None;
        o.finished = 1;
        assert_eq!(o.left(t0), Duration::from_secs(20));
        assert_eq!(
            o.refresh(t0 + Duration::from_secs(12)),
            Duration::from_secs(20)
        );
    }
}
