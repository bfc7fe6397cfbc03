//! The black-box suites on real Spin: each test starts its own `spin up`
//! processes (the pinned Spin 4.0.2, free loopback ports, temporary state and
//! log directories) on a fresh store of each of Spin's backends, and drives
//! them over HTTP as a client would, reading the access log from Spin's own
//! log files as an operator would.

mod capacity;
mod clients;
mod concurrency;
mod contract;
mod dynamo;
mod edge;
mod edge_build;
mod foreign_store;
mod history;
mod idempotency;
mod instances;
mod moving;
mod operations;
mod outage;
mod reference;
mod releases;
mod sync;
mod traces;
mod upgrade;
mod walks;
