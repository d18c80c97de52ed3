//! CGI/1.1 plumbing shared by the programs: discarding the request body and
//! writing the response straight to the stdout file descriptor.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::process::ExitCode;

/// Reads and drops the request body (`CONTENT_LENGTH` bytes of stdin), so a
/// server that writes the whole body before reading our output (POST) never
/// blocks on a full pipe. A missing or malformed length means no body; a
/// body shorter than announced is not an error.
pub fn discard_body() {
    let Some(len) =
        std::env::var_os("CONTENT_LENGTH").and_then(|v| v.to_str().and_then(|s| s.trim().parse::<u64>().ok()))
    else {
        return;
    };
    if len > 0 {
        let _ = io::copy(&mut io::stdin().lock().take(len), &mut io::sink());
    }
}

/// Unbuffered stdout: Rust's `Stdout` is line-buffered, which would split
/// binary output at every newline byte. One `dup`, then every `write_all`
/// is as few `write(2)` calls as the kernel allows.
pub fn raw_stdout() -> io::Result<File> {
    Ok(File::from(io::stdout().as_fd().try_clone_to_owned()?))
}

/// Writes a whole response to stdout; the exit code says whether it got out.
pub fn respond(program: &str, response: &[u8]) -> ExitCode {
    match raw_stdout().and_then(|mut out| out.write_all(response)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => write_failed(program, &e),
    }
}

/// Reports a failed write on stderr (the server's error log) and fails.
pub fn write_failed(program: &str, e: &io::Error) -> ExitCode {
    let _ = writeln!(io::stderr(), "{program}: cannot write the response: {e}");
    ExitCode::FAILURE
}
