//! A server's memory limit as users write it (`--max-memory`): a size, or
//! a share of the data set, so an eviction study can say "25% of the data"
//! on any record size and node count.

use std::fmt;
use std::str::FromStr;

/// A limit as the user wrote it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MaxMemory {
    /// This many MB per server.
    Mb(u64),
    /// This share (0 to 100, exclusive) of the raw data each server holds:
    /// its records' keys and values, without the server's own overhead.
    Percent(f64),
}

impl MaxMemory {
    /// The limit in MB for a server that holds `share_bytes` of raw data.
    /// Never below 1 MB, the smallest limit both servers take.
    pub fn mb(self, share_bytes: u64) -> u64 {
        match self {
            MaxMemory::Mb(mb) => mb,
            MaxMemory::Percent(p) => ((share_bytes as f64 * p / 100.0) / f64::from(1 << 20))
                .round()
                .max(1.0) as u64,
        }
    }
}

impl fmt::Display for MaxMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MaxMemory::Mb(mb) => write!(f, "{mb}mb"),
            MaxMemory::Percent(p) => write!(f, "{p}%"),
        }
    }
}

impl FromStr for MaxMemory {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().to_ascii_lowercase();
        if let Some(p) = t.strip_suffix('%') {
            return match p.trim().parse::<f64>() {
                Ok(p) if p > 0.0 && p < 100.0 => Ok(MaxMemory::Percent(p)),
                _ => Err(format!(
                    "{s:?}: a share of the data set must be above 0% and below 100%"
                )),
            };
        }
        let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let unit = &t[digits.len()..];
        let per_mb: f64 = match unit {
            "m" | "mb" | "mib" => 1.0,
            "g" | "gb" | "gib" => 1024.0,
            "" => {
                return Err(format!(
                    "{s:?}: give a unit (64mb, 2gb) or a share of the data set (25%)"
                ))
            }
            _ => {
                return Err(format!(
                    "{s:?}: the unit must be mb or gb (or a share: 25%)"
                ))
            }
        };
        let n: f64 = digits
            .trim()
            .parse()
            .map_err(|_| format!("{s:?} is not a size (64mb, 2gb, 25%)"))?;
        let mb = n * per_mb;
        if !(1.0..=(1u64 << 30) as f64).contains(&mb) || mb.fract() != 0.0 {
            return Err(format!(
                "{s:?}: a limit must be a whole number of MB, at least 1mb"
            ));
        }
        Ok(MaxMemory::Mb(mb as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_shares_read_as_written() {
        assert_eq!("64mb".parse(), Ok(MaxMemory::Mb(64)));
        assert_eq!("64M".parse(), Ok(MaxMemory::Mb(64)));
        assert_eq!("2gb".parse(), Ok(MaxMemory::Mb(2048)));
        assert_eq!("0.5g".parse(), Ok(MaxMemory::Mb(512)));
        assert_eq!("25%".parse(), Ok(MaxMemory::Percent(25.0)));
        for bad in [
            "64", "0mb", "0.5mb", "10kb", "100%", "0%", "x%", "mb", "-3mb",
        ] {
            assert!(bad.parse::<MaxMemory>().is_err(), "{bad}");
        }
        assert_eq!(MaxMemory::Percent(12.5).to_string(), "12.5%");
        assert_eq!(MaxMemory::Mb(64).to_string(), "64mb");
    }

    #[test]
    fn a_share_is_of_each_servers_raw_data_and_at_least_one_mb() {
        let data = 400u64 << 20;
        assert_eq!(MaxMemory::Percent(25.0).mb(data), 100);
        assert_eq!(MaxMemory::Percent(10.0).mb(data), 40);
        assert_eq!(MaxMemory::Percent(1.0).mb(10 << 20), 1);
        assert_eq!(MaxMemory::Mb(7).mb(data), 7);
    }
}
