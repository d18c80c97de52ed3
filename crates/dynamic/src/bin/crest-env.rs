//! `crest-env`: the WebBench-style CGI program crest installs on targets. It
//! answers every request with the CGI/1.1 environment it was started with,
//! as an HTML page of exactly 1024 bytes (see `crest_dynamic::env_page`).
//! A request body (POST) is read and discarded first. Always exits 0 unless
//! the response cannot be written.

use std::os::unix::ffi::OsStringExt;
use std::process::ExitCode;

use crest_dynamic::cgi;
use crest_dynamic::env_page::{self, HEADER, PAGE_BYTES};

fn main() -> ExitCode {
    cgi::discard_body();
    let page = env_page::render_vars(|name| std::env::var_os(name).map(OsStringExt::into_vec));
    let mut response = [0u8; HEADER.len() + PAGE_BYTES];
    response[..HEADER.len()].copy_from_slice(HEADER.as_bytes());
    response[HEADER.len()..].copy_from_slice(&page);
    cgi::respond("crest-env", &response)
}
