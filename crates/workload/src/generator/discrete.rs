//! A weighted choice among a few values (the operation mix), as YCSB's
//! `DiscreteGenerator`. No I/O.

use super::java_random::next_double;
use super::DistError;
use rand_core::RngCore;

/// Picks a value with probability proportional to its weight, by YCSB's walk:
/// draw `u` in [0, 1), then for each value in insertion order, return it if
/// `u < weight / sum`, else subtract that share and go on. The shares are
/// computed when values are added instead of on every draw, with the same
/// floating-point operations, so the choice for a given `u` is YCSB's.
#[derive(Debug, Clone)]
pub struct DiscreteGenerator<T> {
    values: Vec<(f64, T)>,
    sum: f64,
    shares: Vec<f64>,
}

impl<T> Default for DiscreteGenerator<T> {
    fn default() -> Self {
        DiscreteGenerator {
            values: Vec::new(),
            sum: 0.0,
            shares: Vec::new(),
        }
    }
}

impl<T> DiscreteGenerator<T> {
    /// A generator with nothing to choose yet; add values with
    /// [`add_value`](Self::add_value).
    pub fn new() -> Self {
        Self::default()
    }

    /// A choice among `(weight, value)` pairs, in order, refusing weights
    /// that are negative or not finite, and a set with no positive weight.
    pub fn from_weights(pairs: impl IntoIterator<Item = (f64, T)>) -> Result<Self, DistError> {
        let mut g = Self::new();
        for (weight, value) in pairs {
            if !g.accepts(weight) {
                return Err(DistError::InvalidParameter {
                    name: "weight",
                    value: weight,
                    expected: "a finite non-negative number, with a finite total",
                });
            }
            g.add_value(weight, value);
        }
        if g.is_empty() {
            return Err(DistError::NoChoices);
        }
        Ok(g)
    }

    /// Adds a choice (YCSB's `addValue`). A weight that is not positive and
    /// finite (or would make the total infinite) is skipped, as CoreWorkload
    /// adds only proportions above zero; [`from_weights`](Self::from_weights)
    /// refuses such weights instead.
    pub fn add_value(&mut self, weight: f64, value: T) {
        if !(self.accepts(weight) && weight > 0.0) {
            return;
        }
        self.values.push((weight, value));
        // Summed in insertion order, as YCSB sums on every draw.
        self.sum += weight;
        self.shares = self.values.iter().map(|(w, _)| w / self.sum).collect();
    }

    fn accepts(&self, weight: f64) -> bool {
        weight.is_finite() && weight >= 0.0 && (self.sum + weight).is_finite()
    }

    /// True when there is nothing to choose.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Draws a value. Where rounding leaves the walk past the end (YCSB
    /// throws an AssertionError there), the last value is returned.
    ///
    /// # Panics
    /// When there is nothing to choose ([`is_empty`](Self::is_empty)).
    #[inline]
    pub fn next_value<R: RngCore + ?Sized>(&self, rng: &mut R) -> &T {
        let mut val = next_double(rng);
        for (i, &share) in self.shares.iter().enumerate() {
            if val < share {
                return &self.values[i].1;
            }
            val -= share;
        }
        match self.values.last() {
            Some((_, v)) => v,
            None => panic!("DiscreteGenerator::next_value: no values to choose from"),
        }
    }

    /// The `(weight, value)` pairs that can be chosen, in order.
    pub fn values(&self) -> impl Iterator<Item = (f64, &T)> {
        self.values.iter().map(|(w, v)| (*w, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::java_random::tests::{seeded, Fixed};

    #[test]
    fn shares_follow_weights() {
        let g = DiscreteGenerator::from_weights([(0.5, 'r'), (0.0, 'x'), (1.5, 'u')]).unwrap();
        assert_eq!(g.values().count(), 2);
        let mut rng = seeded(8);
        let mut counts = [0usize; 2];
        for _ in 0..100_000 {
            match g.next_value(&mut rng) {
                'r' => counts[0] += 1,
                'u' => counts[1] += 1,
                other => panic!("drew {other}"),
            }
        }
        assert!((24_000..26_000).contains(&counts[0]), "{counts:?}");
    }

    #[test]
    fn refuses_empty_and_bad_weights() {
        assert!(DiscreteGenerator::<u8>::from_weights([]).is_err());
        assert!(DiscreteGenerator::from_weights([(0.0, 1)]).is_err());
        assert!(DiscreteGenerator::from_weights([(-1.0, 1), (2.0, 2)]).is_err());
        assert!(DiscreteGenerator::from_weights([(f64::NAN, 1)]).is_err());
        assert!(DiscreteGenerator::from_weights([(f64::MAX, 1), (f64::MAX, 2)]).is_err());
        let mut g = DiscreteGenerator::new();
        assert!(g.is_empty());
        g.add_value(1.0, 1);
        g.add_value(f64::INFINITY, 2);
        g.add_value(-1.0, 3);
        g.add_value(0.0, 4);
        g.add_value(1.0, 5);
        let kept: Vec<i32> = g.values().map(|(_, v)| *v).collect();
        assert_eq!(kept, [1, 5]);
    }

    #[test]
    #[should_panic(expected = "no values")]
    fn drawing_from_nothing_panics() {
        DiscreteGenerator::<u8>::new().next_value(&mut seeded(1));
    }

    #[test]
    fn walk_is_ycsbs() {
        // u = 0.5 exactly: shares 0.25, 0.25, 0.5 -> 0.5 - 0.25 - 0.25 = 0 < 0.5.
        let g = DiscreteGenerator::from_weights([(1.0, 'a'), (1.0, 'b'), (2.0, 'c')]).unwrap();
        assert_eq!(*g.next_value(&mut Fixed(1 << 63)), 'c');
        let g = DiscreteGenerator::from_weights([(1.0, 'a'), (1.0, 'b')]).unwrap();
        assert_eq!(*g.next_value(&mut Fixed(1 << 63)), 'b');
        assert_eq!(*g.next_value(&mut Fixed(u64::MAX)), 'b');
        assert_eq!(*g.next_value(&mut Fixed(0)), 'a');
    }
}
