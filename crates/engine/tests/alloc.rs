//! The hot path does not allocate: a run of 100× more keep-alive requests
//! makes no more heap allocations, counted by a global allocator. The server
//! here answers from a fixed buffer so it allocates nothing per request either.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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

#[test]
fn allocations_do_not_grow_with_requests() {
    let small = allocations_for(200);
    let large = allocations_for(20_000);
    // Setup and report building allocate the same for both; a per-request
    // allocation would add ≥ 19,800. Slack covers timeline seconds and the OS.
    eprintln!("allocations: 200 requests {small}, 20,000 requests {large}");
    assert!(large < small + 200, "200 requests: {small} allocations; 20,000 requests: {large}");
    let small = specweb99_allocations_for(200);
    let large = specweb99_allocations_for(20_000);
    eprintln!("SPECweb99 allocations: 200 requests {small}, 20,000 requests {large}");
    assert!(large < small + 200, "SPECweb99, 200 requests: {small} allocations; 20,000 requests: {large}");
}
