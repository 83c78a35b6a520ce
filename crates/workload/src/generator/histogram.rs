//! Lengths drawn from a bucket histogram, as YCSB's `HistogramGenerator`
//! (`fieldlengthdistribution=histogram`). Parses the histogram's text; the
//! file itself is read by [`crate::properties::read_text`]. No I/O here.

use super::DistError;
use rand_core::RngCore;

/// YCSB's histogram of block counts: the text starts with
/// `BlockSize<TAB>n`, then one `bucket<TAB>count` line per bucket.
///
/// A draw picks `u` uniformly in `[0, area)` (area = the sum of the counts),
/// then walks the buckets subtracting counts and returns
/// `(i + 1) * blocksize` for the first bucket `i` (of all but the last) that
/// brings `u` to zero or below, and `(buckets - 1) * blocksize` when none
/// does. These are YCSB's exact (off-by-one-looking) rules: bucket `i`
/// yields length `(i + 1) * blocksize`, `u = 0` always yields bucket 0, and
/// the last bucket's weight goes to length `(buckets - 1) * blocksize`.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramGenerator {
    block_size: u64,
    buckets: Vec<u64>,
    area: u64,
}

impl HistogramGenerator {
    /// Parses histogram text. Bucket lines are placed as YCSB's
    /// `ArrayList.add(bucket, count)` places them (so they must come in
    /// order from 0, or insert before existing ones). Lines are trimmed,
    /// and blank lines skipped, where YCSB would fail on them.
    ///
    /// # Errors
    /// A message naming the 1-based line: no `BlockSize` line, a field that
    /// is not a whole number, a bucket index past the end, fewer than two
    /// buckets (YCSB would then only ever draw length 0), or a total count
    /// of 0 or above 2^31 - 1 (YCSB's `nextInt((int) area)`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty());
        let (n, first) = lines.next().ok_or("empty histogram file")?;
        let mut parts = first.split('\t');
        if parts.next().map(str::trim) != Some("BlockSize") {
            return Err(format!(
                "line {n}: the first line must be \"BlockSize<TAB>n\""
            ));
        }
        let block_size = whole(parts.next(), n, "block size")?;
        if block_size == 0 {
            return Err(format!("line {n}: the block size must be at least 1"));
        }
        let mut buckets: Vec<u64> = Vec::new();
        for (n, line) in lines {
            let mut parts = line.split('\t');
            let bucket = whole(parts.next(), n, "bucket")?;
            let count = whole(parts.next(), n, "count")?;
            let at = usize::try_from(bucket)
                .ok()
                .filter(|&b| b <= buckets.len())
                .ok_or_else(|| {
                    format!(
                        "line {n}: bucket {bucket} is past the end (next bucket is {})",
                        buckets.len()
                    )
                })?;
            buckets.insert(at, count);
        }
        Self::new(block_size, buckets).map_err(|e| e.to_string())
    }

    /// A histogram of `buckets` counts of `block_size`-byte blocks.
    pub fn new(block_size: u64, buckets: Vec<u64>) -> Result<Self, DistError> {
        if buckets.len() < 2 || block_size == 0 {
            return Err(DistError::InvalidParameter {
                name: "fieldlengthhistogram",
                value: buckets.len() as f64,
                expected: "at least two buckets and a block size of at least 1",
            });
        }
        let area = buckets
            .iter()
            .try_fold(0u64, |a, &c| a.checked_add(c))
            .filter(|&a| a > 0 && a <= i32::MAX as u64)
            .ok_or(DistError::InvalidParameter {
                name: "fieldlengthhistogram",
                value: f64::NAN,
                expected: "a total count between 1 and 2^31 - 1",
            })?;
        Ok(HistogramGenerator {
            block_size,
            buckets,
            area,
        })
    }

    /// Draws a length.
    #[inline]
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> u64 {
        // Uniform in [0, area) by multiply-shift on 32 random bits; the
        // bias (below 2^-32 per value) is far under sampling noise.
        let mut number = (((rng.next_u64() >> 32) * self.area) >> 32) as i64;
        let last = self.buckets.len() - 1;
        for (i, &count) in self.buckets[..last].iter().enumerate() {
            number -= count as i64;
            if number <= 0 {
                return (i as u64 + 1) * self.block_size;
            }
        }
        last as u64 * self.block_size
    }

    /// The smallest length a draw can return.
    pub fn min(&self) -> u64 {
        self.block_size
    }

    /// The largest length a draw can return.
    pub fn max(&self) -> u64 {
        (self.buckets.len() as u64 - 1) * self.block_size
    }

    /// The mean length YCSB reports (`blocksize * sum(i * count) / area`;
    /// not exactly the mean of the draws, given the rules above).
    pub fn mean(&self) -> f64 {
        let weighted: f64 = self
            .buckets
            .iter()
            .enumerate()
            .map(|(i, &c)| i as f64 * c as f64)
            .sum();
        self.block_size as f64 * weighted / self.area as f64
    }
}

fn whole(field: Option<&str>, line: usize, what: &str) -> Result<u64, String> {
    let text = field.map(str::trim).unwrap_or("");
    text.parse()
        .map_err(|_| format!("line {line}: {what} \"{text}\" is not a whole number"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::java_random::tests::{seeded, Fixed};

    #[test]
    fn parses_and_draws_by_ycsbs_rules() {
        let h = HistogramGenerator::parse("BlockSize\t10\n0\t1\n1\t3\n2\t0\n3\t4\n").unwrap();
        assert_eq!((h.min(), h.max(), h.area), (10, 30, 8));
        // u = 0 -> bucket 0 -> 10 bytes.
        assert_eq!(h.sample(&mut Fixed(0)), 10);
        // u = 7 (largest): 7-1-3-0 = 3 > 0, falls through -> (4-1)*10.
        assert_eq!(h.sample(&mut Fixed(u64::MAX)), 30);
        let mut rng = seeded(3);
        let mut counts = [0u32; 4];
        for _ in 0..80_000 {
            counts[(h.sample(&mut rng) / 10) as usize] += 1;
        }
        // u in {0,1} -> 10; {2,3,4} -> 20; {5..7} -> 30 (bucket 2 is empty).
        assert_eq!(counts[0], 0);
        for (got, want) in counts[1..].iter().zip([20_000.0, 30_000.0, 30_000.0]) {
            assert!((f64::from(*got) - want).abs() < 1_000.0, "{counts:?}");
        }
        assert!((h.mean() - 10.0 * (3.0 + 12.0) / 8.0).abs() < 1e-12);
    }

    #[test]
    fn insertion_order_and_errors() {
        // Bucket 0 given after bucket 1 is inserted before it, as ArrayList.add does.
        let h = HistogramGenerator::parse("BlockSize\t1\n0\t5\n0\t7\n").unwrap();
        assert_eq!(h.buckets, [7, 5]);
        for (text, want) in [
            ("", "empty"),
            ("Size\t1\n0\t1\n1\t1", "line 1"),
            ("BlockSize\tx\n", "not a whole number"),
            (
                "BlockSize\t1\n0\t1\n5\t1",
                "line 3: bucket 5 is past the end",
            ),
            ("BlockSize\t1\n0\t1", "two buckets"),
            ("BlockSize\t1\n0\t0\n1\t0", "total count"),
        ] {
            let err = HistogramGenerator::parse(text).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }
}
