//! crest's delay line: the sans-IO parts (the line itself, its seeded generator, its lateness
//! histogram and its command line), tested on plain numbers. `main.rs` is the I/O around them: TUN
//! devices, one poll loop, the ready and stats files.

pub mod cli;
pub mod lateness;
pub mod line;
pub mod rng;
