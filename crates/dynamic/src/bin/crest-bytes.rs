//! `crest-bytes`: the WebStone-style CGI program crest installs on targets.
//! `?size=N` (default 10240, at most 100000000) answers N pseudo-random
//! bytes that depend only on N (see `crest_dynamic::bytes`), written in
//! 64 KiB blocks; a bad size is `Status: 400`. A request body (POST) is read
//! and discarded first. Always exits 0 unless the response cannot be written.

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::process::ExitCode;

use crest_dynamic::bytes::{self, Stream, BAD_REQUEST, BLOCK};
use crest_dynamic::cgi;

const NAME: &str = "crest-bytes";
/// Room before the first block for the header, so it goes out in the same
/// write as the first bytes of the body.
const HEADER_ROOM: usize = 128;

fn main() -> ExitCode {
    cgi::discard_body();
    let query = std::env::var_os("QUERY_STRING").unwrap_or_default();
    let Some(size) = bytes::parse_size(query.as_bytes()) else {
        return cgi::respond(NAME, BAD_REQUEST.as_bytes());
    };
    let header = bytes::header(size);
    let mut out = match cgi::raw_stdout() {
        Ok(out) => out,
        Err(e) => return cgi::write_failed(NAME, &e),
    };
    let mut buf = [0u8; HEADER_ROOM + BLOCK];
    let start = HEADER_ROOM - header.len();
    buf[start..HEADER_ROOM].copy_from_slice(header.as_bytes());
    let mut stream = Stream::new(size);
    let mut left = size;
    let mut from = start;
    loop {
        // `left` <= MAX_SIZE, so the cast cannot truncate on any target.
        let n = BLOCK.min(left as usize);
        stream.fill(&mut buf[HEADER_ROOM..HEADER_ROOM + n]);
        if let Err(e) = out.write_all(&buf[from..HEADER_ROOM + n]) {
            return cgi::write_failed(NAME, &e);
        }
        left -= n as u64;
        if left == 0 {
            return ExitCode::SUCCESS;
        }
        from = HEADER_ROOM;
    }
}
