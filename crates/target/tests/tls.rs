//! TLS listeners: a rustls client that trusts any certificate (the server's
//! is self-signed) checks the handshake, ALPN, resumption and the PEM files.

use std::io::{BufReader, Write};
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use crate::common::{connect, read_reply, Fixture, HELLO};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, SignatureScheme, StreamOwned};

#[derive(Debug)]
struct AcceptAnyCert(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCert {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(m, c, d, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(m, c, d, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

fn client_config() -> Arc<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AcceptAnyCert(provider)))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

/// GETs `/hello.txt` over TLS; returns (body, ALPN, resumed?).
fn tls_get(addr: SocketAddr, config: &Arc<ClientConfig>) -> (Vec<u8>, Option<Vec<u8>>, bool) {
    let name = ServerName::try_from("localhost").unwrap();
    let conn = ClientConnection::new(config.clone(), name).unwrap();
    let mut tls = StreamOwned::new(conn, connect(addr));
    tls.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
    let mut reader = BufReader::new(tls);
    let reply = read_reply(&mut reader, false);
    assert_eq!(reply.status, 200);
    let conn = &reader.get_ref().conn;
    let resumed = matches!(conn.handshake_kind(), Some(rustls::HandshakeKind::Resumed));
    (reply.body, conn.alpn_protocol().map(<[u8]>::to_vec), resumed)
}

#[test]
fn tls_get_with_alpn_and_resumption() {
    let fx = Fixture::start_with(|c| c.tls = true);
    let server = fx.server.as_ref().unwrap();
    assert_eq!(server.urls(), vec![format!("https://{}/", fx.addr)]);
    let config = client_config();
    let (body, alpn, _) = tls_get(fx.addr, &config);
    assert_eq!(body, HELLO.as_bytes());
    assert_eq!(alpn.as_deref(), Some(&b"http/1.1"[..]));
    let (_, _, resumed) = tls_get(fx.addr, &config);
    assert!(resumed, "second connection did not resume the session");
}

#[test]
fn plain_and_tls_side_by_side_with_pem_files() {
    let tls_dir = tempfile::tempdir().unwrap();
    let pem_dir = tls_dir.path().join("pem");
    let fx = Fixture::start_with(|c| {
        c.tls_port = Some(0);
        c.tls_dir = Some(pem_dir.clone());
    });
    let server = fx.server.as_ref().unwrap();
    let addrs = server.local_addrs();
    assert_eq!(addrs.len(), 2);
    let urls = server.urls();
    assert!(urls[0].starts_with("http://") && urls[1].starts_with("https://"), "{urls:?}");
    assert_eq!(fx.get("/hello.txt").body, HELLO.as_bytes());
    let (body, _, _) = tls_get(addrs[1], &client_config());
    assert_eq!(body, HELLO.as_bytes());

    let cert = std::fs::read_to_string(pem_dir.join("cert.pem")).unwrap();
    assert!(cert.starts_with("-----BEGIN CERTIFICATE-----"));
    let key_meta = std::fs::metadata(pem_dir.join("key.pem")).unwrap();
    assert_eq!(key_meta.permissions().mode() & 0o777, 0o600);
}

#[test]
fn dyn_env_reports_https() {
    let fx = Fixture::start_with(|c| c.tls = true);
    let name = ServerName::try_from("localhost").unwrap();
    let conn = ClientConnection::new(client_config(), name).unwrap();
    let mut tls = StreamOwned::new(conn, connect(fx.addr));
    tls.write_all(b"GET /dyn/env HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
    let reply = read_reply(&mut BufReader::new(tls), false);
    assert_eq!(reply.body.len(), 1024);
    assert!(reply.text().contains("<th>HTTPS</th><td>on</td>"));
}
