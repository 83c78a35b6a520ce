//! YCSB property files → WorkloadSpec: every property mapped with YCSB's
//! defaults and semantics, errors that name file, line and property,
//! overrides, warnings for unknown names, and the YCSB A-F files in
//! tests/ycsb-workloads running unchanged.

use kvbench_workload::generator::KeyDistribution;
use kvbench_workload::presets;
use kvbench_workload::ycsb::{IGNORED, PROPERTIES};
use kvbench_workload::{
    FieldLengthDistribution, InsertOrder, Layout, MemcachedUpdate, Mix, Origin, Properties,
    ScanLengthDistribution, WarningKind, WorkloadSpec,
};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn spec(text: &str) -> WorkloadSpec {
    let props = Properties::parse(text, "w").unwrap();
    let (spec, warnings) = WorkloadSpec::from_properties(&props).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    spec
}

fn error(text: &str) -> String {
    let props = Properties::parse(text, "workloads/x").unwrap();
    WorkloadSpec::from_properties(&props)
        .unwrap_err()
        .to_string()
}

#[test]
fn no_properties_means_coreworkload_defaults() {
    let s = spec("");
    let d = WorkloadSpec::default();
    assert_eq!(
        s,
        WorkloadSpec {
            name: "w".into(),
            ..d
        }
    );
    assert_eq!(s.record_count, 1000);
    assert_eq!((s.field_count, s.field_length), (10, 100));
    assert!(s.read_all_fields && !s.write_all_fields && !s.data_integrity);
    assert_eq!(s.weights()[..6], [0.95, 0.05, 0.0, 0.0, 0.0, 0.0]);
    assert!(s.weights()[6..].iter().all(|&w| w == 0.0));
    assert_eq!(s.request_distribution, KeyDistribution::Uniform);
    assert_eq!((s.min_scan_length, s.max_scan_length), (1, 1000));
    assert_eq!(s.scan_length_distribution, ScanLengthDistribution::Uniform);
    assert_eq!(s.insert_order, InsertOrder::Hashed);
    assert_eq!(
        (s.insert_start, s.insert_count, s.zero_padding),
        (0, 1000, 1)
    );
    assert_eq!(s.field_name_prefix, "field");
    assert_eq!(s.zipfian_constant, 0.99);
    assert_eq!(s.data_model.layout, Layout::Hash);
    assert!(!s.data_model.redis_index);
    assert_eq!(s.data_model.memcached_update, MemcachedUpdate::Full);
    assert_eq!(s.client, Default::default());
}

/// Each property, set to a non-default value, lands where it should.
#[test]
fn every_property_is_mapped() {
    type Check = fn(&WorkloadSpec) -> bool;
    let cases: &[(&str, &str, Check)] = &[
        ("recordcount", "5000", |s| {
            s.record_count == 5000 && s.insert_count == 5000
        }),
        ("operationcount", "777", |s| {
            s.client.operation_count == Some(777)
        }),
        ("fieldcount", "3", |s| s.field_count == 3),
        ("fieldlength", "7", |s| s.field_length == 7),
        ("fieldlengthdistribution", "uniform", |s| {
            s.field_length_distribution == FieldLengthDistribution::Uniform { min: 1 }
        }),
        ("minfieldlength", "50", |_| true), // checked with a distribution below
        ("fieldlengthhistogram", "h.txt", |_| true), // checked below
        ("fieldnameprefix", "f_", |s| s.field_name(2) == "f_2"),
        ("readallfields", "false", |s| !s.read_all_fields),
        ("writeallfields", "TRUE", |s| s.write_all_fields),
        ("dataintegrity", "true", |s| s.data_integrity),
        ("readproportion", "0.25", |s| s.read_proportion == 0.25),
        ("updateproportion", "0.5", |s| s.update_proportion == 0.5),
        ("insertproportion", "0.1", |s| s.insert_proportion == 0.1),
        ("scanproportion", "0.2", |s| {
            s.scan_proportion == 0.2 && s.data_model.redis_index
        }),
        ("readmodifywriteproportion", "0.3", |s| {
            s.read_modify_write_proportion == 0.3
        }),
        ("requestdistribution", "latest", |s| {
            s.request_distribution == KeyDistribution::Latest
        }),
        ("hotspotdatafraction", "0.1", |_| true), // checked below
        ("hotspotopnfraction", "0.9", |_| true),
        ("exponential.percentile", "90", |_| true),
        ("exponential.frac", "0.5", |_| true),
        ("minscanlength", "5", |s| s.min_scan_length == 5),
        ("maxscanlength", "50", |s| s.max_scan_length == 50),
        ("scanlengthdistribution", "zipfian", |s| {
            s.scan_length_distribution == ScanLengthDistribution::Zipfian
        }),
        ("insertorder", "ordered", |s| {
            s.insert_order == InsertOrder::Ordered && s.key_namer().key(42) == "user42"
        }),
        ("insertstart", "100", |s| {
            s.insert_start == 100 && s.insert_count == 900
        }),
        ("insertcount", "10", |s| {
            s.insert_count == 10 && s.load_range() == (0..10)
        }),
        ("kvbench.keyprefix", "kvb", |s| {
            s.key_prefix == "kvb" && s.key_namer().key(7).starts_with("kvb")
        }),
        ("zeropadding", "12", |s| {
            s.zero_padding == 12 && s.key_namer().zero_padding() == 12
        }),
        ("threadcount", "8", |s| s.client.thread_count == Some(8)),
        ("target", "5000", |s| s.client.target == Some(5000)),
        ("maxexecutiontime", "60", |s| {
            s.client.max_execution_time == Some(60)
        }),
        ("workload", "com.yahoo.ycsb.workloads.CoreWorkload", |_| {
            true
        }),
        ("zipfian.constant", "0.5", |s| s.zipfian_constant == 0.5),
        ("table", "mytable", |s| s.table == "mytable"),
        ("kvbench.datamodel", "plain", |s| {
            s.data_model.layout == Layout::Plain
        }),
        ("kvbench.redis.index", "ycsb", |s| s.data_model.redis_index),
        ("kvbench.memcached.update", "ycsb", |s| {
            s.data_model.memcached_update == MemcachedUpdate::Ycsb
        }),
        ("kvbench.fieldlengths", "10:1,30:2", |s| {
            s.field_length_distribution
                == FieldLengthDistribution::Weighted {
                    sizes: vec![(10, 1), (30, 2)],
                }
                && s.field_length == 30
                && s.max_field_length() == 30
        }),
        ("kvbench.mix", "cycle", |s| s.mix == Mix::Cycle),
        ("kvbench.zunionstoreproportion", "1", |s| {
            s.union_proportion == 1.0 && s.data_model.layout == Layout::SortedSets
        }),
        ("kvbench.zset.sets", "5", |s| s.data_model.zsets.sets == 5),
        ("kvbench.zset.members", "300", |s| {
            s.data_model.zsets.members == 300 && s.record_bytes() == 300 * 16
        }),
        ("kvbench.writedistribution", "parallel", |s| {
            s.write_distribution == Some(KeyDistribution::Parallel)
                && s.request_distribution == KeyDistribution::Uniform
        }),
        ("kvbench.gaussian.median", "400", |s| {
            s.request_distribution
                == KeyDistribution::Gaussian {
                    median: 400.0,
                    stddev: 0.0,
                }
        }),
        ("kvbench.gaussian.stddev", "50", |s| {
            s.request_distribution
                == KeyDistribution::Gaussian {
                    median: 0.0,
                    stddev: 50.0,
                }
        }),
        ("kvbench.loadfraction", "0.5", |s| {
            s.record_count == 500 && s.load_range() == (0..500)
        }),
        ("kvbench.command.N", "ZADD z __score__ __key__", |s| {
            s.commands.len() == 1
                && s.commands[0].template.name == "ZADD"
                && s.commands[0].ratio == 1.0
                && s.commands[0].keys == KeyDistribution::Uniform
                && s.kinds().any(|k| k == kvbench_model::OpKind::Command1)
                && s.op_name(kvbench_model::OpKind::Command1) == "ZADD"
        }),
        ("kvbench.command.N.ratio", "3", |s| {
            s.commands[0].ratio == 3.0
        }),
        ("kvbench.command.N.keypattern", "s", |s| {
            s.commands[0].keys == KeyDistribution::ClientSequential
        }),
        ("kvbench.mode", "cache-aside", |s| {
            s.cache_aside
                == Some(kvbench_workload::cache_aside::Penalty::Fixed(
                    std::time::Duration::from_millis(1),
                ))
        }),
        ("kvbench.cacheaside.penalty", "lognormal:1ms:5ms", |s| {
            s.cache_aside
                == Some(kvbench_workload::cache_aside::Penalty::LogNormal {
                    p50: std::time::Duration::from_millis(1),
                    p99: std::time::Duration::from_millis(5),
                })
        }),
    ];
    let names: Vec<&str> = cases.iter().map(|c| c.0).collect();
    for (p, _, _) in PROPERTIES {
        assert!(names.contains(p), "no test for property {p}");
    }
    for (name, value, check) in cases {
        // Plain values need one field; ordered keys are easier to read.
        let extra = match *name {
            "kvbench.datamodel" => "fieldcount=1\n",
            "kvbench.fieldlengths" => "fieldlengthdistribution=weighted\n",
            "kvbench.mix" => "readproportion=9\nupdateproportion=1\n",
            "kvbench.zunionstoreproportion" | "kvbench.zset.sets" | "kvbench.zset.members" => {
                "kvbench.datamodel=sortedsets\nreadproportion=0\nupdateproportion=0\n\
                 kvbench.zunionstoreproportion=1\nrecordcount=20\n"
            }
            "kvbench.gaussian.median" | "kvbench.gaussian.stddev" => {
                "requestdistribution=gaussian\n"
            }
            "kvbench.command.N.ratio" | "kvbench.command.N.keypattern" => {
                "kvbench.command.1=PING\n"
            }
            "kvbench.cacheaside.penalty" => "kvbench.mode=cache-aside\n",
            _ => "",
        };
        // Template properties are numbered: the table writes N.
        let property = name.replace(".N", ".1");
        let s = spec(&format!("{extra}{property}={value}\n"));
        assert!(check(&s), "{name}={value}: {s:#?}");
    }
    let s = spec("fieldlengthdistribution=zipfian\nminfieldlength=50\n");
    assert_eq!(
        s.field_length_distribution,
        FieldLengthDistribution::Zipfian { min: 50 }
    );
    let s = spec("requestdistribution=hotspot\nhotspotdatafraction=0.1\nhotspotopnfraction=0.9\n");
    assert_eq!(
        s.request_distribution,
        KeyDistribution::Hotspot {
            data_fraction: 0.1,
            opn_fraction: 0.9
        }
    );
    let s =
        spec("requestdistribution=exponential\nexponential.percentile=90\nexponential.frac=0.5\n");
    assert_eq!(
        s.request_distribution,
        KeyDistribution::Exponential {
            percentile: 90.0,
            frac: 0.5
        }
    );
    for d in [
        "uniform",
        "zipfian",
        "latest",
        "hotspot",
        "sequential",
        "exponential",
    ] {
        assert_eq!(
            spec(&format!("requestdistribution={d}"))
                .request_distribution
                .name(),
            d
        );
    }
}

#[test]
fn histogram_lengths_come_from_the_named_file() {
    let dir = std::env::temp_dir().join(format!("kvbench-hist-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("hist.txt");
    std::fs::write(&path, "BlockSize\t4\n0\t1\n1\t1\n2\t2\n").unwrap();
    let text = format!(
        "fieldlengthdistribution=histogram\nfieldlengthhistogram={}\n",
        path.display()
    );
    let s = spec(&text);
    assert_eq!(s.field_length_distribution.name(), "histogram");
    assert_eq!(s.max_field_length(), 8);
    assert_eq!(s.record_bytes(), 80);
    std::fs::write(&path, "BlockSize\t4\n0\tx\n").unwrap();
    let e = error(&text);
    assert!(
        e.starts_with("workloads/x: line 2: fieldlengthhistogram: ")
            && e.ends_with("line 2: count \"x\" is not a whole number"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    let e = error("fieldlengthdistribution=histogram\n");
    assert!(
        e.starts_with("workloads/x: line 1: fieldlengthdistribution: hist.txt: cannot read"),
        "{e}"
    );
}

#[test]
fn errors_name_file_line_and_property() {
    let cases = [
        ("# c\n\nreadproportion=0.9x\n", "workloads/x: line 3: readproportion: \"0.9x\" is not a number"),
        ("recordcount = -5", "workloads/x: line 1: recordcount: \"-5\" must not be negative"),
        ("fieldcount=ten", "workloads/x: line 1: fieldcount: \"ten\" is not a whole number"),
        ("readallfields=yes", "workloads/x: line 1: readallfields: \"yes\" is not true or false"),
        (
            "a=1\nrequestdistribution=pareto",
            "workloads/x: line 2: requestdistribution: \"pareto\" is not one of: uniform, \
             zipfian, latest, hotspot, sequential, exponential, clientsequential, parallel, gaussian",
        ),
        ("insertorder=random", "workloads/x: line 1: insertorder: \"random\" is not one of: hashed, ordered"),
        (
            "scanlengthdistribution=latest",
            "workloads/x: line 1: scanlengthdistribution: \"latest\" is not one of: uniform, zipfian",
        ),
        ("recordcount=0", "workloads/x: line 1: recordcount: must be at least 1 (YCSB's 0 loads nothing and reads 2^31 keys)"),
        (
            "recordcount=100\ninsertstart=50\ninsertcount=60",
            "workloads/x: line 3: insertcount: insertstart (50) + insertcount (60) exceeds \
             recordcount (100) (YCSB: \"recordcount must be bigger than insertstart + insertcount\")",
        ),
        (
            "dataintegrity=true\nfieldlengthdistribution=uniform",
            "workloads/x: line 1: dataintegrity: needs fieldlengthdistribution=constant (YCSB: \
             \"Must have constant field size to check data integrity.\")",
        ),
        (
            "minscanlength=10\nmaxscanlength=5",
            "workloads/x: line 1: minscanlength: must be between 1 and maxscanlength (5), got 10",
        ),
        (
            "workload=site.ycsb.workloads.TimeSeriesWorkload",
            "workloads/x: line 1: workload: \"site.ycsb.workloads.TimeSeriesWorkload\" is not \
             supported: kvbench implements CoreWorkload only (site.ycsb.workloads.CoreWorkload)",
        ),
        (
            "readproportion=0\nupdateproportion=0",
            "workloads/x: line 1: readproportion: the operation proportions are all zero (set \
             readproportion, updateproportion, insertproportion, scanproportion or \
             readmodifywriteproportion)",
        ),
        ("kvbench.datamodel=plain", "workloads/x: fieldcount: must be 1 with kvbench.datamodel=plain (one value per key), got 10"),
        (
            "scanproportion=0.5\nkvbench.redis.index=none",
            "workloads/x: line 2: kvbench.redis.index: scans find keys through the index: with \
             scanproportion > 0 it must be ycsb",
        ),
        ("hotspotopnfraction=2\nrequestdistribution=hotspot", "workloads/x: line 1: hotspotopnfraction: 2 is not between 0 and 1"),
        ("zipfian.constant=1", "workloads/x: line 1: zipfian.constant: must be at least 0 and below 1, got 1"),
        ("threadcount=0", "workloads/x: line 1: threadcount: must be at least 1"),
        // docs/reliability.md, "Ranges": past these a number is a slip.
        (
            "recordcount=18446744073709551615",
            "workloads/x: line 1: recordcount: 18446744073709551615 is more than 1000000000000, the most kvbench takes",
        ),
        ("a=1\nfieldlength=4294967295", "workloads/x: line 2: fieldlength: 4294967295 is more than 16777216, the most kvbench takes"),
        ("fieldcount=100000", "workloads/x: line 1: fieldcount: 100000 is more than 1024, the most kvbench takes"),
        ("threadcount=100000", "workloads/x: line 1: threadcount: 100000 is more than 50000, the most kvbench takes"),
        ("target=1000000000000", "workloads/x: line 1: target: 1000000000000 is more than 100000000, the most kvbench takes"),
        (
            "operationcount=9000000000000",
            "workloads/x: line 1: operationcount: 9000000000000 is more than 1000000000000, the most kvbench takes",
        ),
        (
            "fieldcount=1024\nfieldlength=1048576",
            "workloads/x: line 2: fieldlength: a record of fieldcount (1024) x fieldlength (1048576) = \
             1073741824 bytes is more than 536870912 (Redis refuses a value above 512 MB)",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(error(text), want, "{text:?}");
    }
    // A property left at its default has no line to name.
    let e = error("kvbench.datamodel=plain");
    assert!(e.starts_with("workloads/x: fieldcount:"), "{e}");
}

#[test]
fn overrides_apply_after_files_and_name_their_origin() {
    let mut props = Properties::parse(
        "recordcount=1000\nreadproportion=0.5\nupdateproportion=0.5\n",
        "f",
    )
    .unwrap();
    props.merge(Properties::parse("recordcount=2000\n", "g").unwrap());
    props.apply_override("readproportion=0.9").unwrap();
    props.apply_override("updateproportion=0.1").unwrap();
    props.apply_override("operationcount=10").unwrap();
    let (s, w) = WorkloadSpec::from_properties(&props).unwrap();
    assert!(w.is_empty());
    assert_eq!(
        (s.record_count, s.read_proportion, s.update_proportion),
        (2000, 0.9, 0.1)
    );
    assert_eq!(s.client.operation_count, Some(10));
    assert_eq!(s.name, "f+g");
    props.apply_override("fieldlength=abc").unwrap();
    let e = WorkloadSpec::from_properties(&props).unwrap_err();
    assert_eq!(
        e.to_string(),
        "-p: fieldlength: \"abc\" is not a whole number"
    );
    assert_eq!(e.origin, Some(Origin::CommandLine));
    // A preset under overrides.
    let mut p = presets::find("ycsb/a").unwrap();
    p.apply_override("requestdistribution=uniform").unwrap();
    let (s, _) = WorkloadSpec::from_properties(&p).unwrap();
    assert_eq!(s.request_distribution, KeyDistribution::Uniform);
    assert_eq!(s.name, "ycsb/a");
    let e = {
        let mut p = presets::find("ycsb/a").unwrap();
        p.apply_override("readallfields=maybe").unwrap();
        WorkloadSpec::from_properties(&p).unwrap_err().to_string()
    };
    assert_eq!(e, "-p: readallfields: \"maybe\" is not true or false");
    let e = {
        let mut p = presets::find("getset").unwrap();
        p.apply_override("readproportion=0").unwrap();
        p.apply_override("updateproportion=0").unwrap();
        WorkloadSpec::from_properties(&p).unwrap_err().to_string()
    };
    assert!(
        e.starts_with("-p: readproportion: the operation proportions are all zero"),
        "{e}"
    );
}

#[test]
fn unknown_properties_warn_by_name_and_client_ones_are_notes() {
    let text = "readproprtion=0.5\nfoo.bar=1\ndb=site.ycsb.db.RedisClient\nredis.host=127.0.0.1\n\
                measurementtype=hdrhistogram\nhdrhistogram.percentiles=50,99\nexporter=site.ycsb.measurements.exporter.TextMeasurementsExporter\n\
                core_workload_insertion_retry_limit=3\nkvbench.datamodle=plain\n";
    let props = Properties::parse(text, "w").unwrap();
    let (_, warnings) = WorkloadSpec::from_properties(&props).unwrap();
    let got: Vec<(String, WarningKind, bool)> = warnings
        .iter()
        .map(|w| (w.to_string(), w.kind, w.is_note()))
        .collect();
    let unknown = |line: usize, p: &str, hint: &str| {
        (
            format!("w: line {line}: {p}: unknown property, ignored{hint}"),
            WarningKind::Unknown,
            false,
        )
    };
    let note = |line: usize, p: &str| {
        (
            format!("w: line {line}: {p}: a YCSB client or database-binding setting; kvbench ignores it"),
            WarningKind::Ignored,
            true,
        )
    };
    assert_eq!(
        got,
        vec![
            unknown(1, "readproprtion", " (did you mean readproportion?)"),
            unknown(2, "foo.bar", ""),
            note(3, "db"),
            note(4, "redis.host"),
            note(5, "measurementtype"),
            note(6, "hdrhistogram.percentiles"),
            note(7, "exporter"),
            (
                "w: line 8: core_workload_insertion_retry_limit: not supported: kvbench retries \
                 no insert by itself (it counts the error); --max-retries retries every \
                 failed request"
                    .into(),
                WarningKind::Unsupported,
                false
            ),
            unknown(9, "kvbench.datamodle", " (did you mean kvbench.datamodel?)"),
        ]
    );
    assert!(IGNORED.contains(&"exporter"));
}

/// The acceptance test: YCSB's workload files A-F run unchanged.
#[test]
fn ycsb_workload_files_parse_without_warnings() {
    type Expect = ([f64; 5], KeyDistribution);
    let files: [(&str, &str, Expect); 6] = [
        (
            "workloada",
            "ycsb/a",
            ([0.5, 0.5, 0.0, 0.0, 0.0], KeyDistribution::Zipfian),
        ),
        (
            "workloadb",
            "ycsb/b",
            ([0.95, 0.05, 0.0, 0.0, 0.0], KeyDistribution::Zipfian),
        ),
        (
            "workloadc",
            "ycsb/c",
            ([1.0, 0.0, 0.0, 0.0, 0.0], KeyDistribution::Zipfian),
        ),
        (
            "workloadd",
            "ycsb/d",
            ([0.95, 0.0, 0.05, 0.0, 0.0], KeyDistribution::Latest),
        ),
        (
            "workloade",
            "ycsb/e",
            ([0.0, 0.0, 0.05, 0.95, 0.0], KeyDistribution::Zipfian),
        ),
        (
            "workloadf",
            "ycsb/f",
            ([0.5, 0.0, 0.0, 0.0, 0.5], KeyDistribution::Zipfian),
        ),
    ];
    for (file, preset, (weights, dist)) in files {
        let path = root().join("tests/ycsb-workloads").join(file);
        let props = Properties::load_file(&path).unwrap();
        let (s, warnings) = WorkloadSpec::from_properties(&props).unwrap();
        assert!(warnings.is_empty(), "{file}: {warnings:?}");
        assert_eq!(s.weights()[..5], weights, "{file}");
        assert_eq!(s.request_distribution, dist, "{file}");
        assert_eq!(
            (s.record_count, s.client.operation_count),
            (1000, Some(1000)),
            "{file}"
        );
        assert_eq!((s.field_count, s.field_length), (10, 100), "{file}");
        assert!(s.read_all_fields && !s.write_all_fields, "{file}");
        let want_scans = if file == "workloade" {
            (1, 100)
        } else {
            (1, 1000)
        };
        assert_eq!((s.min_scan_length, s.max_scan_length), want_scans, "{file}");
        assert_eq!(s.data_model.redis_index, file == "workloade", "{file}");
        // The preset of the same name is the same workload, property for property.
        let from_preset = presets::find(preset).unwrap();
        let file_entries: Vec<(&str, &str)> = props
            .iter()
            .map(|e| (e.name.as_str(), e.value.as_str()))
            .collect();
        let preset_entries: Vec<(&str, &str)> = from_preset
            .iter()
            .map(|e| (e.name.as_str(), e.value.as_str()))
            .collect();
        let mut a = file_entries.clone();
        let mut b = preset_entries.clone();
        a.sort();
        b.sort();
        assert_eq!(a, b, "{file} vs {preset}");
        let (p, _) = WorkloadSpec::from_properties(&from_preset).unwrap();
        assert_eq!(
            WorkloadSpec {
                name: String::new(),
                ..p
            },
            WorkloadSpec {
                name: String::new(),
                ..s
            }
        );
    }
}

#[test]
fn a_file_with_ycsbs_license_header_and_trailing_blanks_parses() {
    let text = "# Copyright (c) 2010 Yahoo! Inc. All rights reserved.                    \n\
                #                                                                          \n\
                # Licensed under the Apache License, Version 2.0 (the \"License\"); you      \n\
                \n\
                recordcount=1000   \n\
                workload=com.yahoo.ycsb.workloads.CoreWorkload\n\
                readallfields=true \t\n\
                requestdistribution=zipfian  \n";
    let s = spec(text);
    assert_eq!(s.record_count, 1000);
    assert!(s.read_all_fields);
    assert_eq!(s.request_distribution, KeyDistribution::Zipfian);
}

#[test]
fn presets_are_what_their_sources_say() {
    let get = |name: &str| presets::preset(name).unwrap().spec().unwrap().0;
    for (name, read, update) in [
        ("read-heavy", 0.9, 0.1),
        ("balanced", 0.5, 0.5),
        ("write-heavy", 0.05, 0.95),
    ] {
        let s = get(name);
        assert_eq!((s.field_count, s.field_length), (10, 800));
        assert_eq!((s.read_proportion, s.update_proportion), (read, update));
        assert_eq!(s.request_distribution, KeyDistribution::Uniform);
        assert_eq!(s, get(&format!("anthony2016/{name}")));
    }
    for (name, mix) in [
        ("A", [0.5, 0.5, 0.0]),
        ("B", [0.95, 0.05, 0.0]),
        ("C", [0.05, 0.95, 0.0]),
        ("D", [0.9, 0.0, 0.1]),
        ("E", [0.1, 0.0, 0.9]),
    ] {
        let s = get(&format!("sadat2019/{name}"));
        assert_eq!((s.field_count, s.field_length), (16, 255), "{name}");
        assert_eq!(&s.weights()[..3], &mix, "{name}");
        let loaded = if mix[2] > 0.0 { 500 } else { 1000 };
        assert_eq!(s.record_count, loaded, "{name}");
        assert_eq!(s.load_range(), 0..loaded, "{name}");
    }
    // "Load half" scales with the record count the user asks for.
    let mut p = presets::find("sadat2019/D").unwrap();
    p.apply_override("recordcount=1000000").unwrap();
    let (s, _) = WorkloadSpec::from_properties(&p).unwrap();
    assert_eq!((s.record_count, s.load_range()), (500_000, 0..500_000));
    let s = get("getset");
    assert_eq!(
        (s.field_count, s.field_length, s.data_model.layout),
        (1, 100, Layout::Plain)
    );
    assert_eq!(s.weights()[..6], [0.5, 0.5, 0.0, 0.0, 0.0, 0.0]);
    let e = get("ycsb/e");
    assert_eq!((e.min_scan_length, e.max_scan_length), (1, 100));
    for p in presets::all() {
        assert!(!p.spec().unwrap().0.summary().is_empty());
    }
}

#[test]
fn docs_list_every_property_and_preset() {
    let path = root().join("docs/workloads.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    for (p, _, _) in PROPERTIES {
        assert!(
            doc.contains(&format!("`{p}`")),
            "docs/workloads.md does not list `{p}`"
        );
    }
    for p in IGNORED {
        assert!(
            doc.contains(&format!("`{p}`")),
            "docs/workloads.md does not list `{p}`"
        );
    }
    for p in presets::all() {
        assert!(
            doc.contains(&format!("`{}`", p.name)),
            "docs/workloads.md does not list `{}`",
            p.name
        );
    }
}
