//! Built-in workloads, each written as YCSB properties so it goes through
//! the same parser and the same defaults as a `-P` file. No I/O.
//!
//! - `anthony2016/*`: the three mixes of Anthony et al. 2016 (paper A),
//!   10 fields x 800 B, uniform key choice; also under their short names
//!   `read-heavy`, `balanced`, `write-heavy`.
//! - `sadat2019/A`..`E`: the five mixes of Sadat et al. 2019, 16 fields x
//!   255 B, uniform key choice. D and E load half the records
//!   (`kvbench.loadfraction=0.5`): with `recordcount=N` the load phase inserts
//!   records `0..N/2`, and the run's inserts continue from `N/2`, exactly as
//!   YCSB run with `recordcount=N/2`.
//! - `ycsb/a`..`f`: YCSB's own `workloads/workloada`..`workloadf` (the same
//!   property names and values; tests/ycsb-workloads holds them as files).
//! - `getset`: one 100-byte plain value per key, 50/50 GET/SET, uniform
//!   (`kvbench.datamodel=plain`), for comparing with `redis-benchmark`.
//! - `memtier`: memtier_benchmark's defaults (`--ratio 1:10`, 32 B,
//!   `--key-pattern R:R`, keys `memtier-N`), the base that `--ratio`,
//!   `--data-size` and `--key-pattern` adjust.
//! - `altoros/simple`, `altoros/complex`: paper C's two workloads, the
//!   pipelined SET:GET and the `ZUNIONSTORE` of four sets of 20,000.

use crate::properties::{Properties, PropertyError};
use crate::spec::WorkloadSpec;
use crate::ycsb::Warning;
use std::fmt;

/// One built-in workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// The name users type.
    pub name: &'static str,
    /// Other names it answers to.
    pub aliases: &'static [&'static str],
    /// Where its parameters come from.
    pub source: &'static str,
    /// Its definition, in Java properties syntax.
    pub properties: &'static str,
}

impl Preset {
    /// The preset's properties, with the preset as their origin.
    ///
    /// # Errors
    /// Never for the built-in presets (a test parses each).
    pub fn load(&self) -> Result<Properties, PropertyError> {
        Properties::parse_preset(self.properties, self.name)
    }

    /// The preset's spec with every default filled in (for listings).
    ///
    /// # Errors
    /// Never for the built-in presets (a test builds each).
    pub fn spec(&self) -> Result<(WorkloadSpec, Vec<Warning>), PropertyError> {
        WorkloadSpec::from_properties(&self.load()?)
    }
}

macro_rules! anthony {
    ($mix:literal) => {
        concat!(
            "# Anthony et al. 2016 (paper A): 10 x 800 B, uniform.\n",
            "fieldcount=10\nfieldlength=800\nrequestdistribution=uniform\n",
            $mix
        )
    };
}

macro_rules! sadat {
    ($mix:literal) => {
        concat!(
            "# Sadat et al. 2019: 16 x 255 B, uniform.\n",
            "fieldcount=16\nfieldlength=255\nrequestdistribution=uniform\n",
            $mix
        )
    };
}

macro_rules! ycsb {
    ($body:literal) => {
        concat!(
            "recordcount=1000\noperationcount=1000\n",
            "workload=site.ycsb.workloads.CoreWorkload\nreadallfields=true\n",
            $body
        )
    };
}

/// Every built-in workload, in the order `kvbench workloads` lists them.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "anthony2016/read-heavy",
        aliases: &["read-heavy"],
        source: "Anthony et al. 2016 (paper A): read 0.9 / update 0.1",
        properties: anthony!("readproportion=0.9\nupdateproportion=0.1\n"),
    },
    Preset {
        name: "anthony2016/balanced",
        aliases: &["balanced"],
        source: "Anthony et al. 2016 (paper A): read 0.5 / update 0.5",
        properties: anthony!("readproportion=0.5\nupdateproportion=0.5\n"),
    },
    Preset {
        name: "anthony2016/write-heavy",
        aliases: &["write-heavy"],
        source: "Anthony et al. 2016 (paper A): read 0.05 / update 0.95",
        properties: anthony!("readproportion=0.05\nupdateproportion=0.95\n"),
    },
    Preset {
        name: "sadat2019/A",
        aliases: &[],
        source: "Sadat et al. 2019, workload A: read 0.5 / update 0.5",
        properties: sadat!("readproportion=0.5\nupdateproportion=0.5\n"),
    },
    Preset {
        name: "sadat2019/B",
        aliases: &[],
        source: "Sadat et al. 2019, workload B: read 0.95 / update 0.05",
        properties: sadat!("readproportion=0.95\nupdateproportion=0.05\n"),
    },
    Preset {
        name: "sadat2019/C",
        aliases: &[],
        source: "Sadat et al. 2019, workload C: read 0.05 / update 0.95",
        properties: sadat!("readproportion=0.05\nupdateproportion=0.95\n"),
    },
    Preset {
        name: "sadat2019/D",
        aliases: &[],
        source: "Sadat et al. 2019, workload D: read 0.9 / insert 0.1, half the records loaded",
        properties: sadat!(
            "readproportion=0.9\nupdateproportion=0\ninsertproportion=0.1\nkvbench.loadfraction=0.5\n"
        ),
    },
    Preset {
        name: "sadat2019/E",
        aliases: &[],
        source: "Sadat et al. 2019, workload E: read 0.1 / insert 0.9, half the records loaded",
        properties: sadat!(
            "readproportion=0.1\nupdateproportion=0\ninsertproportion=0.9\nkvbench.loadfraction=0.5\n"
        ),
    },
    Preset {
        name: "ycsb/a",
        aliases: &[],
        source: "YCSB workloada: update heavy, read 0.5 / update 0.5, zipfian",
        properties: ycsb!(
            "readproportion=0.5\nupdateproportion=0.5\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n"
        ),
    },
    Preset {
        name: "ycsb/b",
        aliases: &[],
        source: "YCSB workloadb: read mostly, read 0.95 / update 0.05, zipfian",
        properties: ycsb!(
            "readproportion=0.95\nupdateproportion=0.05\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n"
        ),
    },
    Preset {
        name: "ycsb/c",
        aliases: &[],
        source: "YCSB workloadc: read only, zipfian",
        properties: ycsb!(
            "readproportion=1\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n"
        ),
    },
    Preset {
        name: "ycsb/d",
        aliases: &[],
        source: "YCSB workloadd: read latest, read 0.95 / insert 0.05, latest",
        properties: ycsb!(
            "readproportion=0.95\nupdateproportion=0\nscanproportion=0\ninsertproportion=0.05\nrequestdistribution=latest\n"
        ),
    },
    Preset {
        name: "ycsb/e",
        aliases: &[],
        source: "YCSB workloade: short ranges, scan 0.95 / insert 0.05, zipfian, scans 1..100 uniform",
        properties: ycsb!(
            "readproportion=0\nupdateproportion=0\nscanproportion=0.95\ninsertproportion=0.05\nrequestdistribution=zipfian\nmaxscanlength=100\nscanlengthdistribution=uniform\n"
        ),
    },
    Preset {
        name: "ycsb/f",
        aliases: &[],
        source: "YCSB workloadf: read-modify-write, read 0.5 / rmw 0.5, zipfian",
        properties: ycsb!(
            "readproportion=0.5\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\nreadmodifywriteproportion=0.5\nrequestdistribution=zipfian\n"
        ),
    },
    Preset {
        name: "getset",
        aliases: &[],
        source: "kvbench: plain GET/SET of one 100 B value, 50/50, uniform (redis-benchmark's shape)",
        properties: "kvbench.datamodel=plain\nfieldcount=1\nfieldlength=100\n\
                     readproportion=0.5\nupdateproportion=0.5\nrequestdistribution=uniform\n",
    },
    Preset {
        name: "cache-aside",
        aliases: &[],
        source: "kvbench: an application's cache: plain 1 KB values, read only, zipfian; a miss waits a 1 ms backend, then sets the value (use with --max-memory)",
        properties: "kvbench.datamodel=plain\nfieldcount=1\nfieldlength=1000\n\
                     readproportion=1\nupdateproportion=0\nrequestdistribution=zipfian\n\
                     kvbench.mode=cache-aside\nkvbench.cacheaside.penalty=1ms\n",
    },
    Preset {
        name: "memtier",
        aliases: &[],
        source: "memtier_benchmark's defaults: SET:GET 1:10 cycled, 32 B, random keys memtier-N",
        properties: "kvbench.datamodel=plain\nfieldcount=1\nfieldlength=32\n\
                     updateproportion=1\nreadproportion=10\nkvbench.mix=cycle\n\
                     requestdistribution=uniform\ninsertorder=ordered\n\
                     kvbench.keyprefix=memtier-\n",
    },
    Preset {
        name: "altoros/simple",
        aliases: &[],
        source: "Altoros (paper C): memtier SET:GET 1:1, 100 B, key pattern S:S",
        properties: "kvbench.datamodel=plain\nfieldcount=1\nfieldlength=100\n\
                     updateproportion=1\nreadproportion=1\nkvbench.mix=cycle\n\
                     requestdistribution=clientsequential\n\
                     kvbench.writedistribution=clientsequential\ninsertorder=ordered\n\
                     kvbench.keyprefix=memtier-\n",
    },
    Preset {
        name: "altoros/complex",
        aliases: &["zunionstore"],
        source: "Altoros (paper C): ZUNIONSTORE of four sorted sets of 20,000 members",
        properties: "kvbench.datamodel=sortedsets\nkvbench.zset.sets=4\n\
                     kvbench.zset.members=20000\nrecordcount=4\n\
                     readproportion=0\nupdateproportion=0\n\
                     kvbench.zunionstoreproportion=1\nkvbench.keyprefix=zset\n",
    },
];

/// Every built-in workload.
pub fn all() -> &'static [Preset] {
    PRESETS
}

/// A name that is not a preset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPreset(pub String);

impl fmt::Display for UnknownPreset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = PRESETS
            .iter()
            .flat_map(|p| std::iter::once(p.name).chain(p.aliases.iter().copied()))
            .collect();
        write!(
            f,
            "unknown workload '{}' (expected one of: {}; or -P FILE)",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownPreset {}

/// The preset called `name` (or one of its aliases).
///
/// # Errors
/// [`UnknownPreset`], whose message lists every name.
pub fn preset(name: &str) -> Result<&'static Preset, UnknownPreset> {
    PRESETS
        .iter()
        .find(|p| p.name == name || p.aliases.contains(&name))
        .ok_or_else(|| UnknownPreset(name.to_owned()))
}

/// The properties of the preset called `name`.
///
/// # Errors
/// [`UnknownPreset`] listing the names (a built-in preset always parses).
pub fn find(name: &str) -> Result<Properties, UnknownPreset> {
    let p = preset(name)?;
    // Built-in text; a parse failure would be a bug that a test catches.
    p.load().map_err(|e| UnknownPreset(format!("{name} ({e})")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_builds_without_warnings() {
        for p in all() {
            let (spec, warnings) = p.spec().unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert!(warnings.is_empty(), "{}: {warnings:?}", p.name);
            assert_eq!(spec.name, p.name);
        }
    }

    #[test]
    fn aliases_and_unknown_names() {
        assert_eq!(preset("read-heavy").unwrap().name, "anthony2016/read-heavy");
        assert_eq!(
            find("ycsb/a").unwrap().value("requestdistribution"),
            Some("zipfian")
        );
        let e = find("ycsb/z").unwrap_err().to_string();
        assert!(
            e.starts_with(
                "unknown workload 'ycsb/z' (expected one of: anthony2016/read-heavy, read-heavy,"
            ),
            "{e}"
        );
        assert!(e.contains("getset"), "{e}");
    }
}
