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
