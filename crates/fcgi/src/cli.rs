//! crest-fcgi's command line: `--socket PATH` | `--listen IP:PORT`,
//! `--threads N`, `--specweb99-dir DIR`. Parsing only: it returns a [`Config`] or the one-line
//! message that says what is wrong; it must not print or exit (`main` does).

use std::ffi::OsString;
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::path::PathBuf;

use crate::listen::Address;

/// Most runtime threads accepted: far more than any machine crest targets
/// has cores, low enough to catch a typo.
pub const MAX_THREADS: usize = 1024;

pub const USAGE: &str = "\
usage: crest-fcgi (--socket PATH | --listen IP:PORT) [--threads N] [--specweb99-dir DIR]

crest's FastCGI responder: answers .../crest-env and /dyn/env with the
1024-byte environment page of the CGI program crest-env, .../crest-bytes
with crest-bytes' ?size=N body, .../specweb99/dynamic with SPECweb99's
dynamic set (as the CGI program crest-specweb99), anything else with 404.

  --socket PATH        listen on a unix socket (mode 0666; a stale file is replaced)
  --listen IP:PORT     listen on TCP, e.g. 127.0.0.1:9000
  --threads N          runtime threads (default: one per CPU)
  --specweb99-dir DIR  SPECweb99's tables and POST log (made if missing; files
                       are read under the request's DOCUMENT_ROOT)

With neither --socket nor --listen, listens on the socket a web server passed
as fd 0 (lighttpd's bin-path, h2o's fastcgi.spawn). SIGTERM or SIGINT stops it.
";

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Serve(Config),
    Help,
    Version,
}

/// A validated configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub address: Address,
    pub threads: NonZeroUsize,
    pub specweb99_dir: Option<PathBuf>,
}

/// Parses the arguments after the program name. `default_threads` is what
/// `--threads` defaults to (the caller's available parallelism).
pub fn parse(args: impl IntoIterator<Item = OsString>, default_threads: NonZeroUsize) -> Result<Command, String> {
    let mut socket: Option<PathBuf> = None;
    let mut listen: Option<SocketAddr> = None;
    let mut threads = default_threads;
    let mut specweb99_dir: Option<PathBuf> = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg.into_string().map_err(|a| format!("unknown argument {a:?}: see --help"))?;
        // `--name=value` and `--name value` both work.
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name.to_owned(), Some(value.into())),
            _ => (arg, None),
        };
        let mut value =
            || inline.clone().or_else(|| args.next()).ok_or_else(|| format!("{name} needs a value: see --help"));
        match name.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            "--socket" => {
                let path = PathBuf::from(value()?);
                if path.as_os_str().is_empty() {
                    return Err("--socket needs a path, e.g. --socket /tmp/crest-fcgi.sock".into());
                }
                socket = Some(path);
            }
            "--listen" => listen = Some(parse_listen(value()?)?),
            "--threads" => threads = parse_threads(value()?)?,
            "--specweb99-dir" => {
                let dir = PathBuf::from(value()?);
                if dir.as_os_str().is_empty() {
                    return Err("--specweb99-dir needs a directory, e.g. --specweb99-dir /tmp/specweb99".into());
                }
                specweb99_dir = Some(dir);
            }
            _ => return Err(format!("unknown argument {name:?}: see --help")),
        }
    }
    let address = match (socket, listen) {
        (Some(_), Some(_)) => return Err("give --socket or --listen, not both".into()),
        (Some(path), None) => Address::Socket(path),
        (None, Some(addr)) => Address::Tcp(addr),
        (None, None) => Address::Inherited,
    };
    Ok(Command::Serve(Config { address, threads, specweb99_dir }))
}

fn parse_listen(value: OsString) -> Result<SocketAddr, String> {
    let text = value.to_string_lossy();
    text.parse().map_err(|_| format!("--listen: expected IP:PORT, e.g. 127.0.0.1:9000 (got {text:?})"))
}

fn parse_threads(value: OsString) -> Result<NonZeroUsize, String> {
    let text = value.to_string_lossy();
    text.parse::<NonZeroUsize>()
        .ok()
        .filter(|n| n.get() <= MAX_THREADS)
        .ok_or_else(|| format!("--threads: expected a whole number from 1 to {MAX_THREADS} (got {text:?})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Command, String> {
        let four = NonZeroUsize::new(4).expect("4 is not 0");
        parse(args.iter().map(OsString::from), four)
    }

    fn serve(address: Address, threads: usize) -> Command {
        let threads = NonZeroUsize::new(threads).expect("test threads are not 0");
        Command::Serve(Config { address, threads, specweb99_dir: None })
    }

    #[test]
    fn accepted_forms() {
        assert_eq!(run(&[]), Ok(serve(Address::Inherited, 4)));
        assert_eq!(run(&["--socket", "/tmp/s", "--threads", "2"]), Ok(serve(Address::Socket("/tmp/s".into()), 2)));
        assert_eq!(
            run(&["--listen=127.0.0.1:9000"]),
            Ok(serve(Address::Tcp("127.0.0.1:9000".parse().expect("valid")), 4))
        );
        assert_eq!(run(&["--socket", "/s", "--help"]), Ok(Command::Help));
        assert_eq!(run(&["-V"]), Ok(Command::Version));
        let Ok(Command::Serve(config)) = run(&["--socket", "/s", "--specweb99-dir=/site/specweb99"]) else {
            panic!("--specweb99-dir is accepted");
        };
        assert_eq!(config.specweb99_dir, Some(PathBuf::from("/site/specweb99")));
    }

    #[test]
    fn errors_name_the_problem_and_the_fix() {
        let err = |args: &[&str]| run(args).expect_err("bad arguments");
        assert_eq!(err(&["--socket", "/a", "--listen", "127.0.0.1:1"]), "give --socket or --listen, not both");
        assert!(err(&["--listen", "localhost"]).contains("expected IP:PORT, e.g. 127.0.0.1:9000 (got \"localhost\")"));
        assert!(err(&["--threads", "0"]).contains("from 1 to 1024 (got \"0\")"));
        assert!(err(&["--threads", "1025"]).contains("(got \"1025\")"));
        assert_eq!(err(&["--socket"]), "--socket needs a value: see --help");
        assert_eq!(err(&["--socket="]), "--socket needs a path, e.g. --socket /tmp/crest-fcgi.sock");
        assert_eq!(err(&["--port", "1"]), "unknown argument \"--port\": see --help");
    }
}
