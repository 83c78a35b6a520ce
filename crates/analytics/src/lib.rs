//! PageRank for kvbench's analytics workload (paper D): the graphs
//! ([`graph`], [`rmat`], [`snap`]) and the reference computation every
//! implementation (Memcached and Redis drivers, Redis Lua, Spark) is
//! checked against ([`pagerank`]).
//!
//! A graph's nodes are dense ids `0..n`; edges are kept as compressed
//! sparse rows (each node's out-neighbours together), which is both what
//! the reference iterates and what the key-value data model stores per
//! node (one neighbour list, one rank).
#![deny(missing_docs)]

pub mod graph;
pub mod pagerank;
pub mod rmat;
pub mod snap;

pub use graph::Graph;
pub use pagerank::{agree, pagerank, Disagreement, PageRank};
