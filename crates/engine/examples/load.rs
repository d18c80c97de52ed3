//! Minimal driver for profiling the engine without Python:
//! `load URL CONNECTIONS THREADS SECONDS [close]`. Prints the report as JSON.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 5 {
        eprintln!("usage: load URL CONNECTIONS THREADS SECONDS [close|http10]");
        std::process::exit(2);
    }
    let mut config = crest_engine::RunConfig {
        url: args[1].clone(),
        connections: args[2].parse().expect("connections"),
        threads: args[3].parse().expect("threads"),
        duration_s: Some(args[4].parse().expect("seconds")),
        ..Default::default()
    };
    if args.get(5).is_some_and(|a| a == "close" || a == "http10") {
        config.keepalive = false;
    }
    if args.get(5).is_some_and(|a| a == "http10") {
        config.http_version = crest_engine::HttpVersion::Http10;
    }
    let report = crest_engine::start(&config).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let report = report.join().expect("run");
    println!("{}", serde_json::to_string(&report).expect("json"));
}
