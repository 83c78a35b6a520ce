//! memtier_benchmark's workload flags (`--ratio`, `--data-size`,
//! `--key-pattern`, `--key-minimum`, `--key-maximum`, `--command` with
//! `--command-ratio` and `--command-key-pattern`) as the workload
//! properties they stand for, so a memtier-style run is stored, repeated and
//! reported like any other: the properties are what gets recorded.

use crate::args::BenchArgs;
use crate::exit::UsageError;
use kvbench_workload::generator::KeyDistribution;

/// The properties the memtier flags set, in order, or an error naming the
/// flag. Empty when none of them is given.
pub fn properties(b: &BenchArgs) -> Result<Vec<(String, String)>, UsageError> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut set = |name: &str, value: String| out.push((name.to_string(), value));
    if !b.commands.is_empty() {
        for (name, value) in commands(b)? {
            set(&name, value);
        }
    }
    if let Some(ratio) = &b.ratio {
        let (sets, gets) = pair(ratio)
            .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
            .filter(|&(a, b)| a + b > 0)
            .ok_or_else(|| {
                UsageError(format!(
                    "--ratio: \"{ratio}\" is not SET:GET with whole numbers, not both 0 (e.g. 1:10)"
                ))
            })?;
        set("kvbench.datamodel", "plain".into());
        set("fieldcount", "1".into());
        set("updateproportion", sets.to_string());
        set("readproportion", gets.to_string());
        for p in [
            "insertproportion",
            "scanproportion",
            "readmodifywriteproportion",
        ] {
            set(p, "0".into());
        }
        set("kvbench.mix", "cycle".into());
    }
    if let Some(size) = &b.data_size {
        let bad = || {
            UsageError(format!(
                "--data-size: \"{size}\" is not N, MIN-MAX or SIZE:WEIGHT,... with sizes of at \
                 least 1 (e.g. 100, 32-1024, 100:3,1000:1)"
            ))
        };
        if size.contains(':') {
            kvbench_workload::ycsb::parse_weighted(size)
                .map_err(|m| UsageError(format!("--data-size: {m}")))?;
            set("fieldlengthdistribution", "weighted".into());
            set("kvbench.fieldlengths", size.clone());
        } else if let Some((lo, hi)) = size.split_once('-') {
            let (lo, hi) = (number(lo).ok_or_else(bad)?, number(hi).ok_or_else(bad)?);
            if lo > hi {
                return Err(UsageError(format!(
                    "--data-size: the smallest size ({lo}) is above the largest ({hi})"
                )));
            }
            set("fieldlengthdistribution", "uniform".into());
            set("minfieldlength", lo.to_string());
            set("fieldlength", hi.to_string());
        } else {
            set("fieldlengthdistribution", "constant".into());
            set("fieldlength", number(size).ok_or_else(bad)?.to_string());
        }
    }
    if let Some(pattern) = &b.key_pattern {
        let letters = pair(pattern)
            .and_then(|(s, g)| Some((single(s)?, single(g)?)))
            .and_then(|(s, g)| {
                Some((
                    KeyDistribution::from_memtier(s)?,
                    KeyDistribution::from_memtier(g)?,
                ))
            });
        let (sets, gets) = letters.ok_or_else(|| {
            UsageError(format!(
                "--key-pattern: \"{pattern}\" is not SET:GET with each one of S, P, R, G \
                 (e.g. S:S, R:R)"
            ))
        })?;
        set("requestdistribution", gets.name().into());
        set("kvbench.writedistribution", sets.name().into());
    }
    if let Some(max) = b.key_maximum {
        let min = b.key_minimum.unwrap_or(0);
        if min > max {
            return Err(UsageError(format!(
                "--key-minimum ({min}) is above --key-maximum ({max})"
            )));
        }
        let records = max
            .checked_add(1)
            .ok_or_else(|| UsageError(format!("--key-maximum: {max} is too large")))?;
        set("recordcount", records.to_string());
        set("insertstart", min.to_string());
        set("insertcount", (max - min + 1).to_string());
        set("insertorder", "ordered".into());
    }
    Ok(out)
}

/// `--command` and its options as `kvbench.command.N` properties, with
/// the mix made of the commands alone (cycled in order, as memtier sends
/// them) over plain values.
fn commands(b: &BenchArgs) -> Result<Vec<(String, String)>, UsageError> {
    let max = kvbench_model::OpKind::COMMANDS;
    if b.commands.len() > max {
        return Err(UsageError(format!(
            "--command: at most {max} templates, got {}",
            b.commands.len()
        )));
    }
    let mut out = Vec::new();
    for (i, text) in b.commands.iter().enumerate() {
        kvbench_workload::command::CommandTemplate::parse(text)
            .map_err(|e| UsageError(format!("--command: {e}")))?;
        out.push((format!("kvbench.command.{}", i + 1), text.clone()));
    }
    // Each option belongs to the --command before it (by position when the
    // order is unknown, as for arguments built in code).
    let owned = |values: &[String], owners: &[Option<usize>], flag: &str| {
        values
            .iter()
            .enumerate()
            .map(|(k, v)| {
                let owner = owners.get(k).copied().unwrap_or(Some(k));
                owner
                    .filter(|&i| i < b.commands.len())
                    .map(|i| (i, v.clone()))
                    .ok_or_else(|| UsageError(format!("{flag} {v}: comes before any --command")))
            })
            .collect::<Result<Vec<_>, _>>()
    };
    for (i, ratio) in owned(&b.command_ratios, &b.ratio_of, "--command-ratio")? {
        let n = ratio
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                UsageError(format!(
                    "--command-ratio: \"{ratio}\" is not a whole number of at least 1"
                ))
            })?;
        out.push((format!("kvbench.command.{}.ratio", i + 1), n.to_string()));
    }
    for (i, pattern) in owned(
        &b.command_key_patterns,
        &b.pattern_of,
        "--command-key-pattern",
    )? {
        single(&pattern)
            .and_then(KeyDistribution::from_memtier)
            .ok_or_else(|| {
                UsageError(format!(
                    "--command-key-pattern: \"{pattern}\" is not one of S, R, G, P"
                ))
            })?;
        out.push((
            format!("kvbench.command.{}.keypattern", i + 1),
            pattern.trim().to_ascii_uppercase(),
        ));
    }
    let kinds = kvbench_model::OpKind::COUNT - max;
    for p in &kvbench_workload::spec::PROPORTIONS[..kinds] {
        out.push((p.to_string(), "0".into()));
    }
    out.push(("kvbench.datamodel".into(), "plain".into()));
    out.push(("fieldcount".into(), "1".into()));
    out.push(("kvbench.mix".into(), "cycle".into()));
    Ok(out)
}

/// `A:B` split at its one colon.
fn pair(text: &str) -> Option<(&str, &str)> {
    let (a, b) = text.split_once(':')?;
    (!b.contains(':')).then_some((a.trim(), b.trim()))
}

fn single(text: &str) -> Option<char> {
    let mut c = text.chars();
    let first = c.next()?;
    c.next().is_none().then_some(first.to_ascii_uppercase())
}

fn number(text: &str) -> Option<u32> {
    text.trim().parse::<u32>().ok().filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(flags: &[&str]) -> Result<Vec<(String, String)>, String> {
        let mut argv = vec![
            "kvbench",
            "run",
            "--system",
            "redis",
            "--workload",
            "memtier",
        ];
        argv.extend_from_slice(flags);
        let cli = crate::args::parse_from(argv).map_err(|e| e.to_string())?;
        let crate::args::Command::Run(run) = cli.command else {
            panic!("not a run")
        };
        properties(&run.bench).map_err(|e| e.0)
    }

    fn get<'a>(p: &'a [(String, String)], name: &str) -> Option<&'a str> {
        p.iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn memtier_flags_become_properties() {
        let p = props(&[
            "--ratio",
            "1:10",
            "--data-size",
            "32-128",
            "--key-pattern",
            "p:g",
            "--key-minimum",
            "5",
            "--key-maximum",
            "104",
        ])
        .unwrap();
        for (name, value) in [
            ("updateproportion", "1"),
            ("readproportion", "10"),
            ("kvbench.mix", "cycle"),
            ("kvbench.datamodel", "plain"),
            ("fieldlengthdistribution", "uniform"),
            ("minfieldlength", "32"),
            ("fieldlength", "128"),
            ("kvbench.writedistribution", "parallel"),
            ("requestdistribution", "gaussian"),
            ("recordcount", "105"),
            ("insertstart", "5"),
            ("insertcount", "100"),
        ] {
            assert_eq!(get(&p, name), Some(value), "{name} in {p:?}");
        }
        let p = props(&["--data-size", "100:3,1000:1"]).unwrap();
        assert_eq!(get(&p, "kvbench.fieldlengths"), Some("100:3,1000:1"));
        assert_eq!(props(&["--data-size", "100"]).unwrap()[1].1, "100");
        assert!(props(&[]).unwrap().is_empty());
    }

    #[test]
    fn bad_memtier_flags_name_the_flag() {
        for (flags, want) in [
            (&["--ratio", "1:x"][..], "--ratio:"),
            (&["--ratio", "0:0"], "--ratio:"),
            (&["--data-size", "0"], "--data-size:"),
            (&["--data-size", "9-3"], "--data-size:"),
            (&["--data-size", "100:0"], "--data-size:"),
            (&["--key-pattern", "S"], "--key-pattern:"),
            (&["--key-pattern", "S:Z"], "--key-pattern:"),
            (
                &["--key-minimum", "9", "--key-maximum", "3"],
                "--key-minimum",
            ),
        ] {
            let e = props(flags).unwrap_err();
            assert!(e.starts_with(want), "{flags:?}: {e}");
        }
        // clap: a minimum alone, or a maximum with --records.
        assert!(props(&["--key-minimum", "3"]).is_err());
        assert!(props(&["--key-maximum", "3", "--records", "9"]).is_err());
    }

    #[test]
    fn command_options_follow_the_command_before_them() {
        let p = props(&[
            "--command",
            "SET __key__ __data__",
            "--command",
            "ZADD z:__key__ __score__ m",
            "--command-ratio",
            "3",
            "--command-key-pattern",
            "s",
        ])
        .unwrap();
        for (name, value) in [
            ("kvbench.command.1", Some("SET __key__ __data__")),
            ("kvbench.command.2", Some("ZADD z:__key__ __score__ m")),
            ("kvbench.command.1.ratio", None),
            ("kvbench.command.2.ratio", Some("3")),
            ("kvbench.command.2.keypattern", Some("S")),
            ("readproportion", Some("0")),
            ("updateproportion", Some("0")),
            ("kvbench.mix", Some("cycle")),
            ("kvbench.datamodel", Some("plain")),
        ] {
            assert_eq!(get(&p, name), value, "{name} in {p:?}");
        }
        // memtier's order: an option belongs to the last --command before it.
        let p = props(&[
            "--command",
            "GET __key__",
            "--command-ratio",
            "2",
            "--command",
            "PING",
        ])
        .unwrap();
        assert_eq!(get(&p, "kvbench.command.1.ratio"), Some("2"));
        assert_eq!(get(&p, "kvbench.command.2.ratio"), None);
    }

    #[test]
    fn bad_command_flags_name_the_flag() {
        let nine: Vec<&str> = (0..9).flat_map(|_| ["--command", "PING"]).collect();
        for (flags, want) in [
            (&["--command", "SET 'a"][..], "--command:"),
            (&["--command", "__key__ x"], "--command:"),
            (&nine, "--command: at most 8"),
            (
                &["--command", "PING", "--command-ratio", "0"],
                "--command-ratio:",
            ),
            (
                &["--command", "PING", "--command-key-pattern", "Z"],
                "--command-key-pattern:",
            ),
            (
                &["--command-ratio", "2", "--command", "PING"],
                "--command-ratio 2: comes before any --command",
            ),
        ] {
            let e = props(flags).unwrap_err();
            assert!(e.starts_with(want), "{flags:?}: {e}");
        }
        // clap: --ratio and --command do not mix; options need a --command.
        assert!(props(&["--ratio", "1:1", "--command", "PING"]).is_err());
        assert!(props(&["--command-ratio", "2"]).is_err());
    }
}
