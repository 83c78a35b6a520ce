//! kvbench-workload (being written).
