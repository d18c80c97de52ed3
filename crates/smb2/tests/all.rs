//! The integration tests as one test binary: each file below is one module, so `cargo test`
//! links one binary for this crate instead of one per file.

#[path = "live.rs"]
mod live;
#[path = "replay.rs"]
mod replay;
#[path = "session.rs"]
mod session;

mod support;

#[global_allocator]
static ALLOCATOR: support::alloc::Counting = support::alloc::Counting;
