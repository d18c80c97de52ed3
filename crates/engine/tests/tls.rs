//! TLS against crest's built-in target (rustls on both ends, self-signed):
//! handshakes are counted and timed, resumption can be switched off, and a
//! certificate that does not verify is a `tls` error, not a crash.

use crest_engine::{HttpVersion, RunConfig};
use crest_target::{ServeConfig, Server};

fn tls_target() -> (Server, tempfile::TempDir) {
    let docroot = tempfile::tempdir().unwrap();
    std::fs::write(docroot.path().join("1k.html"), vec![b'x'; 1024]).unwrap();
    let server =
        Server::start(ServeConfig { docroot: docroot.path().into(), tls: true, threads: 1, ..ServeConfig::default() })
            .expect("target starts");
    (server, docroot)
}

fn url(server: &Server) -> String {
    format!("{}1k.html", server.urls()[0])
}

#[test]
fn keepalive_over_tls_handshakes_once_per_connection() {
    let (server, _dir) = tls_target();
    assert!(url(&server).starts_with("https://"));
    let config = RunConfig {
        url: url(&server),
        insecure: true,
        connections: 2,
        max_requests: Some(200),
        ..RunConfig::default()
    };
    let report = crest_engine::start(&config).unwrap().join().unwrap();
    assert_eq!(report.requests, 200, "{:?}", report.error_notes);
    assert_eq!(report.tls_handshakes, 2);
    assert!(report.tls_handshake_us.p50 > 0);
    // Recorded at each handshake: both negotiated TLS 1.3 with one suite of rustls' defaults.
    assert_eq!(report.tls_negotiated.len(), 1, "{:?}", report.tls_negotiated);
    let n = &report.tls_negotiated[0];
    assert_eq!((n.protocol.as_str(), n.handshakes), ("TLSv1.3", 2));
    assert!(n.cipher.starts_with("TLS_") && n.cipher.contains("_GCM_") || n.cipher.contains("CHACHA20"), "{n:?}");
    assert_eq!(report.body_bytes, 200 * 1024);
}

#[test]
fn new_connection_per_request_without_resumption_does_full_handshakes() {
    let (server, _dir) = tls_target();
    for resumption in [true, false] {
        let config = RunConfig {
            url: url(&server),
            insecure: true,
            tls_resumption: resumption,
            keepalive: false,
            http_version: HttpVersion::Http10,
            connections: 1,
            max_requests: Some(20),
            ..RunConfig::default()
        };
        let report = crest_engine::start(&config).unwrap().join().unwrap();
        assert_eq!(report.requests, 20, "{:?}", report.error_notes);
        assert_eq!(report.tls_handshakes, 20);
        assert_eq!(report.connections_opened, 20);
        if resumption {
            assert!(report.tls_resumed >= 19, "resumed {} of 20", report.tls_resumed);
        } else {
            assert_eq!(report.tls_resumed, 0);
        }
    }
}

#[test]
fn self_signed_certificate_fails_verification_without_insecure() {
    let (server, _dir) = tls_target();
    let config = RunConfig { url: url(&server), connections: 1, duration_s: Some(0.3), ..RunConfig::default() };
    let report = crest_engine::start(&config).unwrap().join().unwrap();
    assert_eq!(report.requests, 0);
    assert!(report.errors["tls"] > 0, "{:?}", report.errors);
    assert!(report.error_notes.iter().any(|n| n.starts_with("tls:")), "{:?}", report.error_notes);
}
