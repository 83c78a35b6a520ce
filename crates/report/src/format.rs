//! Every number-to-text conversion the reports use, in one place so that the
//! terminal and the Markdown report agree digit for digit.

/// Thousands-separated integer: `1234567` → `1,234,567`.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Whether a run's records are groups of sorted sets (paper C's unions)
/// rather than fields.
pub fn sorted_sets(c: &kvbench_model::RunConfig) -> bool {
    c.property("kvbench.datamodel") == Some("sortedsets")
}

/// The data set in words: `N records x F fields x L B`, or for the
/// sorted-set workload `N sorted sets of M members`.
pub fn dataset(c: &kvbench_model::RunConfig) -> String {
    if sorted_sets(c) {
        let default = kvbench_workload::zsets::ZsetShape::default().members;
        let members = c
            .property("kvbench.zset.members")
            .map_or_else(|| default.to_string(), str::to_string);
        return format!("{} sorted sets of {members} members", count(c.records));
    }
    format!(
        "{} records x {} fields x {} B",
        count(c.records),
        c.field_count,
        c.field_length
    )
}

/// Operations per second, rounded to a whole number.
pub fn rate(ops_per_s: f64) -> String {
    count(ops_per_s.round().max(0.0) as u64)
}

/// Microseconds with precision that fits the magnitude: `12.3`, `456`, `12,345`.
pub fn micros(us: f64) -> String {
    if us < 100.0 {
        format!("{us:.1}")
    } else {
        count(us.round() as u64)
    }
}

/// Bytes as MiB with one decimal.
pub fn mib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1024.0 * 1024.0))
}

/// Seconds with two decimals.
pub fn secs(s: f64) -> String {
    format!("{s:.2}")
}

/// A duration for a person, rounded to the second: `42s`, `3m05s`, `1h07m`.
pub fn duration_text(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The server a run measured, as `system version (allocator)`; when the
/// binary said it was something else than the system it ran as (a Valkey
/// binary run as `redis`), its own name comes first: `valkey 9.1.2 as redis`.
pub fn server_label(system: kvbench_model::SystemKind, env: &kvbench_model::Environment) -> String {
    let allocator = env
        .server_allocator
        .as_ref()
        .map_or(String::new(), |a| format!(" ({a})"));
    match env.server_name.as_deref() {
        Some(name) if name != system.as_str() => {
            format!("{name} {}{allocator} as {system}", env.server_version)
        }
        _ => format!("{system} {}{allocator}", env.server_version),
    }
}

/// ` | cluster of 3 masters x 1 replica` or ` | pool of 3 (libmemcached
/// ketama)` for a multi-node run, empty for one server.
pub fn topology_label(c: &kvbench_model::RunConfig) -> String {
    format!("{}{}", deployment_label(c), netns_label(c))
}

/// ` | netns, 1gbit links, 50us` for a run in namespaces (`--netns`).
fn netns_label(c: &kvbench_model::RunConfig) -> String {
    let Some(n) = c.netns else {
        return String::new();
    };
    let rate = n.link_rate_bits.map_or("unshaped".to_string(), |bits| {
        let (value, unit) = [(1e12, "tbit"), (1e9, "gbit"), (1e6, "mbit"), (1e3, "kbit")]
            .into_iter()
            .find(|(scale, _)| bits as f64 >= *scale)
            .unwrap_or((1.0, "bit"));
        format!("{}{unit}", bits as f64 / value)
    });
    let delay = if n.link_delay_us > 0.0 {
        format!(", {}us delay", n.link_delay_us)
    } else {
        String::new()
    };
    format!(" | netns, {rate} links{delay}")
}

fn deployment_label(c: &kvbench_model::RunConfig) -> String {
    use kvbench_model::TopologyKind;
    let plural = |n: u32, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    match c.topology {
        TopologyKind::Single => String::new(),
        TopologyKind::Cluster => {
            let replicas = if c.replicas > 0 {
                format!(" x {}", plural(c.replicas, "replica"))
            } else {
                String::new()
            };
            format!(" | cluster of {}{replicas}", plural(c.nodes, "master"))
        }
        TopologyKind::Twemproxy => format!(" | twemproxy over {}", plural(c.nodes, "server")),
        TopologyKind::Sentinel => format!(
            " | sentinel group: master + {}, 3 sentinels",
            plural(c.nodes.saturating_sub(1), "replica")
        ),
        TopologyKind::Pool => format!(
            " | pool of {} ({} ketama)",
            plural(c.nodes, "server"),
            c.pool_hash.as_deref().unwrap_or("libmemcached")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(rate(1234.6), "1,235");
        assert_eq!(micros(12.345), "12.3");
        assert_eq!(micros(1234.4), "1,234");
        assert_eq!(mib(1024 * 1024 * 3 / 2), "1.5");
    }
}

/// A value as an axis tick or a note writes it: `8`, `1,500`, `25k`,
/// `1.2M`; on the spectrum's nines axis the percentile (`99.9`).
pub fn axis_value(v: f64, ticks: crate::figure::Ticks) -> String {
    use crate::figure::Ticks;
    match ticks {
        Ticks::Nines => {
            let p = 100.0 * (1.0 - 10f64.powf(-v));
            let digits = (v - 2.0).ceil().clamp(0.0, 6.0) as usize;
            format!("{p:.digits$}")
        }
        Ticks::Count | Ticks::Category => short(v),
    }
}

/// `950`, `1.5k`, `25k`, `1.2M`, `0.25`, `0.001`: short enough for a tick.
pub fn short(v: f64) -> String {
    let a = v.abs();
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if a >= 1e9 {
        format!("{}G", trim(format!("{:.1}", v / 1e9)))
    } else if a >= 1e6 {
        format!("{}M", trim(format!("{:.1}", v / 1e6)))
    } else if a >= 1e4 {
        format!("{}k", trim(format!("{:.0}", v / 1e3)))
    } else if a >= 1e3 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else if a >= 10.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        trim(format!("{v:.1}"))
    } else if a >= 0.01 {
        trim(format!("{v:.2}"))
    } else {
        // Two significant digits: a log axis of seconds reaches 0.001.
        let digits = (-a.log10().floor()) as usize + 1;
        trim(format!("{v:.digits$}"))
    }
}

#[cfg(test)]
mod axis_tests {
    use super::*;
    use crate::figure::Ticks;

    #[test]
    fn ticks_are_short_and_nines_read_as_percentiles() {
        assert_eq!(short(8.0), "8");
        assert_eq!(short(1500.0), "1.5k");
        assert_eq!(short(25_000.0), "25k");
        assert_eq!(short(1_200_000.0), "1.2M");
        assert_eq!(short(0.25), "0.25");
        assert_eq!(short(0.001), "0.001");
        assert_eq!(short(0.0035), "0.0035");
        assert_eq!(axis_value(0.0, Ticks::Nines), "0");
        assert_eq!(axis_value(1.0, Ticks::Nines), "90");
        assert_eq!(axis_value(2.0, Ticks::Nines), "99");
        assert_eq!(axis_value(3.0, Ticks::Nines), "99.9");
        assert_eq!(axis_value(5.0, Ticks::Nines), "99.999");
    }
}

/// A file-name-safe stem.
pub fn slug(parts: &[&str]) -> String {
    let mut s = String::new();
    for p in parts {
        for ch in p.chars() {
            if ch.is_ascii_alphanumeric() {
                s.push(ch.to_ascii_lowercase());
            } else if !s.ends_with('-') {
                s.push('-');
            }
        }
        if !s.ends_with('-') {
            s.push('-');
        }
    }
    s.trim_matches('-').to_string()
}

/// `s` with its first letter upper-cased.
pub fn capital(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
