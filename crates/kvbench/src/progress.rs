//! Progress bars on stderr. One constructor decides visibility: hidden with
//! `--quiet` or when stderr is not a terminal, so logs and pipes stay clean.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kvbench_engine::{Observer, Progress};
use std::io::IsTerminal;
use std::time::Duration;

/// The bar for one phase: a spinner during warm-up, then a bar with ETA over
/// the measured window (by operations or by time).
pub struct PhaseBar {
    bar: ProgressBar,
    label: &'static str,
}

impl PhaseBar {
    /// A bar labelled `label`, hidden when `quiet` or stderr is not a terminal.
    pub fn new(label: &'static str, quiet: bool) -> PhaseBar {
        let bar = if quiet || !std::io::stderr().is_terminal() {
            ProgressBar::hidden()
        } else {
            let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(10));
            b.set_style(spinner_style());
            b.set_message(format!("{label}: connecting"));
            b.enable_steady_tick(Duration::from_millis(100));
            b
        };
        PhaseBar { bar, label }
    }

    /// Sending has started.
    pub fn started(&self) {
        self.bar
            .set_message(format!("{}: warm-up (not counted)", self.label));
    }

    /// The measured window has started.
    pub fn window_started(&self) {
        self.bar.set_message(format!("{}: measuring", self.label));
    }

    /// Periodic update.
    pub fn progress(&self, p: &Progress) {
        if p.elapsed < p.warmup {
            return;
        }
        match (p.total, p.window) {
            (Some(total), _) => {
                if self.bar.length() != Some(total) {
                    self.bar.set_length(total);
                    self.bar.set_style(ops_style());
                }
                self.bar.set_position(p.completed);
            }
            (None, Some(window)) => {
                let ms = window.as_millis() as u64;
                if self.bar.length() != Some(ms) {
                    self.bar.set_length(ms);
                    self.bar.set_style(time_style());
                }
                let in_window = p.elapsed.saturating_sub(p.warmup).as_millis() as u64;
                self.bar.set_position(in_window.min(ms));
                self.bar
                    .set_message(format!("{}: {} ops", self.label, p.completed));
            }
            (None, None) => {}
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Observer for PhaseBar {
    fn started(&self) {
        PhaseBar::started(self);
    }
    fn window_started(&self) {
        PhaseBar::window_started(self);
    }
    fn progress(&self, p: &Progress) {
        PhaseBar::progress(self, p);
    }
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

fn ops_style() -> ProgressStyle {
    ProgressStyle::with_template("{msg} [{bar:30}] {human_pos}/{human_len} ops {per_sec} ETA {eta}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

fn time_style() -> ProgressStyle {
    ProgressStyle::with_template("{msg} [{bar:30}] ETA {eta}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

/// The overall bar of `experiment run` and `compare`: its length is the estimated time of
/// the cells to run (in ms) and each finished cell adds its estimate, so the
/// ETA weighs a long cell more than a short one; the message counts cells.
pub fn experiment_bar(estimate_ms: u64, quiet: bool) -> ProgressBar {
    overall_bar(estimate_ms, quiet, "cells {msg} [{bar:30}] ETA {eta}")
}

fn overall_bar(len: u64, quiet: bool, template: &str) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr_with_hz(4));
    b.set_style(
        ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    b
}
