//! The integration tests as one test binary: each file below is one module, so `cargo test`
//! links one binary instead of one per file (linking dominates a clean test build). alloc.rs
//! stays a binary of its own: its counting global allocator must see only its own run.

#[path = "buffers.rs"]
mod buffers;
#[path = "drain.rs"]
mod drain;
#[path = "fuzz_h1.rs"]
mod fuzz_h1;
#[path = "fuzz_h2.rs"]
mod fuzz_h2;
#[path = "fuzz_h3.rs"]
mod fuzz_h3;
#[path = "fuzz_loadfile.rs"]
mod fuzz_loadfile;
#[path = "fuzz_smb2.rs"]
mod fuzz_smb2;
#[path = "fuzz_support.rs"]
mod fuzz_support;
#[path = "gate.rs"]
mod gate;
#[path = "h1_chunked.rs"]
mod h1_chunked;
#[path = "h1_decode.rs"]
mod h1_decode;
#[path = "h1_encode.rs"]
mod h1_encode;
#[path = "h2_frame.rs"]
mod h2_frame;
#[path = "h2_hostile.rs"]
mod h2_hostile;
#[path = "h2_hpack.rs"]
mod h2_hpack;
#[path = "h3_frame.rs"]
mod h3_frame;
#[path = "h3_hostile.rs"]
mod h3_hostile;
#[path = "hostile.rs"]
mod hostile;
#[path = "nap.rs"]
mod nap;
#[path = "pages.rs"]
mod pages;
#[path = "part.rs"]
mod part;
#[path = "replay.rs"]
mod replay;
#[path = "schedule_and_merge.rs"]
mod schedule_and_merge;
#[path = "script.rs"]
mod script;
#[path = "specweb99.rs"]
mod specweb99;
#[path = "table.rs"]
mod table;
#[path = "tls.rs"]
mod tls;
#[path = "wire.rs"]
mod wire;

mod support;
