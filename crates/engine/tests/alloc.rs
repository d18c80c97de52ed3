//! The hot path does not allocate: a run of 100× more keep-alive requests
//! (or HTTP/2 streams) makes no more heap allocations, counted by a global
//! allocator; so do fileio operations with dbench's lookups of every path,
//! and a replay of a log 100× longer. HTTP/3 allocates only quinn-proto's
//! three per stream.
//! The servers here answer from fixed buffers so they allocate
//! nothing per request either (the HTTP/3 one does, on a thread not counted).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

#[path = "support/h3.rs"]
mod h3;

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Set on a test server's own thread: what a server built on a library
    /// that allocates (quinn-proto's QUIC) allocates is not the client's.
    /// Const-initialised and without a destructor, so reading it cannot
    /// allocate inside the allocator.
    static NOT_COUNTED: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    if !NOT_COUNTED.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// HTTP/3 allocations per request, all quinn-proto's, for each stream it
/// opens: its send state (boxed), the deque of its unacknowledged data and
/// the set of its acknowledged ranges (heaptrack: docs/benchmarks.md, "HTTP/3
/// allocations"). 3.00 in every run here, loaded or not; the 0.1 covers
/// retransmissions after a stall. One more of crest's per request fails it.
const H3_ALLOCATIONS_PER_REQUEST: f64 = 3.1;

const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/// Answers every request head on one connection; no allocation per request.
fn serve_one(listener: &TcpListener) {
    let (mut stream, _) = listener.accept().unwrap();
    let mut buf = [0u8; 8192];
    let mut tail = 0u32; // last bytes seen, to find "\r\n\r\n" across reads
    loop {
        let n = match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        for &b in &buf[..n] {
            tail = (tail << 8) | u32::from(b);
            if tail == u32::from_be_bytes(*b"\r\n\r\n") && stream.write_all(RESPONSE).is_err() {
                return;
            }
        }
    }
}

fn allocations_for(requests: u64) -> u64 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let config = crest_engine::RunConfig { url, connections: 1, max_requests: Some(requests), ..Default::default() };
    std::thread::scope(|s| {
        s.spawn(|| serve_one(&listener));
        let before = ALLOCATIONS.load(Relaxed);
        let report = crest_engine::start(&config).unwrap().join().unwrap();
        let used = ALLOCATIONS.load(Relaxed) - before;
        assert_eq!(report.requests, requests);
        used
    })
}

/// Allocations of a SPECweb99 run of `requests` (every answer fails its
/// checks: the first message of a kind is the only one kept).
fn specweb99_allocations_for(requests: u64) -> u64 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let config = crest_engine::RunConfig {
        specweb99: Some(crest_engine::Specweb99 {
            base_url: url.clone(),
            dynamic_url: format!("{url}/dyn"),
            cgi_url: format!("{url}/cgi"),
            dirs: 100,
            users: 10,
            first_connection: 0,
            request_mix: [0.2; 5],
            class_mix: [0.25; 4],
        }),
        connections: 1,
        max_requests: Some(requests),
        line_speed_bps: Some(1e12),
        ..Default::default()
    };
    std::thread::scope(|s| {
        s.spawn(|| serve_one(&listener));
        let before = ALLOCATIONS.load(Relaxed);
        let report = crest_engine::start(&config).unwrap().join().unwrap();
        let used = ALLOCATIONS.load(Relaxed) - before;
        assert_eq!(report.errors["validation"], requests);
        used
    })
}

/// One h2c response: HEADERS (`:status 200` indexed; `server: x` with
/// incremental indexing, so the client's HPACK table fills, evicts and
/// compacts; `content-length: 2` without indexing) and DATA "ok" with
/// END_STREAM. The stream id is patched in at `H2_IDS`.
#[rustfmt::skip]
const H2_RESPONSE: [u8; 28] = [
    0, 0, 8, 0x1, 0x4, 0, 0, 0, 0, 0x88, 0x76, 1, b'x', 0x0f, 0x0d, 1, b'2',
    0, 0, 2, 0x0, 0x1, 0, 0, 0, 0, b'o', b'k',
];
const H2_IDS: [usize; 2] = [5, 22];
const H2_SETTINGS: [u8; 9] = [0, 0, 0, 0x4, 0, 0, 0, 0, 0];
const H2_SETTINGS_ACK: [u8; 9] = [0, 0, 0, 0x4, 0x1, 0, 0, 0, 0];

/// Answers every request stream on one h2c connection; frames are parsed
/// by hand into fixed arrays, so nothing is allocated per request.
fn serve_h2(listener: &TcpListener) {
    let (mut stream, _) = listener.accept().unwrap();
    stream.set_nodelay(true).unwrap();
    if stream.write_all(&H2_SETTINGS).is_err() {
        return;
    }
    let mut buf = [0u8; 8192];
    let mut response = H2_RESPONSE;
    let mut preface_left = 24; // "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    let mut head = [0u8; 9];
    let mut have = 0;
    let mut skip = 0; // payload bytes of the current frame still to pass over
    loop {
        let n = match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let mut i = 0;
        while i < n {
            if preface_left > 0 || skip > 0 {
                let left = if preface_left > 0 { &mut preface_left } else { &mut skip };
                let take = (*left).min(n - i);
                *left -= take;
                i += take;
                continue;
            }
            head[have] = buf[i];
            have += 1;
            i += 1;
            if have < 9 {
                continue;
            }
            have = 0;
            skip = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
            let (kind, flags) = (head[3], head[4]);
            let reply: &[u8] = match kind {
                0x4 if flags & 0x1 == 0 => &H2_SETTINGS_ACK,
                // HEADERS with END_STREAM: a whole GET.
                0x1 if flags & 0x1 != 0 => {
                    for at in H2_IDS {
                        response[at..at + 4].copy_from_slice(&head[5..9]);
                    }
                    &response
                }
                _ => continue,
            };
            if stream.write_all(reply).is_err() {
                return;
            }
        }
    }
}

/// Allocations of an h2c run of `requests` on one connection of four streams.
fn h2_allocations_for(requests: u64) -> u64 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let config = crest_engine::RunConfig {
        url,
        http_version: crest_engine::HttpVersion::Http2,
        streams: 4,
        connections: 1,
        max_requests: Some(requests),
        ..Default::default()
    };
    std::thread::scope(|s| {
        s.spawn(|| serve_h2(&listener));
        let before = ALLOCATIONS.load(Relaxed);
        let report = crest_engine::start(&config).unwrap().join().unwrap();
        let used = ALLOCATIONS.load(Relaxed) - before;
        assert_eq!(report.requests, requests, "errors {:?} notes {:?}", report.errors, report.error_notes);
        assert_eq!(report.connections_opened, 1);
        used
    })
}

/// Allocations of an HTTP/3 run of `requests` on one connection, one stream
/// at a time (with more, a packet carrying several streams' frames costs
/// quinn-proto two more allocations), against support/h3.rs's server, whose
/// thread is not counted.
fn h3_allocations_for(requests: u64) -> u64 {
    let server = h3::H3Server::start_with(h3::Script::Answer, b"ok".to_vec(), || NOT_COUNTED.with(|c| c.set(true)));
    let config = crest_engine::RunConfig {
        url: server.url("/"),
        http_version: crest_engine::HttpVersion::Http3,
        streams: 1,
        connections: 1,
        max_requests: Some(requests),
        insecure: true,
        timeout_s: 5.0,
        ..Default::default()
    };
    let before = ALLOCATIONS.load(Relaxed);
    let report = crest_engine::start(&config).unwrap().join().unwrap();
    let used = ALLOCATIONS.load(Relaxed) - before;
    server.stop();
    assert_eq!(report.requests, requests, "errors {:?} notes {:?}", report.errors, report.error_notes);
    assert_eq!(report.connections_opened, 1);
    used
}

/// A run of 20,000 requests allocates no more than one of 200: setup and
/// report building allocate the same for both, and a per-request allocation
/// would add ≥ 19,800. Slack covers timeline seconds and the OS (and, for a
/// replay, its table's columns growing once per run as the log is read).
fn assert_flat(what: &str, allocations_for: fn(u64) -> u64) {
    let small = allocations_for(200);
    let large = allocations_for(20_000);
    eprintln!("{what} allocations: 200 requests {small}, 20,000 requests {large}");
    assert!(large < small + 200, "{what}, 200 requests: {small} allocations; 20,000 requests: {large}");
}

#[test]
fn allocations_do_not_grow_with_requests() {
    assert_flat("HTTP/1.1", allocations_for);
    assert_flat("SPECweb99", specweb99_allocations_for);
    assert_flat("HTTP/2", h2_allocations_for);
    assert_flat("replay (logged requests)", replay_allocations_for);
    assert_flat("script", script_allocations_for);
    fileio_operations_do_not_allocate();
    http3_allocations_per_request_stay_at_quinn_protos();
}

/// HTTP/3 is not flat: quinn-proto allocates for each stream it opens
/// (`H3_ALLOCATIONS_PER_REQUEST`). crest's own side allocates nothing per
/// request: datagrams and request bytes reach quinn-proto as slices of two
/// buffers per connection, taken back once quinn-proto is done with them. The
/// count per request is held, so a new allocation on crest's side shows.
fn http3_allocations_per_request_stay_at_quinn_protos() {
    // 5,000 requests, not 20,000: HTTP/3 against its test server runs at about 5,000 a second here.
    let small = h3_allocations_for(200);
    let large = h3_allocations_for(5_000);
    let per_request = (large.saturating_sub(small)) as f64 / 4_800.0;
    eprintln!("HTTP/3 allocations: 200 requests {small}, 5,000 requests {large}: {per_request:.2} per request");
    assert!(
        per_request <= H3_ALLOCATIONS_PER_REQUEST,
        "HTTP/3: {per_request:.2} allocations per request, more than quinn-proto's {H3_ALLOCATIONS_PER_REQUEST}"
    );
}

/// Allocations of a two-step script of `requests` on one connection: the
/// first step extracts a value by regex from its body, the second sends it
/// in its path.
fn script_allocations_for(requests: u64) -> u64 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let script = serde_json::json!({
        "variables": ["user"], "users": [["alice"]],
        "steps": [
            {"name": "a", "path": "/a?u={{user}}", "extract": [{"name": "v", "regex": "(o)k"}]},
            {"name": "b", "path": "/b?v={{v}}", "headers": [["X-User", "{{user}}"]], "expect_status": 200}
        ]
    });
    let config = crest_engine::RunConfig {
        url: format!("http://{}/", listener.local_addr().unwrap()),
        connections: 1,
        max_requests: Some(requests),
        script: Some(serde_json::from_value(script).unwrap()),
        ..Default::default()
    };
    std::thread::scope(|s| {
        s.spawn(|| serve_one(&listener));
        let before = ALLOCATIONS.load(Relaxed);
        let report = crest_engine::start(&config).unwrap().join().unwrap();
        let used = ALLOCATIONS.load(Relaxed) - before;
        assert_eq!(report.responses, requests, "errors {:?} notes {:?}", report.errors, report.error_notes);
        assert_eq!(report.classes["b"].requests, requests / 2);
        used
    })
}

/// Allocations of a timed replay of a log of `requests` lines (four paths,
/// all logged at the same instant, so all are due at once), reading the log included.
fn replay_allocations_for(requests: u64) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let text: String =
        (0..requests).map(|i| format!("127.0.0.1 [1700000000.000000] \"GET /p{} HTTP/1.1\" 200 2\n", i % 4)).collect();
    std::fs::write(&log, text).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let config = crest_engine::RunConfig {
        url: format!("http://{}/", listener.local_addr().unwrap()),
        connections: 1,
        replay: Some(crest_engine::Replay {
            log: log.display().to_string(),
            options: Default::default(),
            mode: crest_engine::ReplayMode::Timed,
            speed: 1.0,
            part: [0, 1],
            dynamic_url: None,
            expect_logged_status: true,
        }),
        ..Default::default()
    };
    std::thread::scope(|s| {
        s.spawn(|| serve_one(&listener));
        let before = ALLOCATIONS.load(Relaxed);
        let report = crest_engine::start(&config).unwrap().join().unwrap();
        let used = ALLOCATIONS.load(Relaxed) - before;
        assert_eq!(report.requests, requests, "errors {:?} notes {:?}", report.errors, report.error_notes);
        used
    })
}

/// A pass of every path operation a fileio client looks up (no Deltree:
/// removing a tree is the kernel's walk, once a pass in client.txt).
const FILEIO_LOADFILE: &str = r#"NTCreateX "\clients" 0x1 0x3 1 NT_STATUS_OK
Close 1 NT_STATUS_OK
NTCreateX "\clients\client1" 0x1 0x3 2 NT_STATUS_OK
Close 2 NT_STATUS_OK
NTCreateX "\clients\client1\a.txt" 0x40 0x5 3 NT_STATUS_OK
WriteX 3 0 4096 4096 NT_STATUS_OK
ReadX 3 0 4096 4096 NT_STATUS_OK
Close 3 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\A.TXT" 1004 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\none" 1004 NT_STATUS_OBJECT_NAME_NOT_FOUND
FIND_FIRST "\clients\client1\*" 260 1366 1 NT_STATUS_OK
Rename "\clients\client1\a.txt" "\clients\client1\b.txt" NT_STATUS_OK
Unlink "\clients\client1\b.txt" 0x6 NT_STATUS_OK
"#;

/// Allocations of a fileio run of `operations` with dbench's lookups of every path.
fn fileio_allocations_for(operations: u64) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let loadfile = dir.path().join("client.txt");
    std::fs::write(&loadfile, FILEIO_LOADFILE).unwrap();
    let config = crest_engine::RunConfig {
        url: format!("file://{}", dir.path().display()),
        connections: 1,
        max_requests: Some(operations),
        loadfile: Some(crest_engine::Loadfile {
            path: loadfile.display().to_string(),
            password: None,
            cleanup: true,
            first_client: 0,
            resolve_names: crest_engine::ResolveNames::EveryPath,
        }),
        ..Default::default()
    };
    let before = ALLOCATIONS.load(Relaxed);
    let report = crest_engine::start(&config).unwrap().join().unwrap();
    let used = ALLOCATIONS.load(Relaxed) - before;
    assert_eq!(report.requests, operations, "errors {:?} notes {:?}", report.errors, report.error_notes);
    used
}

/// Part of the one test above: the counter is global, so runs must not overlap.
fn fileio_operations_do_not_allocate() {
    let small = fileio_allocations_for(13 * 20);
    let large = fileio_allocations_for(13 * 2_000);
    eprintln!("fileio allocations: 260 operations {small}, 26,000 operations {large}");
    assert!(large < small + 200, "260 operations: {small} allocations; 26,000 operations: {large}");
}
