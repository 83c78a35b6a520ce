//! Which stored runs a command reads: `--runs 3,5-9` and an experiment's
//! newest pass. `export`, `report` and `label`/`delete` all select runs
//! this way.

use crate::exit::UsageError;
use anyhow::Result;
use kvbench_store::{Location, RunSelection, Store};
use std::ops::RangeInclusive;

/// The finished cells of the newest pass of experiment `name`, in plan
/// order; a usage error naming the experiment and database when none is
/// stored.
pub fn experiment_pass(
    store: &Store,
    name: &str,
    db: &Location,
) -> Result<Vec<kvbench_store::FinishedCell>> {
    let generation = newest_pass(store, name, db)?;
    Ok(store.finished_cells(name, generation)?)
}

/// The newest pass of experiment `name`; a usage error naming the
/// experiment and database when none is stored.
pub use kvbench_experiment::pass::newest as newest_pass;

/// The selection `--runs` names; every stored run without it.
pub fn selection(runs: Option<&str>) -> Result<RunSelection> {
    match runs {
        None => Ok(RunSelection::All),
        Some(text) => parse_ids(text)
            .map(RunSelection::Ids)
            .map_err(|e| UsageError(format!("--runs '{text}': {e}")).into()),
    }
}

/// `3,5-9` → `[3..=3, 5..=9]`.
pub fn parse_ids(text: &str) -> Result<Vec<RangeInclusive<i64>>, String> {
    let id = |s: &str| -> Result<i64, String> {
        match s.trim().parse::<i64>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "'{}' is not a run id (a positive whole number)",
                s.trim()
            )),
        }
    };
    text.split(',')
        .map(|part| match part.split_once('-') {
            Some((from, to)) => {
                let (from, to) = (id(from)?, id(to)?);
                if from > to {
                    return Err(format!("range '{}' runs backwards", part.trim()));
                }
                Ok(from..=to)
            }
            None => id(part).map(|n| n..=n),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_ranges_parse() {
        assert_eq!(parse_ids("3").unwrap(), [3..=3]);
        assert_eq!(parse_ids("3,5-9, 12").unwrap(), [3..=3, 5..=9, 12..=12]);
        for bad in ["", "3,", "x", "0", "-2", "9-5", "3-", "1.5", "2-x"] {
            assert!(parse_ids(bad).is_err(), "{bad}");
        }
    }
}
