//! Operation streams: mixes, determinism, the shared insert counter, the
//! acknowledged-insert limit, field choice and scan lengths, for every
//! preset and the YCSB workloads.

use kvbench_model::OpKind;
use kvbench_workload::generator::zeta;
use kvbench_workload::{client_rngs, presets, Op, OpStream, Properties, Workload, WorkloadSpec};
use std::collections::{HashSet, VecDeque};

fn spec_of(text: &str) -> WorkloadSpec {
    WorkloadSpec::from_properties(&Properties::parse(text, "t").unwrap())
        .unwrap()
        .0
}

fn streams(spec: &WorkloadSpec, seed: u64, n: usize) -> (Workload, Vec<OpStream>) {
    let w = Workload::new(spec).unwrap();
    let s = client_rngs(seed, n)
        .into_iter()
        .map(|r| w.stream(r))
        .collect();
    (w, s)
}

/// Draws `n` operations from `stream`, acknowledging each insert after a
/// lag of `lag` operations (out of order, like replies from many
/// connections), and checks that every chosen record was readable when it
/// was chosen.
fn drive(stream: &mut OpStream, n: usize, lag: usize) -> Vec<Op> {
    let mut pending = VecDeque::new();
    let mut ops = Vec::with_capacity(n);
    for i in 0..n {
        let limit = stream.last_readable().expect("records exist");
        let op = stream.next_op();
        if op.kind == OpKind::Insert {
            assert!(
                op.keynum > limit,
                "insert {} of an existing record",
                op.keynum
            );
            pending.push_back(op.keynum);
        } else {
            assert!(
                op.keynum <= limit,
                "{:?} beyond the acknowledged limit {limit}",
                op
            );
        }
        if pending.len() > lag || (i % 7 == 0 && pending.len() > 1) {
            // Acknowledge the second-oldest first now and then: out of order.
            let k = if i % 7 == 0 && pending.len() > 1 {
                pending.remove(1)
            } else {
                pending.pop_front()
            };
            stream.acknowledge_insert(k.expect("pending")).unwrap();
        }
        ops.push(op);
    }
    ops
}

#[test]
fn every_preset_mix_is_within_one_percent() {
    for p in presets::all() {
        let (spec, _) = p.spec().unwrap();
        let (_, mut s) = streams(&spec, 42, 1);
        let ops = drive(&mut s[0], 100_000, 10);
        for kind in OpKind::ALL {
            let got = ops.iter().filter(|o| o.kind == kind).count() as f64 / ops.len() as f64;
            let want = spec.share(kind);
            assert!(
                (got - want).abs() < 0.01,
                "{}: {kind} share {got} (want {want})",
                p.name
            );
        }
    }
}

#[test]
fn same_seed_same_stream_and_clients_differ() {
    for name in ["ycsb/a", "ycsb/e", "ycsb/f", "sadat2019/C", "getset"] {
        let (spec, _) = presets::preset(name).unwrap().spec().unwrap();
        let (_, mut a) = streams(&spec, 7, 2);
        let (_, mut b) = streams(&spec, 7, 2);
        let one = drive(&mut a[0], 2000, 0);
        assert_eq!(
            one,
            drive(&mut b[0], 2000, 0),
            "{name}: same seed, same client"
        );
        let other = drive(&mut a[1], 2000, 0);
        assert_ne!(one, other, "{name}: clients 0 and 1");
        let (_, mut c) = streams(&spec, 8, 1);
        assert_ne!(one, drive(&mut c[0], 2000, 0), "{name}: seeds 7 and 8");
    }
}

#[test]
fn inserts_take_fresh_keys_from_the_shared_counter() {
    let spec =
        spec_of("recordcount=1000\ninsertproportion=0.5\nreadproportion=0.5\nupdateproportion=0\n");
    let (w, mut s) = streams(&spec, 1, 3);
    let mut inserted = Vec::new();
    for round in 0..3000 {
        let stream = &mut s[round % 3];
        let op = stream.next_op();
        if op.kind == OpKind::Insert {
            assert_eq!((op.field, op.scan_length), (None, 0));
            inserted.push(op.keynum);
            stream.acknowledge_insert(op.keynum).unwrap();
        }
    }
    assert!(inserted.len() > 1300, "{}", inserted.len());
    // Consecutive from recordcount, no key twice, across all three clients.
    let want: Vec<u64> = (1000..1000 + inserted.len() as u64).collect();
    assert_eq!(inserted, want);
    assert_eq!(w.inserts().last_value(), Some(999 + inserted.len() as u64));
    // A second acknowledgement of a key is refused.
    assert!(s[0].acknowledge_insert(1000).is_err());
}

#[test]
fn reads_never_pass_the_acknowledged_limit_and_follow_inserts() {
    for dist in [
        "uniform",
        "zipfian",
        "latest",
        "hotspot",
        "sequential",
        "exponential",
    ] {
        let spec = spec_of(&format!(
            "recordcount=500\noperationcount=20000\nreadproportion=0.5\nupdateproportion=0\n\
             insertproportion=0.2\nscanproportion=0.1\nreadmodifywriteproportion=0.2\n\
             requestdistribution={dist}\nmaxscanlength=10\n"
        ));
        let (_, mut s) = streams(&spec, 3, 1);
        // drive() asserts the limit on every operation.
        let ops = drive(&mut s[0], 20_000, 25);
        if dist == "latest" {
            let new = ops
                .iter()
                .filter(|o| o.kind == OpKind::Read && o.keynum >= 500)
                .count();
            assert!(new > 1000, "latest reads of new records: {new}");
        }
    }
    // With nothing acknowledged, no read may touch a record being inserted.
    let spec = spec_of("recordcount=100\nreadproportion=0.5\nupdateproportion=0\ninsertproportion=0.5\nrequestdistribution=latest\n");
    let (_, mut s) = streams(&spec, 4, 1);
    for _ in 0..5000 {
        let op = s[0].next_op();
        if op.kind != OpKind::Insert {
            assert!(op.keynum < 100, "{op:?}");
        }
    }
}

#[test]
fn fields_are_chosen_as_ycsb_chooses_them() {
    let spec = spec_of(
        "fieldcount=4\nreadallfields=false\nwriteallfields=false\nreadproportion=0.4\n\
         updateproportion=0.3\nreadmodifywriteproportion=0.3\n",
    );
    let (_, mut s) = streams(&spec, 5, 1);
    let mut counts = [[0u32; 4]; 3];
    let mut rmw_same = 0;
    let mut rmw = 0;
    for _ in 0..40_000 {
        let op = s[0].next_op();
        let f = op.field.expect("one field") as usize;
        match op.kind {
            OpKind::Read => counts[0][f] += 1,
            OpKind::Update => counts[1][f] += 1,
            OpKind::ReadModifyWrite => {
                counts[2][f] += 1;
                rmw += 1;
                rmw_same += u32::from(op.read_field == op.field);
                assert!(op.read_field.is_some());
            }
            k => panic!("{k}"),
        }
    }
    for row in counts {
        let total: u32 = row.iter().sum();
        for c in row {
            let share = f64::from(c) / f64::from(total);
            assert!((share - 0.25).abs() < 0.02, "{row:?}");
        }
    }
    // Read and write fields of a read-modify-write are drawn independently.
    let same = f64::from(rmw_same) / f64::from(rmw);
    assert!((same - 0.25).abs() < 0.03, "{same}");
    // All fields: no field chosen.
    let (_, mut s) = streams(&presets::preset("ycsb/f").unwrap().spec().unwrap().0, 5, 1);
    for _ in 0..1000 {
        let op = s[0].next_op();
        assert_eq!(op.read_field, None);
        assert_eq!(
            op.field.is_some(),
            op.kind == OpKind::ReadModifyWrite,
            "{op:?}"
        );
    }
}

#[test]
fn scan_lengths_follow_their_distribution() {
    // YCSB E: uniform 1..=100.
    let spec = presets::preset("ycsb/e").unwrap().spec().unwrap().0;
    let (_, mut s) = streams(&spec, 6, 1);
    let lengths: Vec<u32> = drive(&mut s[0], 100_000, 5)
        .iter()
        .filter(|o| o.kind == OpKind::Scan)
        .map(|o| o.scan_length)
        .collect();
    assert!(lengths.iter().all(|l| (1..=100).contains(l)));
    let mut counts = [0u32; 101];
    for &l in &lengths {
        counts[l as usize] += 1;
    }
    let n = lengths.len() as f64;
    for (l, &c) in counts.iter().enumerate().skip(1) {
        assert!(
            (f64::from(c) / n - 0.01).abs() < 0.003,
            "length {l}: {c} of {n}"
        );
    }
    let mean = lengths.iter().map(|&l| f64::from(l)).sum::<f64>() / n;
    assert!((mean - 50.5).abs() < 0.5, "{mean}");

    // Zipfian 5..=50: the shortest is the most popular, 1/zeta(46, 0.99) of draws.
    let spec = spec_of(
        "scanproportion=1\nreadproportion=0\nupdateproportion=0\nminscanlength=5\n\
         maxscanlength=50\nscanlengthdistribution=zipfian\n",
    );
    let (_, mut s) = streams(&spec, 6, 1);
    let lengths: Vec<u32> = (0..50_000).map(|_| s[0].next_op().scan_length).collect();
    assert!(lengths.iter().all(|l| (5..=50).contains(l)));
    let p5 = lengths.iter().filter(|&&l| l == 5).count() as f64 / 50_000.0;
    let want = 1.0 / zeta(46, 0.99);
    assert!((p5 - want).abs() < 0.01, "{p5} vs {want}");
    let p6 = lengths.iter().filter(|&&l| l == 6).count() as f64 / 50_000.0;
    assert!(p6 < p5 && p6 > 0.05, "{p6}");
}

#[test]
fn sequential_walks_the_keys_across_clients() {
    let spec = spec_of(
        "recordcount=10\nrequestdistribution=sequential\nreadproportion=1\nupdateproportion=0\n",
    );
    let (_, mut s) = streams(&spec, 1, 2);
    let keys: Vec<u64> = (0..20).map(|i| s[i % 2].next_op().keynum).collect();
    let want: Vec<u64> = (0..20).map(|i| i % 10).collect();
    assert_eq!(keys, want);
    let distinct: HashSet<u64> = keys.into_iter().collect();
    assert_eq!(distinct.len(), 10);
}

/// memtier's `--ratio 2:3 --key-pattern P:S` over keys 10..=29 with four
/// clients: each client cycles two updates then three reads; updates walk
/// the client's own slice, reads walk the whole range from its start.
#[test]
fn memtier_mixes_cycle_and_key_patterns_follow_memtier() {
    let spec = spec_of(
        "recordcount=30\ninsertstart=10\ninsertcount=20\nfieldcount=1\n\
         kvbench.datamodel=plain\nreadproportion=3\nupdateproportion=2\n\
         kvbench.mix=cycle\nrequestdistribution=clientsequential\n\
         kvbench.writedistribution=parallel\n",
    );
    let w = Workload::new(&spec).unwrap();
    let rngs = client_rngs(1, 4);
    let mut s: Vec<OpStream> = rngs
        .into_iter()
        .enumerate()
        .map(|(i, r)| w.client_stream(r, i, 4).unwrap())
        .collect();
    let ops: Vec<Op> = (0..10).map(|_| s[1].next_op()).collect();
    let kinds: Vec<OpKind> = ops.iter().map(|o| o.kind).collect();
    use OpKind::{Read as R, Update as U};
    assert_eq!(kinds, [U, U, R, R, R, U, U, R, R, R]);
    // (29 - 10) / 4 + 1 = 5 keys per client: client 1 has 15..=19.
    let updates: Vec<u64> = ops
        .iter()
        .filter(|o| o.kind == U)
        .map(|o| o.keynum)
        .collect();
    assert_eq!(updates, [15, 16, 17, 18]);
    let reads: Vec<u64> = ops
        .iter()
        .filter(|o| o.kind == R)
        .map(|o| o.keynum)
        .collect();
    assert_eq!(reads, [10, 11, 12, 13, 14, 15]);
    // The last client takes the rest: 25..=29.
    let last: Vec<u64> = (0..15)
        .map(|_| s[3].next_op())
        .filter(|o| o.kind == U)
        .map(|o| o.keynum)
        .collect();
    assert_eq!(last, [25, 26, 27, 28, 29, 25]);
    // More clients than keys cannot be split.
    let e = w
        .client_stream(client_rngs(1, 1).remove(0), 0, 21)
        .unwrap_err();
    assert_eq!(e.property, "kvbench.writedistribution");
}

#[test]
fn a_cycled_mix_needs_whole_numbers() {
    let props = Properties::parse(
        "readproportion=0.9\nupdateproportion=0.1\nkvbench.mix=cycle\n",
        "t",
    )
    .unwrap();
    let e = WorkloadSpec::from_properties(&props).unwrap_err();
    assert!(e.to_string().contains("readproportion"), "{e}");
    assert!(e.to_string().contains("whole number"), "{e}");
}

/// memtier's `--command A --command-ratio 2 --command-key-pattern P
/// --command B --command-key-pattern S` over keys 10..=29 with four clients:
/// each client sends A twice, then B, over and over; A's keys walk the
/// client's own slice, B's the whole range, each template on its own.
#[test]
fn command_templates_cycle_in_order_each_with_its_key_pattern() {
    let spec = spec_of(
        "recordcount=30\ninsertstart=10\ninsertcount=20\nfieldcount=1\n\
         kvbench.datamodel=plain\nreadproportion=0\nupdateproportion=0\n\
         kvbench.mix=cycle\n\
         kvbench.command.1=SET __key__ __data__\nkvbench.command.1.ratio=2\n\
         kvbench.command.1.keypattern=P\n\
         kvbench.command.2=GET __key__\nkvbench.command.2.keypattern=S\n",
    );
    let w = Workload::new(&spec).unwrap();
    let mut s = w.client_stream(client_rngs(1, 4).remove(1), 1, 4).unwrap();
    let ops: Vec<Op> = (0..9).map(|_| s.next_op()).collect();
    let kinds: Vec<OpKind> = ops.iter().map(|o| o.kind).collect();
    use OpKind::{Command1 as A, Command2 as B};
    assert_eq!(kinds, [A, A, B, A, A, B, A, A, B]);
    let keys = |kind| -> Vec<u64> {
        ops.iter()
            .filter(|o| o.kind == kind)
            .map(|o| o.keynum)
            .collect()
    };
    assert_eq!(keys(A), [15, 16, 17, 18, 19, 15], "client 1's slice");
    assert_eq!(keys(B), [10, 11, 12], "the whole range from its start");
    // Random (YCSB) mixing keeps the ratios as weights.
    let mixed = spec_of(
        "readproportion=1\nupdateproportion=0\n\
         kvbench.command.1=PING\nkvbench.command.1.ratio=3\n",
    );
    assert_eq!(mixed.share(OpKind::Command1), 0.75);
    assert!(mixed.summary().contains("PING 75"), "{}", mixed.summary());
}

#[test]
fn command_template_properties_are_checked() {
    for (text, property) in [
        ("kvbench.command.2=PING\n", "kvbench.command.2"),
        ("kvbench.command.1.ratio=2\n", "kvbench.command.1.ratio"),
        (
            "kvbench.command.1=PING\nkvbench.command.1.keypattern=Q\n",
            "kvbench.command.1.keypattern",
        ),
        ("kvbench.command.1=\"PING\n", "kvbench.command.1"),
        ("kvbench.command.1=__data__\n", "kvbench.command.1"),
        (
            "kvbench.command.1=PING\nkvbench.command.1.ratio=-1\n",
            "kvbench.command.1.ratio",
        ),
    ] {
        let e =
            WorkloadSpec::from_properties(&Properties::parse(text, "t").unwrap()).expect_err(text);
        assert!(e.to_string().contains(property), "{text}: {e}");
    }
    // A ninth template is not one kvbench can run: warned as unknown.
    let (_, warnings) =
        WorkloadSpec::from_properties(&Properties::parse("kvbench.command.9=PING\n", "t").unwrap())
            .unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.property == "kvbench.command.9" && w.message.contains("1 to 8")),
        "{warnings:?}"
    );
}

/// A scaled-out worker's inserts land in a block of its own (worker 0's
/// where one process's would); its reads choose among the loaded records and
/// its own acknowledged inserts, never the gap between them.
#[test]
fn a_workers_inserts_land_in_its_own_block() {
    use kvbench_workload::InsertSpace;
    let spec = spec_of(
        "recordcount=500\noperationcount=20000\nreadproportion=0.6\nupdateproportion=0\n\
         insertproportion=0.3\nscanproportion=0.1\nrequestdistribution=latest\nmaxscanlength=10\n",
    );
    let mut blocks = Vec::new();
    for worker in 0..3u32 {
        let mut w = Workload::new(&spec).unwrap();
        let space = InsertSpace::of_worker(500, worker);
        w.set_space(space);
        let mut s = w.stream(client_rngs(5, 1).remove(0));
        // drive() checks that no insert reuses a record and no read passes
        // the acknowledged limit.
        let ops = drive(&mut s, 20_000, 25);
        let first = 500 + u64::from(worker) * InsertSpace::BLOCK;
        let inserted: Vec<u64> = ops
            .iter()
            .filter(|o| o.kind == OpKind::Insert)
            .map(|o| o.keynum)
            .collect();
        let want: Vec<u64> = (first..first + inserted.len() as u64).collect();
        assert_eq!(inserted, want, "worker {worker}");
        for o in ops.iter().filter(|o| o.kind != OpKind::Insert) {
            assert!(
                o.keynum < 500 || (first..first + inserted.len() as u64).contains(&o.keynum),
                "worker {worker}: {o:?} is neither loaded nor its own"
            );
        }
        assert!(
            ops.iter()
                .any(|o| o.kind == OpKind::Read && o.keynum >= first),
            "worker {worker} reads its own inserts (latest)"
        );
        assert_eq!(space.sequence(space.record(600)), 600);
        blocks.push(first..first + inserted.len() as u64);
    }
    for (i, a) in blocks.iter().enumerate() {
        for b in &blocks[i + 1..] {
            assert!(a.end <= b.start, "blocks overlap: {a:?} {b:?}");
        }
    }
}
