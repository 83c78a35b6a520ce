//! kvbench-engine (being written).
