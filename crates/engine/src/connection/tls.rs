//! The rustls client configuration: ALPN http/1.1, h2 or h3, SNI, resumption on or off,
//! and an opt-in verifier that accepts any certificate for self-signed
//! targets. One config per worker so resumption caches are never shared
//! across threads (their lock is then uncontended).

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};

/// TLS choices of a run.
#[derive(Debug, Clone, Copy)]
pub struct TlsSettings {
    /// Skip certificate verification.
    pub insecure: bool,
    /// Offer session resumption (tickets or IDs) on new connections.
    pub resumption: bool,
    /// What ALPN offers (one protocol: crest never lets the server pick).
    pub alpn: Alpn,
}

/// The protocol a run's TLS connections offer by ALPN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alpn {
    /// HTTP/1.1.
    Http11,
    /// HTTP/2.
    H2,
    /// HTTP/3 over QUIC (which needs TLS 1.3).
    H3,
}

/// Builds a client config for one worker.
pub fn client_config(settings: TlsSettings) -> Result<Arc<ClientConfig>, rustls::Error> {
    let provider = Arc::new(ring::default_provider());
    let builder = match settings.alpn {
        Alpn::H3 => {
            ClientConfig::builder_with_provider(provider.clone()).with_protocol_versions(&[&rustls::version::TLS13])?
        }
        _ => ClientConfig::builder_with_provider(provider.clone()).with_safe_default_protocol_versions()?,
    };
    let mut config = if settings.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
            .with_no_client_auth()
    } else {
        let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
        builder.with_root_certificates(roots).with_no_client_auth()
    };
    config.alpn_protocols = vec![match settings.alpn {
        Alpn::Http11 => b"http/1.1".to_vec(),
        Alpn::H2 => b"h2".to_vec(),
        Alpn::H3 => b"h3".to_vec(),
    }];
    config.resumption = if settings.resumption { Resumption::in_memory_sessions(1024) } else { Resumption::disabled() };
    Ok(Arc::new(config))
}

/// Checks signatures (so the handshake is real work) but not the chain.
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
