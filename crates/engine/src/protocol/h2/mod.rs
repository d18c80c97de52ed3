//! HTTP/2 on bytes only (RFC 9113, RFC 7541): `frame` parses and writes
//! frames, `huffman` and `hpack` compress header fields, `session` keeps one
//! client connection's protocol state. Nothing here touches a socket or a
//! clock; every frame type is tested on raw bytes split at every boundary.

pub mod frame;
pub mod hpack;
pub mod huffman;
pub mod session;

pub use session::{Event, Response, Session, SessionError, SessionSettings};
