//! Client-side routing of keys to the servers of a pool, computed exactly as
//! the client libraries do it, so a kvbench run against several servers puts
//! every key where a real client would. Pure code, no I/O.
pub mod ketama;
