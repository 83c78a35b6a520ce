//! Operation streams: which operation, on which record, with which field
//! and scan length, next, with the semantics of YCSB CoreWorkload's
//! `doTransaction*` methods. No I/O, and no allocation per operation.
//!
//! A [`Workload`] is what CoreWorkload is after `init`: built once per run
//! from a spec, it holds what YCSB's client threads share (the
//! acknowledged-insert counter, the `sequential` position). Each client gets
//! an [`OpStream`] from it with its own seeded generator, so a run can be
//! repeated exactly from its stored seed, and client `i`'s stream depends
//! only on the seed and `i`.

use crate::generator::{
    AcknowledgedCounterGenerator, DiscreteGenerator, DistError, KeyChooser, UniformLongGenerator,
    ZipfianGenerator,
};
use crate::op::Op;
use crate::rng::Rng;
use crate::spec::{Mix, ScanLengthDistribution, SpecError, WorkloadSpec, COMMAND_KEY_PATTERNS};
use kvbench_model::OpKind;
use std::sync::Arc;

/// Where a process's inserts land among the record numbers. One process:
/// right after the loaded records, as YCSB's `transactioninsertkeysequence`.
/// A worker of a scaled-out run (one of several processes sharing no
/// counter): `offset` further on, a block of its own, as YCSB's
/// `insertstart` gives each of several client machines its own range; so
/// workers never insert the same record, and each reads only records that
/// exist (the loaded ones and its own inserts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InsertSpace {
    /// The loaded records: numbers below stay as they are.
    pub record_count: u64,
    /// How far this process's inserts are moved.
    pub offset: u64,
}

impl InsertSpace {
    /// Each worker's block: far beyond any run's inserts (2^40 per worker),
    /// and 1024 workers stay below 2^51.
    pub const BLOCK: u64 = 1 << 40;

    /// Worker `index`'s space (worker 0's is one process's).
    pub fn of_worker(record_count: u64, index: u32) -> InsertSpace {
        InsertSpace {
            record_count,
            offset: u64::from(index) * Self::BLOCK,
        }
    }

    /// The record number for the insert sequence's (or a chooser's) `n`.
    #[inline]
    pub fn record(self, n: u64) -> u64 {
        if n < self.record_count {
            n
        } else {
            n + self.offset
        }
    }

    /// The sequence's number for record `r` (the inverse of [`record`](Self::record)).
    #[inline]
    pub fn sequence(self, r: u64) -> u64 {
        if r < self.record_count {
            r
        } else {
            r - self.offset
        }
    }
}

/// Scan lengths (CoreWorkload's `scanlength` generator).
#[derive(Debug, Clone)]
enum ScanLengths {
    Uniform(UniformLongGenerator),
    Zipfian(ZipfianGenerator),
}

/// A run's generators, shared by its clients: build one per run phase with
/// [`Workload::new`], then one [`OpStream`] per client with
/// [`Workload::stream`].
#[derive(Debug, Clone)]
pub struct Workload {
    ops: DiscreteGenerator<OpKind>,
    /// `kvbench.mix=cycle`: each kind and how many in a row, in cycle order.
    cycle: Option<Arc<[(OpKind, u32)]>>,
    keys: KeyChooser,
    /// `kvbench.writedistribution`: the updates' own chooser.
    write_keys: Option<KeyChooser>,
    /// Each command template's chooser (`kvbench.command.N.keypattern`).
    command_keys: Vec<KeyChooser>,
    inserts: Arc<AcknowledgedCounterGenerator>,
    /// Where the inserts land (moved for a scaled-out worker).
    space: InsertSpace,
    fields: UniformLongGenerator,
    scan_lengths: ScanLengths,
    read_all_fields: bool,
    write_all_fields: bool,
}

impl Workload {
    /// The generators CoreWorkload's `init` builds for `spec`. The key
    /// chooser is sized with `spec.client.operation_count` (the Zipfian's
    /// insert fudge; set it to the run's operation count, or leave it `None`
    /// for a time-bound run). The insert-key sequence starts at
    /// `record_count`, as YCSB's `transactioninsertkeysequence` does.
    ///
    /// # Errors
    /// A [`SpecError`] for a spec that does not [`validate`](WorkloadSpec::validate).
    pub fn new(spec: &WorkloadSpec) -> Result<Workload, SpecError> {
        spec.validate()?;
        let mut ops = DiscreteGenerator::new();
        for (kind, weight) in OpKind::ALL.iter().zip(spec.weights()) {
            ops.add_value(weight, *kind);
        }
        let inserts = Arc::new(AcknowledgedCounterGenerator::new(spec.record_count));
        let keys = KeyChooser::new(
            &spec.request_distribution,
            &spec.key_space(),
            Arc::clone(&inserts),
        )
        .map_err(|e| dist_error("requestdistribution", e))?;
        let write_keys = match &spec.write_distribution {
            Some(d) => Some(
                KeyChooser::new(d, &spec.key_space(), Arc::clone(&inserts))
                    .map_err(|e| dist_error("kvbench.writedistribution", e))?,
            ),
            None => None,
        };
        let command_keys = spec
            .commands
            .iter()
            .zip(COMMAND_KEY_PATTERNS)
            .map(|(c, property)| {
                KeyChooser::new(&c.keys, &spec.key_space(), Arc::clone(&inserts))
                    .map_err(|e| dist_error(property, e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let cycle = (spec.mix == Mix::Cycle).then(|| {
            let weights = spec.weights();
            Mix::CYCLE_ORDER
                .iter()
                .map(|&k| (k, weights[k.index()] as u32))
                .filter(|&(_, n)| n > 0)
                .collect::<Vec<_>>()
                .into()
        });
        let fields = UniformLongGenerator::try_new(0, u64::from(spec.field_count) - 1)
            .map_err(|e| dist_error("fieldcount", e))?;
        let (min, max) = (
            u64::from(spec.min_scan_length),
            u64::from(spec.max_scan_length),
        );
        let scan_lengths = match spec.scan_length_distribution {
            ScanLengthDistribution::Uniform => ScanLengths::Uniform(
                UniformLongGenerator::try_new(min, max)
                    .map_err(|e| dist_error("minscanlength", e))?,
            ),
            ScanLengthDistribution::Zipfian => ScanLengths::Zipfian(
                ZipfianGenerator::new(min, max).map_err(|e| dist_error("minscanlength", e))?,
            ),
        };
        Ok(Workload {
            ops,
            cycle,
            keys,
            write_keys,
            command_keys,
            space: InsertSpace::of_worker(spec.record_count, 0),
            inserts,
            fields,
            scan_lengths,
            read_all_fields: spec.read_all_fields,
            write_all_fields: spec.write_all_fields,
        })
    }

    /// A client's stream, drawing from `rng` (one of [`crate::client_rngs`]).
    /// Streams from one `Workload` share its insert counter.
    pub fn stream(&self, rng: Rng) -> OpStream {
        // A clone shares the insert counter (an Arc) and copies the rest.
        OpStream {
            rng,
            w: self.clone(),
            cycle_at: (0, 0),
            client: 0,
        }
    }

    /// Client `client`'s stream of `clients`: as [`stream`](Self::stream),
    /// with the key choosers made that client's (memtier's parallel
    /// pattern gives each client its own slice of the keys).
    ///
    /// # Errors
    /// A [`SpecError`] naming the distribution that cannot serve this many
    /// clients (parallel with fewer keys than clients).
    pub fn client_stream(
        &self,
        rng: Rng,
        client: usize,
        clients: usize,
    ) -> Result<OpStream, SpecError> {
        let mut s = self.stream(rng);
        s.client = client as u32;
        s.w.keys
            .for_client(client, clients)
            .map_err(|e| clients_error("requestdistribution", e))?;
        if let Some(w) = &mut s.w.write_keys {
            w.for_client(client, clients)
                .map_err(|e| clients_error("kvbench.writedistribution", e))?;
        }
        for (c, property) in s.w.command_keys.iter_mut().zip(COMMAND_KEY_PATTERNS) {
            c.for_client(client, clients)
                .map_err(|e| clients_error(property, e))?;
        }
        Ok(s)
    }

    /// The run's insert-key sequence, shared by all its streams (numbers
    /// of the sequence: [`space`](Self::space) maps them to records).
    pub fn inserts(&self) -> &Arc<AcknowledgedCounterGenerator> {
        &self.inserts
    }

    /// Where this process's inserts land.
    pub fn space(&self) -> InsertSpace {
        self.space
    }

    /// Moves this process's inserts (a scaled-out worker's block); set
    /// before any stream is made.
    pub fn set_space(&mut self, space: InsertSpace) {
        self.space = space;
    }
}

fn dist_error(property: &'static str, e: DistError) -> SpecError {
    SpecError {
        property: match &e {
            DistError::InvalidParameter { name, .. } if !name.contains(' ') => name,
            _ => property,
        },
        message: e.to_string(),
    }
}

fn clients_error(property: &'static str, e: DistError) -> SpecError {
    SpecError {
        property,
        message: e.to_string(),
    }
}

/// One client's endless stream of operations.
#[derive(Debug, Clone)]
pub struct OpStream {
    rng: Rng,
    /// This stream's copy of the workload's generators (the insert counter shared).
    w: Workload,
    /// `kvbench.mix=cycle`: the entry of the cycle and how many of it are done.
    cycle_at: (usize, u32),
    /// Which client this stream is ([`Op::client`]).
    client: u32,
}

impl OpStream {
    /// The next operation, drawn as CoreWorkload's `doTransaction` draws it:
    /// the kind from the mix; then for a read, update, scan or
    /// read-modify-write the record from the request distribution, redrawn
    /// until it is at most the last acknowledged insert; for an insert the
    /// next number of the shared insert-key sequence (acknowledge it with
    /// [`acknowledge_insert`](Self::acknowledge_insert) once its request has
    /// been answered); then the scan length, and the field(s) where not all
    /// fields are read or written, in YCSB's order.
    // Always inlined: it runs once per operation, and since it grew
    // (cycles, command keys, insert spaces) LLVM kept it out of line, which
    // cost 38 instructions per operation in case (c) of
    // bench/efficiency/instructions (1,801 -> 1,763).
    #[inline(always)]
    pub fn next_op(&mut self) -> Op {
        let kind = match &self.w.cycle {
            Some(cycle) => {
                let (entry, done) = &mut self.cycle_at;
                let (kind, n) = cycle[*entry];
                *done += 1;
                if *done >= n {
                    *done = 0;
                    *entry = (*entry + 1) % cycle.len();
                }
                kind
            }
            None => *self.w.ops.next_value(&mut self.rng),
        };
        if kind == OpKind::Insert {
            return Op::insert(self.w.space.record(self.w.inserts.next_value()));
        }
        let command_keys = kind
            .command_index()
            .and_then(|i| self.w.command_keys.get_mut(i));
        let n = match (command_keys, &mut self.w.write_keys, kind) {
            (Some(c), _, _) => c.next_keynum(&mut self.rng),
            (None, Some(w), OpKind::Update) => w.next_keynum(&mut self.rng),
            _ => self.w.keys.next_keynum(&mut self.rng),
        };
        let keynum = self.w.space.record(n);
        let mut op = Op {
            kind,
            keynum,
            field: None,
            read_field: None,
            scan_length: 0,
            client: self.client,
        };
        match kind {
            OpKind::Read => op.field = self.field_unless(self.w.read_all_fields),
            OpKind::Update => op.field = self.field_unless(self.w.write_all_fields),
            OpKind::Scan => {
                op.scan_length = match &mut self.w.scan_lengths {
                    ScanLengths::Uniform(g) => g.next_value(&mut self.rng),
                    ScanLengths::Zipfian(g) => g.next_value(&mut self.rng),
                } as u32;
                op.field = self.field_unless(self.w.read_all_fields);
            }
            OpKind::ReadModifyWrite => {
                op.read_field = self.field_unless(self.w.read_all_fields);
                op.field = self.field_unless(self.w.write_all_fields);
            }
            _ => {}
        }
        op
    }

    /// YCSB's `fieldchooser`: a field uniformly, unless all are wanted.
    #[inline]
    fn field_unless(&mut self, all: bool) -> Option<u32> {
        (!all).then(|| self.w.fields.next_value(&mut self.rng) as u32)
    }

    /// Records that the insert of `keynum` (from [`next_op`](Self::next_op))
    /// has been answered, so reads may now choose it. YCSB acknowledges in a
    /// `finally`, whatever the outcome; do the same (also for inserts lost
    /// with a failed connection), or the readable range stops growing at the
    /// first unacknowledged key.
    ///
    /// # Errors
    /// [`DistError::Acknowledge`] when `keynum` was already acknowledged, or
    /// is 2^20 or more past the oldest unacknowledged insert.
    pub fn acknowledge_insert(&self, keynum: u64) -> Result<(), DistError> {
        self.w.inserts.acknowledge(self.w.space.sequence(keynum))
    }

    /// The largest record number reads may choose now.
    pub fn last_readable(&self) -> Option<u64> {
        self.w.inserts.last_value().map(|n| self.w.space.record(n))
    }

    /// The generator, for values that belong to this stream's operations.
    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }
}
