//! Runs the crest target server from the command line until Ctrl-C/SIGTERM.
//! Meant for manual checks and benchmarks (e.g. pinned with `taskset`):
//!
//!     cargo run --release -p crest-target --example serve -- --docroot DIR [--port 8080]
//!         [--host 127.0.0.1] [--threads N] [--tls] [--tls-port P] [--cgi-dir DIR]
//!         [--tls-dir DIR] [--access-log FILE] [--cache-max BYTES]

use std::process::ExitCode;

use crest_target::{ServeConfig, Server};

fn main() -> ExitCode {
    let config = match parse(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(msg) => {
            eprintln!("serve: {msg}");
            return ExitCode::from(2);
        }
    };
    let server = match Server::start(config) {
        Ok(server) => server,
        Err(e) => {
            eprintln!("serve: {e}");
            return ExitCode::FAILURE;
        }
    };
    for url in server.urls() {
        println!("{url}");
    }
    wait_for_signal();
    server.stop();
    ExitCode::SUCCESS
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<ServeConfig, String> {
    let mut config = ServeConfig::default();
    while let Some(flag) = args.next() {
        if flag == "--tls" {
            config.tls = true;
            continue;
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = |_| format!("bad value for {flag}: {value}");
        match flag.as_str() {
            "--docroot" => config.docroot = value.into(),
            "--host" => config.host = value.parse().map_err(|_| bad(()))?,
            "--port" => config.port = value.parse().map_err(|_| bad(()))?,
            "--threads" => config.threads = value.parse().map_err(|_| bad(()))?,
            "--tls-port" => config.tls_port = Some(value.parse().map_err(|_| bad(()))?),
            "--cgi-dir" => config.cgi_dir = Some(value.into()),
            "--tls-dir" => config.tls_dir = Some(value.into()),
            "--access-log" => config.access_log = Some(value.into()),
            "--cache-max" => config.memory_cache_max_file_bytes = value.parse().map_err(|_| bad(()))?,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(config)
}

fn wait_for_signal() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    });
}
