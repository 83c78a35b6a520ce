//! kvbench-target (being written).
