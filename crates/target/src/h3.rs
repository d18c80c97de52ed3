//! HTTP/3: a quinn endpoint on the UDP twin of the TLS listener's port,
//! each connection served by hyperium's h3, each request's body read whole
//! and handed to the same `Handler` as HTTP/1.x and HTTP/2 (so routes, CGI,
//! SPECweb99 and the access log are one), its response sent as HEADERS and
//! DATA. It runs on a multi-threaded runtime of its own with the server's
//! thread count, and stops with the server's shutdown signal.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use http::{Request, Response, StatusCode, Version};
use http_body_util::{BodyExt, Full};
use quinn::crypto::rustls::QuicServerConfig;
use tokio::sync::watch;

use crate::conn_info::ConnInfo;
use crate::error::ServeError;
use crate::handler::{Handler, Site};
use crate::request_body::ReqBody;
use crate::responses::{self, Resp};

/// The largest request body read (as HTTP/1's CGI and SPECweb99 limits).
const MAX_BODY_BYTES: usize = 16 << 20;
/// Concurrent requests per connection (as the HTTP/2 listener's streams).
const MAX_STREAMS: u32 = 256;

/// Binds the UDP socket now, so a port in use fails `Server::start`.
pub(crate) fn bind(addr: SocketAddr) -> Result<UdpSocket, ServeError> {
    UdpSocket::bind(addr).map_err(|source| match source.kind() {
        std::io::ErrorKind::AddrInUse => ServeError::AddrInUse { addr },
        _ => ServeError::Bind { addr, source },
    })
}

/// Serves HTTP/3 on `socket` until `shutdown`.
pub(crate) fn spawn(
    socket: UdpSocket,
    tls: Arc<rustls::ServerConfig>,
    site: Arc<Site>,
    threads: usize,
    mut shutdown: watch::Receiver<bool>,
) -> Result<JoinHandle<()>, ServeError> {
    let quic = QuicServerConfig::try_from(tls).map_err(|e| ServeError::Tls(e.to_string()))?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(quic));
    let mut transport = quinn::TransportConfig::default();
    transport.max_concurrent_bidi_streams(quinn::VarInt::from_u32(MAX_STREAMS));
    config.transport_config(Arc::new(transport));
    let local = socket.local_addr().map_err(ServeError::Threads)?;
    std::thread::Builder::new()
        .name("crest-target-h3".into())
        .spawn(move || {
            let Ok(rt) =
                tokio::runtime::Builder::new_multi_thread().worker_threads(threads.max(1)).enable_all().build()
            else {
                return;
            };
            rt.block_on(async move {
                let runtime = Arc::new(quinn::TokioRuntime);
                let Ok(endpoint) =
                    quinn::Endpoint::new(quinn::EndpointConfig::default(), Some(config), socket, runtime)
                else {
                    return;
                };
                loop {
                    tokio::select! {
                        biased;
                        _ = shutdown.wait_for(|&stop| stop) => break,
                        incoming = endpoint.accept() => match incoming {
                            Some(incoming) => {
                                tokio::spawn(connection(incoming, site.clone(), local));
                            }
                            None => break,
                        },
                    }
                }
                endpoint.close(quinn::VarInt::from_u32(0x100), b"");
                let _ = tokio::time::timeout(Duration::from_secs(1), endpoint.wait_idle()).await;
            });
            rt.shutdown_timeout(Duration::from_millis(100));
        })
        .map_err(ServeError::Threads)
}

async fn connection(incoming: quinn::Incoming, site: Arc<Site>, local: SocketAddr) {
    let Ok(conn) = incoming.await else { return };
    let info = ConnInfo { peer: conn.remote_address(), local, tls: true };
    let built = h3::server::builder().build::<_, Bytes>(h3_quinn::Connection::new(conn)).await;
    let Ok(mut h3) = built else { return };
    while let Ok(Some(resolver)) = h3.accept().await {
        let handler = Handler { site: site.clone(), conn: info };
        tokio::spawn(async move {
            if let Ok((req, stream)) = resolver.resolve_request().await {
                request(req, stream, handler).await;
            }
        });
    }
}

async fn request<S>(req: Request<()>, mut stream: h3::server::RequestStream<S, Bytes>, handler: Handler)
where
    S: h3::quic::BidiStream<Bytes>,
{
    let mut body = BytesMut::new();
    let mut too_large = false;
    while let Ok(Some(mut chunk)) = stream.recv_data().await {
        if body.len() + chunk.remaining() > MAX_BODY_BYTES {
            too_large = true;
            break;
        }
        while chunk.has_remaining() {
            let part = chunk.chunk();
            body.extend_from_slice(part);
            let n = part.len();
            chunk.advance(n);
        }
    }
    let resp: Resp = if too_large {
        responses::error(StatusCode::PAYLOAD_TOO_LARGE)
    } else {
        let mut req = req.map(|()| ReqBody::Whole(Full::new(body.freeze())));
        *req.version_mut() = Version::HTTP_3;
        match handler.respond(req).await {
            Ok(resp) => resp,
            Err(never) => match never {},
        }
    };
    let (parts, body) = resp.into_parts();
    let bytes = body.collect().await.map(|c| c.to_bytes()).unwrap_or_default();
    if stream.send_response(Response::from_parts(parts, ())).await.is_err() {
        return;
    }
    if !bytes.is_empty() && stream.send_data(bytes).await.is_err() {
        return;
    }
    let _ = stream.finish().await;
}
