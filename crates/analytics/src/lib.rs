//! PageRank for kvbench's analytics workload (paper D): the graphs
//! ([`graph`], [`rmat`], [`snap`]), the reference computation every
//! implementation is checked against ([`pagerank`]), and the
//! implementations themselves: client-side map/reduce drivers over
//! Memcached, Redis and Valkey ([`mapreduce`], on their own small wire
//! client [`kv`]), Redis Lua ([`lua`]) and Spark ([`spark`], kvbench's
//! PySpark package as a child process). The command line only picks,
//! starts servers, stores and prints.
//!
//! A graph's nodes are dense ids `0..n`; edges are kept as compressed
//! sparse rows (each node's out-neighbours together), which is both what
//! the reference iterates and what the key-value data model stores per
//! node (one neighbour list, one rank).
#![deny(missing_docs)]

pub mod graph;
pub mod kv;
pub mod lua;
pub mod mapreduce;
pub mod pagerank;
pub mod rmat;
pub mod snap;
pub mod spark;

pub use graph::Graph;
pub use pagerank::{agree, pagerank, Disagreement, PageRank};
