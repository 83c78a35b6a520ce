//! How an experiment's verdicts are called (the equivalence margin, the
//! looks a sequential comparison may take) and when its blocks stop: the
//! settings alone, checked, apart from the runner that follows them
//! (`sequential`), so the file and the cells read them without it.

use kvbench_model::VerdictRule;
use kvbench_stats::paired::{look_points, DEFAULT_MARGIN, MIN_BLOCKS};
use std::time::Duration;

/// `--max-blocks` when not given.
pub const DEFAULT_MAX_BLOCKS: u32 = 10;

/// When a sequential comparison stops adding blocks.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Blocks per place at most.
    pub max_blocks: u32,
    /// No block starts that would end after this much measuring.
    pub budget: Option<Duration>,
}

/// How an experiment's verdicts are called and its blocks stopped, from
/// compare's flags or a file's `[verdicts]`.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Recorded in every run; `None` for the default (±5%, one look), so a
    /// plain experiment keeps the cells (and name) it always had.
    pub rule: Option<VerdictRule>,
    /// `Some` when blocks are added until decided.
    pub limits: Option<Limits>,
}

impl Plan {
    /// Checks the settings; an error names the setting (`margin`,
    /// `max_blocks`) and what is wrong.
    pub fn new(
        margin_pct: f64,
        until_decided: bool,
        max_blocks: u32,
        budget: Option<Duration>,
    ) -> Result<Plan, (&'static str, String)> {
        let margin = kvbench_run::bounds::margin_share(margin_pct).map_err(|e| ("margin", e))?;
        if until_decided {
            let range = kvbench_run::bounds::MAX_BLOCKS;
            kvbench_workload::bounds::check(u64::from(max_blocks), range.min, range.max).map_err(
                |e| {
                    (
                        "max_blocks",
                        format!("{e} (a sequential comparison starts with {MIN_BLOCKS} blocks)"),
                    )
                },
            )?;
        }
        let looks = if until_decided {
            look_points(MIN_BLOCKS as u32, max_blocks).len() as u32
        } else {
            1
        };
        Ok(Plan {
            rule: ((margin - DEFAULT_MARGIN).abs() > 1e-12 || looks > 1)
                .then_some(VerdictRule { margin, looks }),
            limits: until_decided.then_some(Limits { max_blocks, budget }),
        })
    }

    /// The blocks the first pass runs: `iterations`, and at least the
    /// fewest a sequential comparison judges.
    pub fn first_blocks(&self, iterations: u32) -> u32 {
        match self.limits {
            Some(l) => iterations.max(MIN_BLOCKS as u32).min(l.max_blocks),
            None => iterations,
        }
    }
}
