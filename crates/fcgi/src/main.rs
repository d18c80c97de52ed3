//! `crest-fcgi`: parse the command line, open the listener, serve until
//! SIGTERM or SIGINT. Prints nothing on success; any error is one line on
//! stderr, with exit code 2 for bad arguments or a listener that cannot be
//! opened and 1 for anything that fails later.

use std::num::NonZeroUsize;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crest_dynamic::specweb99_state::State;
use crest_fcgi::cli::{self, Command, Config};
use crest_fcgi::connection::Limits;
use crest_fcgi::reply::Site;
use crest_fcgi::{limits, listen, server};
use tokio::signal::unix::{signal, SignalKind};

/// How long connections still running at shutdown get to finish.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

fn main() -> ExitCode {
    let threads = std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN);
    let config = match cli::parse(std::env::args_os().skip(1), threads) {
        Ok(Command::Serve(config)) => config,
        Ok(Command::Help) => {
            print!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Ok(Command::Version) => {
            println!("crest-fcgi {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Err(message) => return fail(&message, 2),
    };
    match serve(&config) {
        Ok(()) => ExitCode::SUCCESS,
        Err((message, code)) => fail(&message, code),
    }
}

fn serve(config: &Config) -> Result<(), (String, u8)> {
    let limits = Limits { max_conns: limits::raise_open_files() };
    let specweb99 = match &config.specweb99_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| (format!("cannot use --specweb99-dir {}: {e}", dir.display()), 2))?;
            Some(State::new(dir))
        }
        None => None,
    };
    let site = Arc::new(Site { specweb99 });
    // The runtime first, so a runtime that cannot start never leaves a socket file behind.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.threads.get())
        .thread_name("crest-fcgi")
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| (format!("cannot start the runtime: {e}"), 1))?;
    let served = runtime.block_on(async {
        // The signals before the socket: a SIGTERM sent as soon as the socket accepts (by a
        // supervisor, or a test) must stop it cleanly, not kill it with its socket file left.
        let watch = |kind| signal(kind).map_err(|e| (format!("cannot watch signals: {e}"), 1));
        let (mut term, mut int) = (watch(SignalKind::terminate())?, watch(SignalKind::interrupt())?);
        let listener = listen::open(&config.address).map_err(|e| (e.to_string(), 2))?;
        let stop = async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        };
        server::run(listener, limits, site, stop).await.map_err(|e| (format!("cannot serve: {e}"), 1))
    });
    // Kept-alive connections never end by themselves: stop waiting for them.
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    served
}

fn fail(message: &str, code: u8) -> ExitCode {
    eprintln!("crest-fcgi: error: {message}");
    ExitCode::from(code)
}
