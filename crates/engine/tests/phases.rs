//! The engine's integration tests, built into one binary: phases run
//! through `kvbench_engine` against real redis-server and memcached
//! processes (and Redis clusters) started on free loopback ports by
//! `kvbench-servers`, whose guards stop them, also when an assertion
//! fails. The helpers under `support/` are shared with kvbench's own tests.

#[path = "support/fake_server.rs"]
mod fake_server;
#[path = "support/load.rs"]
mod load;
#[path = "support/serial.rs"]
mod serial;

mod aerospike;
mod cluster;
mod engine_timing;
mod load_phase;
mod pipelined;
mod pool;
mod run_phase;
mod ycsb;
mod zunion;
