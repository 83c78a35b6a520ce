//! A client's operation stream: which operation, on which record, next.
//!
//! Deterministic given the spec and the client's generator, so a run can be
//! repeated exactly from its stored seed. The operation is chosen the way
//! YCSB's `DiscreteGenerator` chooses it and the record the way its
//! `UniformLongGenerator` does; only the random source differs (seeded here).

use crate::dist::{DiscreteGenerator, UniformLongGenerator};
use crate::op::Op;
use crate::rng::Rng;
use crate::spec::{RequestDistribution, WorkloadSpec};
use kvbench_model::OpKind;
use rand_core::RngCore;

/// One client's endless stream of operations.
#[derive(Debug, Clone)]
pub struct OpStream {
    rng: Rng,
    ops: DiscreteGenerator<OpKind>,
    keys: UniformLongGenerator,
    field_count: u32,
    read_all_fields: bool,
    write_all_fields: bool,
}

impl OpStream {
    /// A stream for `spec` drawing from `rng` (one of [`crate::client_rngs`]).
    pub fn new(spec: &WorkloadSpec, rng: Rng) -> OpStream {
        let mut ops = DiscreteGenerator::new();
        for (kind, weight) in OpKind::ALL.iter().zip(spec.weights()) {
            if weight > 0.0 {
                ops.add_value(weight, *kind);
            }
        }
        let keys = match spec.request_distribution {
            RequestDistribution::Uniform => {
                UniformLongGenerator::new(0, spec.record_count.saturating_sub(1))
            }
        };
        OpStream {
            rng,
            ops,
            keys,
            field_count: spec.field_count,
            read_all_fields: spec.read_all_fields,
            write_all_fields: spec.write_all_fields,
        }
    }

    /// The next operation.
    #[inline]
    pub fn next_op(&mut self) -> Op {
        let kind = *self.ops.next_value(&mut self.rng);
        let keynum = self.keys.next_value(&mut self.rng);
        let single_field = match kind {
            OpKind::Read => !self.read_all_fields,
            OpKind::Update => !self.write_all_fields,
            OpKind::Insert => false,
        };
        // YCSB picks the field uniformly (its `fieldchooser`).
        let field =
            single_field.then(|| (self.rng.next_u64() % u64::from(self.field_count)) as u32);
        Op {
            kind,
            keynum,
            field,
        }
    }

    /// The generator, for values that belong to this stream's operations.
    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }
}
