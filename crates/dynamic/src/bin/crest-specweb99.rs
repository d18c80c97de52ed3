//! `crest-specweb99`: SPECweb99's dynamic set (GET, custom-ad GET, POST,
//! Reset, Fetch) as a real CGI program, one process per request (see
//! `crest_dynamic::specweb99_cgi`). Its state lives in `../specweb99` from
//! the directory it is installed in; files are read under `DOCUMENT_ROOT`.
//! Always exits 0 unless the response cannot be written.

use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use crest_dynamic::{cgi, specweb99_cgi};

const NAME: &str = "crest-specweb99";
const NO_PATH: &[u8] =
    b"Status: 500 Internal Server Error\r\nContent-Type: text/plain\r\n\r\ncrest-specweb99: cannot find its own path\n";

fn main() -> ExitCode {
    let exe = std::env::current_exe().ok();
    let Some(state_dir) = exe.as_deref().and_then(specweb99_cgi::state_dir_for) else {
        cgi::discard_body();
        return cgi::respond(NAME, NO_PATH);
    };
    let now =
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let env = |name: &str| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned());
    let out = specweb99_cgi::run(env, &mut std::io::stdin().lock(), &state_dir, now, std::process::id());
    cgi::respond(NAME, &out)
}
