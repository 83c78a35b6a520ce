//! kvbench-report (being written).
