//! The bar of one phase, drawn among the live view's bars (`live.rs`),
//! which decides visibility: hidden with `--quiet` or when stderr is not a
//! terminal, so logs and pipes get no bar.

use indicatif::{MultiProgress, ProgressBar, ProgressState, ProgressStyle};
use kvbench_engine::Progress;
use std::time::Duration;

/// The bar for one phase: a spinner during warm-up, then a bar with ETA over
/// the measured window (by operations or by time).
pub struct PhaseBar {
    bar: ProgressBar,
    multi: MultiProgress,
    label: &'static str,
}

impl PhaseBar {
    /// A bar labelled `label` below the others of `multi` (hidden with it).
    pub fn new(label: &'static str, multi: &MultiProgress) -> PhaseBar {
        let bar = if multi.is_hidden() {
            ProgressBar::hidden()
        } else {
            let b = multi.add(ProgressBar::no_length());
            b.set_style(spinner_style());
            b.set_message(format!("{label}: connecting"));
            b.enable_steady_tick(Duration::from_millis(100));
            b
        };
        PhaseBar {
            bar,
            multi: multi.clone(),
            label,
        }
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
        self.multi.remove(&self.bar);
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

/// A time-bound window: the position is milliseconds into it, so what is
/// left is exact (not extrapolated from a rate).
fn time_style() -> ProgressStyle {
    ProgressStyle::with_template("{msg} [{bar:30}] ETA {left}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key("left", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            let left = s.len().unwrap_or(0).saturating_sub(s.pos());
            let _ = write!(w, "{}s", left.div_ceil(1000));
        })
        .progress_chars("=> ")
}
