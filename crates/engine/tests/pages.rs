//! Page loads (`RunConfig.pages`, a HAR recording) against the built-in
//! target, read back from its access log: each client loads its page the
//! document first, then the rest over its connections; a page load is a
//! completion of the page's class (its load time the latency) that the
//! run's request counts do not include; what pages cannot be combined with
//! is one line each.

use std::path::{Path, PathBuf};

use crest_engine::config::{PageEntry, Pages};
use crest_engine::{HttpVersion, RequestEntry, RunConfig, Selection};

use crate::support::{arrivals, logging_target, respond_always, run, Fixture};

/// The page: a document, then its resources (each 2000 bytes but the document).
const PATHS: [&str; 6] = ["/index.html", "/a.css", "/b.css", "/a.js", "/1.png", "/2.png"];
const CLASSES: [&str; 5] = ["document", "stylesheet", "script", "image", "page:/index.html"];

fn target() -> (crest_target::Server, tempfile::TempDir, PathBuf) {
    let sizes = (0..PATHS.len()).map(|i| if i == 0 { 300 } else { 2000 });
    logging_target(&PATHS.iter().copied().zip(sizes).collect::<Vec<_>>())
}

/// The paths the target's access log has, in arrival order.
fn arrived(log: &Path) -> Vec<String> {
    arrivals(log).into_iter().map(|(_, path, _)| path).collect()
}

fn page_config(url: &str, clients: u32, think_s: f64) -> RunConfig {
    let class = [0, 1, 1, 2, 3, 3];
    RunConfig {
        url: format!("{url}/index.html"),
        requests: PATHS
            .iter()
            .zip(class)
            .map(|(p, c)| RequestEntry { class: c, expect_status: Some(200), ..RequestEntry::to(format!("{url}{p}")) })
            .collect(),
        classes: CLASSES.iter().map(|c| (*c).to_string()).collect(),
        connections: 3 * clients,
        connections_per_client: 3,
        threads: clients.min(2),
        duration_s: Some(1.0),
        pages: Some(Pages {
            pages: vec![PageEntry { name: "/index.html".into(), class: 4, entries: (0..6).collect() }],
            think_s,
        }),
        ..RunConfig::default()
    }
}

#[test]
fn a_client_loads_its_page_document_first_and_each_load_is_a_completion_of_the_pages_class() {
    let (server, _dir, served) = target();
    let url = server.urls()[0].trim_end_matches('/').to_string();
    let (report, _) = run(page_config(&url, 1, 0.05));
    server.stop();
    assert!(report.errors.values().all(|&n| n == 0), "errors {:?} notes {:?}", report.errors, report.error_notes);
    let paths = arrived(&served);
    let loads = paths.iter().filter(|p| *p == "/index.html").count();
    assert!(loads >= 2, "{paths:?}");
    // One browser: each load is its document, then the page's other five requests, before the next document.
    for (i, load) in paths.chunks(6).enumerate() {
        assert_eq!(load[0], "/index.html", "load {i}: {paths:?}");
        if load.len() == 6 {
            let mut rest: Vec<&str> = load[1..].iter().map(String::as_str).collect();
            rest.sort_unstable();
            assert_eq!(rest, ["/1.png", "/2.png", "/a.css", "/a.js", "/b.css"], "load {i}: {paths:?}");
        }
    }
    let page = &report.classes["page:/index.html"];
    assert!(page.requests >= 1 && page.requests as usize <= loads, "{} loads of {loads}", page.requests);
    assert!(page.latency_us.p50 > 0 && page.latency_us.p50 < 1_000_000);
    // Page loads are not requests: the run counts the page's requests only.
    let requests: u64 = CLASSES[..4].iter().map(|c| report.classes[*c].requests).sum();
    assert_eq!(report.requests, requests);
    // The run ends at its duration, which may cut the last page load: its document (and some of its
    // resources) answered, the page not complete. Every complete load is one document and two images.
    let (documents, images) = (report.classes["document"].requests, report.classes["image"].requests);
    assert!(
        documents == page.requests || documents == page.requests + 1,
        "{documents} documents, {} pages",
        page.requests
    );
    assert!(images >= 2 * page.requests && images <= 2 * documents, "{images} images, {documents} documents");
}

#[test]
fn clients_load_in_their_own_threads_with_their_own_connections() {
    let (server, _dir, served) = target();
    let url = server.urls()[0].trim_end_matches('/').to_string();
    let (report, _) = run(page_config(&url, 4, 0.0));
    server.stop();
    assert!(report.errors.values().all(|&n| n == 0), "errors {:?} notes {:?}", report.errors, report.error_notes);
    let paths = arrived(&served);
    assert!(report.classes["page:/index.html"].requests >= 4);
    // Every request answered was sent; at the end at most one per connection was still on its way.
    let sent = paths.len() as u64;
    assert!(sent >= report.requests && sent <= report.requests + 12, "{sent} sent, {} answered", report.requests);
    assert!(report.connections_opened <= 12, "{} connections for 4 clients of 3", report.connections_opened);
}

#[test]
fn over_http2_a_client_is_one_connection_whose_streams_load_the_page() {
    let (server, _dir, served) = target();
    let url = server.urls()[0].trim_end_matches('/').to_string();
    let config = RunConfig {
        http_version: HttpVersion::Http2,
        streams: 3,
        connections: 2,
        connections_per_client: 1,
        ..page_config(&url, 2, 0.0)
    };
    let (report, _) = run(config);
    server.stop();
    assert!(report.errors.values().all(|&n| n == 0), "errors {:?} notes {:?}", report.errors, report.error_notes);
    assert!(report.classes["page:/index.html"].requests >= 2);
    assert_eq!(report.connections_opened, 2);
    let paths = arrived(&served);
    // The target logs an HTTP/2 request's target with its scheme and authority.
    assert!(paths[0].ends_with("/index.html"), "{}", paths[0]);
    assert!(paths.len() as u64 >= report.requests);
}

#[test]
fn pages_refuse_what_a_browser_does_not_do_in_one_line() {
    let url = "http://127.0.0.1:1";
    let base = page_config(url, 2, 0.0);
    let cases: Vec<(RunConfig, &str)> = vec![
        (RunConfig { rate_rps: Some(10.0), ..base.clone() }, "{pages} and {rate_rps} conflict"),
        (RunConfig { selection: Selection::Once, ..base.clone() }, "{pages} and {selection} conflict"),
        (RunConfig { max_requests: Some(10), ..base.clone() }, "{pages} and {max_requests} conflict"),
        (RunConfig { think_time_s: 0.5, ..base.clone() }, "{pages} and {think_time_s} conflict"),
        (RunConfig { connections: 5, ..base.clone() }, "must be whole clients"),
        (RunConfig { threads: 3, ..base.clone() }, "must be at most the clients"),
        (RunConfig { http_version: HttpVersion::Http10, ..base.clone() }, "loaded over HTTP/1.1, 2 or 3"),
        (
            RunConfig {
                pages: Some(Pages {
                    pages: vec![PageEntry { name: "x".into(), class: 4, entries: vec![0, 9] }],
                    think_s: 0.0,
                }),
                ..base.clone()
            },
            "entry 9 is not one of the 6 requests",
        ),
    ];
    for (config, want) in cases {
        let err = crest_engine::validate(&config).expect_err(want);
        assert!(err.template.contains(want), "{} (wanted {want})", err.template);
        assert!(!err.template.contains('\n'));
    }
}

#[test]
fn a_recorded_post_goes_with_its_body() {
    let fixture = Fixture::start(respond_always(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"));
    let entry = |path: &str, method: Option<&str>, body: Option<&str>| RequestEntry {
        method: method.map(str::to_string),
        expect_status: Some(200),
        body: body.map(str::to_string),
        ..RequestEntry::to(fixture.url(path))
    };
    let config = RunConfig {
        requests: vec![entry("/", None, None), entry("/api", Some("POST"), Some("a=1&b=2"))],
        classes: vec!["document".into(), "page:/".into()],
        connections: 2,
        connections_per_client: 2,
        duration_s: Some(0.3),
        pages: Some(Pages { pages: vec![PageEntry { name: "/".into(), class: 1, entries: vec![0, 1] }], think_s: 0.1 }),
        ..RunConfig::default()
    };
    let (report, _) = run(config);
    assert!(report.classes["page:/"].requests >= 1, "{:?}", report.classes);
    let log: Vec<String> =
        fixture.log.lock().unwrap().iter().map(|r| String::from_utf8_lossy(r).into_owned()).collect();
    assert!(log[0].starts_with("GET / HTTP/1.1\r\n"), "{}", log[0]);
    assert!(log[1].starts_with("POST /api HTTP/1.1\r\n") && log[1].ends_with("\r\n\r\na=1&b=2"), "{}", log[1]);
    assert!(log[1].contains("Content-Length: 7\r\n"), "{}", log[1]);
    let h2 = RunConfig { http_version: HttpVersion::Http2, ..page_config("http://127.0.0.1:1", 1, 0.0) };
    let mut h2 = RunConfig { connections: 1, connections_per_client: 1, streams: 3, ..h2 };
    h2.requests[1].body = Some("x".into());
    let err = crest_engine::validate(&h2).expect_err("a body over HTTP/2");
    assert!(err.template.contains("sent over HTTP/1.x only"), "{}", err.template);
}
