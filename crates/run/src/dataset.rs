//! What a run's servers hold at most, in the figures each system sizes its
//! memory limit and estimates its resident memory from
//! (`kvbench_servers::DataSize`): shared by the deployment, the memory
//! check and `--max-memory`'s shares.

use crate::settings::RunSettings;
use kvbench_servers::DataSize;

/// What `s`'s servers hold at most: what a system sizes its limit and
/// estimates its memory from.
pub fn data_size(s: &RunSettings) -> DataSize {
    let spec = &s.spec;
    let keys = spec.key_namer();
    let key_bytes = keys.max_len() as u64;
    let value_bytes =
        kvbench_engine::driver::Driver::new(s.system, spec, keys).memcached_value_len() as u64;
    DataSize {
        records: s.records_at_most(),
        key_bytes,
        record_bytes: spec.record_bytes(),
        value_bytes,
        names_bytes: u64::from(spec.field_count) * (spec.field_name_prefix.len() as u64 + 4),
        sorted_sets: spec.data_model.layout == kvbench_workload::Layout::SortedSets,
    }
}
