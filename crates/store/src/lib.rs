//! kvbench-store (being written).
