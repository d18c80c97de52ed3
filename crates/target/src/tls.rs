//! TLS: a fresh self-signed certificate for localhost / 127.0.0.1 / ::1 and
//! the rustls server configurations built around it: for TCP (ALPN h2 and
//! http/1.1, session resumption by both session cache and tickets) and for
//! QUIC (TLS 1.3 only, ALPN h3).
//!
//! Uses the ring provider explicitly, so no process-wide default provider is
//! needed and aws-lc is never pulled in. It must not do socket I/O.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::PrivateKeyDer;
use rustls::ServerConfig;

use crate::error::ServeError;

const NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The TCP listeners' and the QUIC listener's configurations, with one certificate.
pub(crate) struct Configs {
    pub tcp: Arc<ServerConfig>,
    pub quic: Arc<ServerConfig>,
}

pub(crate) fn server_configs(tls_dir: Option<&Path>) -> Result<Configs, ServeError> {
    let certified = rcgen::generate_simple_self_signed(NAMES.map(String::from).to_vec())
        .map_err(|e| ServeError::Tls(format!("certificate generation failed: {e}")))?;
    if let Some(dir) = tls_dir {
        write_pem_files(dir, &certified.cert.pem(), &certified.signing_key.serialize_pem())
            .map_err(|source| ServeError::TlsDir { path: dir.to_owned(), source })?;
    }
    let cert = certified.cert.der().clone();
    let key = PrivateKeyDer::from(certified.signing_key);

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut quic = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| ServeError::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key.clone_key())
        .map_err(|e| ServeError::Tls(e.to_string()))?;
    quic.alpn_protocols = vec![b"h3".to_vec()];
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ServeError::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .map_err(|e| ServeError::Tls(e.to_string()))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    // Stateless tickets let clients resume across worker threads without a
    // shared lookup; the default session cache still serves TLS 1.2 ids.
    config.ticketer = rustls::crypto::ring::Ticketer::new().map_err(|e| ServeError::Tls(e.to_string()))?;
    Ok(Configs { tcp: Arc::new(config), quic: Arc::new(quic) })
}

/// Writes `cert.pem` (0644) and `key.pem` (0600). The key file is created
/// with its final mode, so it is never readable by others even briefly.
fn write_pem_files(dir: &Path, cert_pem: &str, key_pem: &str) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    fs::write(dir.join("cert.pem"), cert_pem)?;
    let key_path = dir.join("key.pem");
    let mut key = OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&key_path)?;
    // A pre-existing file keeps its old mode on open; tighten it explicitly.
    key.set_permissions(fs::Permissions::from_mode(0o600))?;
    key.write_all(key_pem.as_bytes())
}
