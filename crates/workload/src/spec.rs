//! What a workload is: dataset shape plus operation mix and key choice.
//!
//! A [`WorkloadSpec`] is plain data with every default filled in; it is what
//! gets recorded with a run, and it is all a generator needs.

use std::fmt;

/// How the run phase picks which record an operation touches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RequestDistribution {
    /// Every loaded record equally likely (YCSB `uniform`).
    Uniform,
}

impl fmt::Display for RequestDistribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestDistribution::Uniform => f.write_str("uniform"),
        }
    }
}

/// A fully specified workload.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadSpec {
    /// Preset or file name, for the record.
    pub name: String,
    /// Records the load phase inserts (YCSB `recordcount`).
    pub record_count: u64,
    /// Fields per record (YCSB `fieldcount`).
    pub field_count: u32,
    /// Bytes per field value (YCSB `fieldlength`, constant distribution).
    pub field_length: u32,
    /// Share of reads (YCSB `readproportion`).
    pub read_proportion: f64,
    /// Share of updates (YCSB `updateproportion`).
    pub update_proportion: f64,
    /// Share of inserts (YCSB `insertproportion`).
    pub insert_proportion: f64,
    /// Key choice in the run phase.
    pub request_distribution: RequestDistribution,
    /// Reads fetch every field (YCSB `readallfields`, default true).
    pub read_all_fields: bool,
    /// Updates write every field (YCSB `writeallfields`, default false).
    pub write_all_fields: bool,
}

/// Why a spec cannot run, naming the offending field.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError(pub String);

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SpecError {}

impl WorkloadSpec {
    /// The read/update/insert mix as YCSB weights, in [`kvbench_model::OpKind`] order.
    pub fn weights(&self) -> [f64; 3] {
        [
            self.read_proportion,
            self.update_proportion,
            self.insert_proportion,
        ]
    }

    /// Checks the values a user controls; the message names the field.
    ///
    /// # Errors
    /// A [`SpecError`] naming the first invalid field.
    pub fn validate(&self) -> Result<(), SpecError> {
        let bad = |m: String| Err(SpecError(m));
        if self.record_count == 0 {
            return bad("records must be at least 1".into());
        }
        if self.field_count == 0 {
            return bad("field-count must be at least 1".into());
        }
        if self.field_length == 0 {
            return bad("field-length must be at least 1".into());
        }
        for (name, p) in [
            ("readproportion", self.read_proportion),
            ("updateproportion", self.update_proportion),
            ("insertproportion", self.insert_proportion),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return bad(format!("{name} must be between 0 and 1, got {p}"));
            }
        }
        if self.weights().iter().sum::<f64>() <= 0.0 {
            return bad("the operation proportions are all zero".into());
        }
        if self.insert_proportion > 0.0 {
            return bad("insertproportion > 0 is not supported yet (issue 4)".into());
        }
        Ok(())
    }

    /// Bytes of user data in one record (field values only).
    pub fn record_bytes(&self) -> u64 {
        u64::from(self.field_count) * u64::from(self.field_length)
    }
}

/// A named operation mix from a paper.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preset {
    /// The name users type.
    pub name: &'static str,
    /// Where it comes from.
    pub source: &'static str,
    /// Share of reads.
    pub read: f64,
    /// Share of updates.
    pub update: f64,
}

/// The three mixes of Anthony et al. 2016 (paper A), uniform key choice.
pub const PRESETS: [Preset; 3] = [
    Preset {
        name: "read-heavy",
        source: "paper A (2016): read 0.9 / update 0.1",
        read: 0.9,
        update: 0.1,
    },
    Preset {
        name: "balanced",
        source: "paper A (2016): read 0.5 / update 0.5",
        read: 0.5,
        update: 0.5,
    },
    Preset {
        name: "write-heavy",
        source: "paper A (2016): read 0.05 / update 0.95",
        read: 0.05,
        update: 0.95,
    },
];

/// Looks a preset up by name.
///
/// # Errors
/// A [`SpecError`] listing the known names.
pub fn preset(name: &str) -> Result<Preset, SpecError> {
    PRESETS
        .iter()
        .copied()
        .find(|p| p.name == name)
        .ok_or_else(|| {
            let known: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
            SpecError(format!(
                "unknown workload '{name}' (expected one of: {})",
                known.join(", ")
            ))
        })
}
