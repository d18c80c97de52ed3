//! crest-replay's tests, one binary: every named format on real-looking
//! lines, custom format strings, lines cut at every byte, the table
//! (sessions, gaps, order, tallies, errors, the cache), a fuzz target and
//! the memory of a million-line table, and logs real servers wrote.

mod formats;
mod fuzz_line;
mod million;
mod servers;
mod table;
