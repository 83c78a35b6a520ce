//! kvbench's integration tests, built into one binary. Every test that needs
//! a server starts a real redis-server or memcached on a free loopback port
//! (through kvbench itself or `kvbench-servers`), and the guards stop them,
//! also when an assertion fails.

mod doc_commands;
mod inputs;
#[path = "../../engine/tests/support/load.rs"]
mod load;
#[path = "../../engine/tests/support/serial.rs"]
mod serial;
mod util;

mod aerospike;
mod analytics;
mod bad_input;
mod bad_replies;
mod browser;
mod cache;
mod catalogue;
mod causes;
mod commands;
mod connections;
mod cpus;
mod documented;
mod experiment;
mod export;
mod faults;
mod findmax;
mod interrupt;
mod lifecycle;
mod live;
mod manage;
mod memtier;
mod netns;
mod pool;
mod postgres;
mod reliability;
mod report;
mod reproduce;
mod scaleout;
mod split;
mod stability;
mod systems;
mod targets;
mod verdicts;
mod ycsb;
mod zunion;
