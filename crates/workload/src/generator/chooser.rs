//! Which record an operation targets: YCSB CoreWorkload's `keychooser`
//! construction (`init`) and its `nextKeynum`, over the generators of this
//! module. No I/O.

use super::{
    check_fraction, AcknowledgedCounterGenerator, ClientSequence, DistError, ExponentialGenerator,
    GaussianKeys, HotspotIntegerGenerator, NumberGenerator, ScrambledZipfianGenerator,
    SequentialGenerator, SkewedLatestGenerator, UniformLongGenerator, EXPONENTIAL_FRAC_DEFAULT,
    EXPONENTIAL_PERCENTILE_DEFAULT, HOTSPOT_DATA_FRACTION_DEFAULT, HOTSPOT_OPN_FRACTION_DEFAULT,
    ZIPFIAN_CONSTANT,
};
use rand_core::RngCore;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// How keys are chosen (CoreWorkload's `requestdistribution`), with the
/// parameters YCSB reads from further properties.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyDistribution {
    /// Every existing key equally likely.
    Uniform,
    /// Keys in order, wrapping, shared across clients.
    Sequential,
    /// Scrambled Zipfian: a few keys, scattered over the key space, are hot.
    Zipfian,
    /// The most recently inserted keys are hot.
    Latest,
    /// A hot set at the low end of the key space.
    Hotspot {
        /// Share of keys in the hot set (`hotspotdatafraction`).
        data_fraction: f64,
        /// Share of operations on the hot set (`hotspotopnfraction`).
        opn_fraction: f64,
    },
    /// Keys an exponentially distributed distance back from the newest.
    Exponential {
        /// `exponential.percentile`: percent of draws within `frac` of the keys.
        percentile: f64,
        /// `exponential.frac`: share of the record count those draws fall in.
        frac: f64,
    },
    /// memtier's `S`: each client walks the keys in order from the first,
    /// wrapping, on its own (YCSB's `sequential` shares one walk).
    ClientSequential,
    /// memtier's `P`: each client walks its own slice of the keys in order.
    Parallel,
    /// memtier's `G`: normally distributed around `median`, truncated to the
    /// keys; 0 takes memtier's defaults (the middle, a sixth of the range).
    Gaussian {
        /// `kvbench.gaussian.median`: the centre, as a key number.
        median: f64,
        /// `kvbench.gaussian.stddev`: the spread, in keys.
        stddev: f64,
    },
}

impl KeyDistribution {
    /// The name CoreWorkload's `requestdistribution` property uses.
    pub fn name(&self) -> &'static str {
        match self {
            KeyDistribution::Uniform => "uniform",
            KeyDistribution::Sequential => "sequential",
            KeyDistribution::Zipfian => "zipfian",
            KeyDistribution::Latest => "latest",
            KeyDistribution::Hotspot { .. } => "hotspot",
            KeyDistribution::Exponential { .. } => "exponential",
            KeyDistribution::ClientSequential => "clientsequential",
            KeyDistribution::Parallel => "parallel",
            KeyDistribution::Gaussian { .. } => "gaussian",
        }
    }

    /// The distribution memtier_benchmark's `--key-pattern` letter names:
    /// `S`, `P`, `G`, `R` (uniform); `None` for any other letter.
    pub fn from_memtier(letter: char) -> Option<KeyDistribution> {
        match letter {
            'S' => Some(KeyDistribution::ClientSequential),
            'P' => Some(KeyDistribution::Parallel),
            'G' => Some(KeyDistribution::Gaussian {
                median: 0.0,
                stddev: 0.0,
            }),
            'R' => Some(KeyDistribution::Uniform),
            _ => None,
        }
    }
}

impl fmt::Display for KeyDistribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for KeyDistribution {
    type Err = String;

    /// Parses a `requestdistribution` value; hotspot and exponential get
    /// YCSB's default parameters.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "uniform" => Ok(KeyDistribution::Uniform),
            "sequential" => Ok(KeyDistribution::Sequential),
            "zipfian" => Ok(KeyDistribution::Zipfian),
            "latest" => Ok(KeyDistribution::Latest),
            "hotspot" => Ok(KeyDistribution::Hotspot {
                data_fraction: HOTSPOT_DATA_FRACTION_DEFAULT,
                opn_fraction: HOTSPOT_OPN_FRACTION_DEFAULT,
            }),
            "exponential" => Ok(KeyDistribution::Exponential {
                percentile: EXPONENTIAL_PERCENTILE_DEFAULT,
                frac: EXPONENTIAL_FRAC_DEFAULT,
            }),
            "clientsequential" => Ok(KeyDistribution::ClientSequential),
            "parallel" => Ok(KeyDistribution::Parallel),
            "gaussian" => Ok(KeyDistribution::Gaussian {
                median: 0.0,
                stddev: 0.0,
            }),
            other => Err(format!(
                "unknown request distribution '{other}' (expected one of: uniform, zipfian, \
                 latest, hotspot, exponential, sequential, clientsequential, parallel, gaussian)"
            )),
        }
    }
}

/// The key-space facts CoreWorkload sizes its key chooser from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeySpace {
    /// Records loaded before the run (`recordcount`).
    pub record_count: u64,
    /// First record this client group reads and loads (`insertstart`).
    pub insert_start: u64,
    /// Records from `insert_start` (`insertcount`; defaults to the rest).
    pub insert_count: u64,
    /// Operations planned for the run (`operationcount`), for the Zipfian's
    /// insert-range fudge; 0 when the run is bounded by time.
    pub operation_count: u64,
    /// Share of inserts in the operation mix (`insertproportion`).
    pub insert_proportion: f64,
    /// Zipfian constant for `zipfian` and `latest` (YCSB: fixed at 0.99).
    pub zipfian_constant: f64,
}

impl KeySpace {
    /// `record_count` records, all of them chosen from, no inserts planned,
    /// YCSB's Zipfian constant.
    pub fn new(record_count: u64) -> Self {
        KeySpace {
            record_count,
            insert_start: 0,
            insert_count: record_count,
            operation_count: 0,
            insert_proportion: 0.0,
            zipfian_constant: ZIPFIAN_CONSTANT,
        }
    }
}

/// CoreWorkload's fudge for keys inserted during the run:
/// `(int) (operationcount * insertproportion * 2.0)`. The scrambled Zipfian
/// is sized for that many more keys up front, so which keys are hot does not
/// shift as inserts arrive; draws of keys not yet inserted are redrawn.
pub fn expected_new_keys(operation_count: u64, insert_proportion: f64) -> u64 {
    // Java's (int) cast: truncates, saturates at 2^31 - 1, and maps NaN to 0.
    ((operation_count as f64 * insert_proportion * 2.0) as i32).max(0) as u64
}

#[derive(Debug, Clone)]
enum Kind {
    Uniform(UniformLongGenerator),
    Sequential(SequentialGenerator),
    Zipfian(ScrambledZipfianGenerator),
    Latest(SkewedLatestGenerator),
    Hotspot(HotspotIntegerGenerator),
    Exponential(ExponentialGenerator),
    Walk(ClientSequence),
    /// Parallel before [`KeyChooser::for_client`] gave it its slice: the
    /// whole range, walked as one client would.
    Parallel(ClientSequence),
    Gaussian(GaussianKeys),
}

/// The least share of exponential draws that must land inside the records.
const MIN_EXPONENTIAL_INSIDE: f64 = 1e-3;

/// Chooses the record number of each read or update as CoreWorkload's
/// `nextKeynum` does: draw from the request distribution, and redraw keys
/// beyond the acknowledged inserts (for `exponential`: count back from the
/// newest acknowledged key, redrawing distances past the oldest).
///
/// Build one and clone it for each client: clones share what YCSB's threads
/// share (the insert counter; the `sequential` position) and own the rest.
/// YCSB narrows every key number to a Java `int` here, which wraps above
/// 2^31 - 1 records; kvbench keeps the full `u64`.
#[derive(Debug, Clone)]
pub struct KeyChooser {
    kind: Kind,
    inserts: Arc<AcknowledgedCounterGenerator>,
}

impl KeyChooser {
    /// The chooser CoreWorkload's `init` would build for `dist` over `space`.
    ///
    /// `inserts` is the run's shared insert-key sequence, which CoreWorkload
    /// starts at the record count (`AcknowledgedCounterGenerator::new(record_count)`).
    pub fn new(
        dist: &KeyDistribution,
        space: &KeySpace,
        inserts: Arc<AcknowledgedCounterGenerator>,
    ) -> Result<Self, DistError> {
        let bad = |name, value: u64, expected| DistError::InvalidParameter {
            name,
            value: value as f64,
            expected,
        };
        if space.record_count == 0 {
            return Err(bad("recordcount", 0, "at least 1"));
        }
        let end = space
            .insert_start
            .checked_add(space.insert_count)
            .filter(|&end| end <= space.record_count)
            .ok_or(bad(
                "insertcount",
                space.insert_count,
                "insertstart + insertcount <= recordcount",
            ))?;
        if inserts.last_value().is_none() {
            return Err(bad(
                "insert counter start",
                0,
                "at least 1 (start it at the record count)",
            ));
        }
        let check_insert_range = || {
            end.checked_sub(1)
                .ok_or(bad("insertcount", 0, "at least 1"))
        };
        let kind = match *dist {
            KeyDistribution::Uniform => Kind::Uniform(UniformLongGenerator::try_new(
                space.insert_start,
                check_insert_range()?,
            )?),
            KeyDistribution::Sequential => Kind::Sequential(SequentialGenerator::new(
                space.insert_start,
                check_insert_range()?,
            )?),
            KeyDistribution::Zipfian => {
                let proportion = check_fraction("insertproportion", space.insert_proportion)?;
                let extra = expected_new_keys(space.operation_count, proportion);
                // Note the range's upper end: insertstart + insertcount + extra,
                // one past the last loaded key even with no inserts planned.
                let max = end.checked_add(extra).ok_or(DistError::InvalidRange {
                    min: space.insert_start,
                    max: u64::MAX,
                })?;
                Kind::Zipfian(ScrambledZipfianGenerator::with_constant(
                    space.insert_start,
                    max,
                    space.zipfian_constant,
                )?)
            }
            KeyDistribution::Latest => Kind::Latest(SkewedLatestGenerator::with_constant(
                Arc::clone(&inserts),
                space.zipfian_constant,
            )?),
            KeyDistribution::Hotspot {
                data_fraction,
                opn_fraction,
            } => Kind::Hotspot(HotspotIntegerGenerator::new(
                space.insert_start,
                check_insert_range()?,
                data_fraction,
                opn_fraction,
            )?),
            KeyDistribution::Exponential { percentile, frac } => {
                // YCSB redraws an offset beyond the loaded keys, without end:
                // a draw lands inside with probability 1 - (1 - p/100)^(1/frac)
                // (independent of the record count). Below 1 in 1,000 that
                // loop is a hang (found by fuzzing the property parser).
                let inside = 1.0 - (1.0 - percentile / 100.0).powf(1.0 / frac);
                if inside.is_nan() || inside < MIN_EXPONENTIAL_INSIDE {
                    return Err(DistError::InvalidParameter {
                        name: "exponential.percentile",
                        value: percentile,
                        expected: "a percentile that, with exponential.frac, puts at least 1 draw in 1,000 inside the records (the others are drawn again)",
                    });
                }
                Kind::Exponential(ExponentialGenerator::with_percentile(
                    percentile,
                    space.record_count as f64 * frac,
                )?)
            }
            KeyDistribution::ClientSequential => Kind::Walk(ClientSequence::new(
                space.insert_start,
                check_insert_range()?,
            )?),
            KeyDistribution::Parallel => Kind::Parallel(ClientSequence::new(
                space.insert_start,
                check_insert_range()?,
            )?),
            KeyDistribution::Gaussian { median, stddev } => Kind::Gaussian(GaussianKeys::new(
                space.insert_start,
                check_insert_range()?,
                median,
                stddev,
            )?),
        };
        Ok(KeyChooser { kind, inserts })
    }

    /// Makes this chooser client `client`'s of `clients`: for `parallel`,
    /// its own slice of the keys (memtier's split); nothing changes for
    /// the other distributions. Call it once, on the client's own clone.
    ///
    /// # Errors
    /// For `parallel` with more clients than keys.
    pub fn for_client(&mut self, client: usize, clients: usize) -> Result<(), DistError> {
        if let Kind::Parallel(walk) = &self.kind {
            let (min, max) = walk.bounds();
            self.kind = Kind::Walk(ClientSequence::parallel(
                min,
                max,
                client as u64,
                clients as u64,
            )?);
        }
        Ok(())
    }

    /// The next record number to read or update.
    #[inline]
    pub fn next_keynum<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> u64 {
        // The default distribution in the caller's own code: no call and
        // no jump through the table of kinds on every operation.
        if let Kind::Uniform(g) = &mut self.kind {
            return draw_existing(g, &self.inserts, rng);
        }
        self.next_keynum_other(rng)
    }

    #[inline(never)]
    fn next_keynum_other<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> u64 {
        match &mut self.kind {
            Kind::Uniform(g) => draw_existing(g, &self.inserts, rng),
            Kind::Sequential(g) => draw_existing(g, &self.inserts, rng),
            Kind::Zipfian(g) => draw_existing(g, &self.inserts, rng),
            Kind::Latest(g) => draw_existing(g, &self.inserts, rng),
            Kind::Hotspot(g) => draw_existing(g, &self.inserts, rng),
            Kind::Walk(g) | Kind::Parallel(g) => draw_existing_with(|| g.next_key(), &self.inserts),
            Kind::Gaussian(g) => draw_existing_with(|| g.next_value(rng), &self.inserts),
            Kind::Exponential(g) => loop {
                let offset = g.next_f64(rng);
                // Construction checked there is a last value; counters only grow.
                let last = self.inserts.last_value().unwrap_or(0);
                // YCSB: keynum = last - (int) offset, redrawn while negative.
                if offset < last as f64 + 1.0 {
                    return last - (offset as u64).min(last);
                }
            },
        }
    }

    /// The request distribution's mean where YCSB defines one.
    pub fn mean(&self) -> Option<f64> {
        match &self.kind {
            Kind::Uniform(g) => g.mean(),
            Kind::Sequential(g) => g.mean(),
            Kind::Zipfian(g) => g.mean(),
            Kind::Latest(g) => g.mean(),
            Kind::Hotspot(g) => g.mean(),
            Kind::Exponential(g) => g.mean(),
            Kind::Walk(_) | Kind::Parallel(_) | Kind::Gaussian(_) => None,
        }
    }
}

/// Draws until the key exists, i.e. is at most the last acknowledged insert.
#[inline]
fn draw_existing<G: NumberGenerator, R: RngCore + ?Sized>(
    g: &mut G,
    inserts: &AcknowledgedCounterGenerator,
    rng: &mut R,
) -> u64 {
    loop {
        let keynum = g.next_value(rng);
        if inserts.last_value().is_some_and(|last| keynum <= last) {
            return keynum;
        }
    }
}

/// [`draw_existing`] for generators outside the YCSB family.
#[inline]
fn draw_existing_with(
    mut next: impl FnMut() -> u64,
    inserts: &AcknowledgedCounterGenerator,
) -> u64 {
    loop {
        let keynum = next();
        if inserts.last_value().is_some_and(|last| keynum <= last) {
            return keynum;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::java_random::tests::seeded;

    fn chooser(dist: &str, space: &KeySpace) -> Result<KeyChooser, DistError> {
        let inserts = Arc::new(AcknowledgedCounterGenerator::new(space.record_count));
        KeyChooser::new(&dist.parse().unwrap(), space, inserts)
    }

    /// Found by fuzzing: a tiny exponential.percentile put almost no draw
    /// inside the records, and the redraw loop never ended.
    #[test]
    fn an_exponential_that_would_redraw_forever_is_refused() {
        let mut space = KeySpace::new(1000);
        space.record_count = 1000;
        let tiny: KeyDistribution = "exponential".parse().unwrap();
        let tiny = match tiny {
            KeyDistribution::Exponential { frac, .. } => KeyDistribution::Exponential {
                percentile: 1e-6,
                frac,
            },
            other => other,
        };
        let inserts = Arc::new(AcknowledgedCounterGenerator::new(1000));
        let e = KeyChooser::new(&tiny, &space, inserts).expect_err("refused");
        assert!(e.to_string().contains("exponential.percentile"), "{e}");
        assert!(
            chooser("exponential", &space).is_ok(),
            "YCSB's defaults stay"
        );
    }

    #[test]
    fn every_distribution_stays_within_the_loaded_keys() {
        let mut rng = seeded(11);
        for name in [
            "uniform",
            "sequential",
            "zipfian",
            "latest",
            "hotspot",
            "exponential",
            "clientsequential",
            "parallel",
            "gaussian",
        ] {
            let mut c = chooser(name, &KeySpace::new(1000)).unwrap();
            let mut seen = [false; 1000];
            for _ in 0..20_000 {
                let k = c.next_keynum(&mut rng);
                assert!(k < 1000, "{name} drew {k}");
                seen[k as usize] = true;
            }
            let distinct = seen.iter().filter(|&&s| s).count();
            assert!(distinct > 100, "{name}: {distinct} distinct keys");
        }
    }

    #[test]
    fn zipfian_range_includes_the_fudge() {
        assert_eq!(expected_new_keys(1_000_000, 0.05), 100_000);
        assert_eq!(expected_new_keys(u64::MAX, 1.0), i32::MAX as u64);
        assert_eq!(expected_new_keys(10, f64::NAN), 0);
        let space = KeySpace {
            operation_count: 1000,
            insert_proportion: 0.5,
            ..KeySpace::new(100)
        };
        let c = chooser("zipfian", &space).unwrap();
        match &c.kind {
            Kind::Zipfian(g) => assert_eq!(g.item_count(), 100 + 1000 + 1),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn keys_follow_acknowledged_inserts() {
        let inserts = Arc::new(AcknowledgedCounterGenerator::new(10));
        let mut c = KeyChooser::new(
            &KeyDistribution::Latest,
            &KeySpace::new(10),
            Arc::clone(&inserts),
        )
        .unwrap();
        let mut rng = seeded(12);
        assert!((0..1000).all(|_| c.next_keynum(&mut rng) <= 9));
        let (a, b) = (inserts.next_value(), inserts.next_value());
        inserts.acknowledge(b).unwrap();
        assert!((0..1000).all(|_| c.next_keynum(&mut rng) <= 9));
        inserts.acknowledge(a).unwrap();
        assert!((0..1000).any(|_| c.next_keynum(&mut rng) == 11));
    }

    #[test]
    fn refuses_inconsistent_key_spaces() {
        assert!(chooser("uniform", &KeySpace::new(0)).is_err());
        let too_far = KeySpace {
            insert_start: 50,
            ..KeySpace::new(100)
        };
        assert!(chooser("uniform", &too_far).is_err());
        let empty = KeySpace {
            insert_count: 0,
            ..KeySpace::new(100)
        };
        assert!(chooser("uniform", &empty).is_err());
        let bad_theta = KeySpace {
            zipfian_constant: 1.0,
            ..KeySpace::new(100)
        };
        assert!(chooser("zipfian", &bad_theta).is_err());
        assert!(chooser("latest", &KeySpace::new(1)).is_err());
        assert!("pareto".parse::<KeyDistribution>().is_err());
        let fresh = Arc::new(AcknowledgedCounterGenerator::new(0));
        assert!(KeyChooser::new(&KeyDistribution::Uniform, &KeySpace::new(10), fresh).is_err());
    }
}
