//! kvbench-proto (being written).
