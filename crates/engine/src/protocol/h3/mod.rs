//! HTTP/3 on bytes only (RFC 9114, RFC 9204): `varint` QUIC's integers,
//! `frame` HTTP/3 frames and stream types, `qpack` field sections (static
//! table only: crest advertises a dynamic table of 0 bytes, so a server may
//! not refer to one), `stream` the parsers of a request stream's response and
//! of the server's unidirectional streams, `session` one client connection
//! over quinn-proto's QUIC state machine. QUIC (packets, loss recovery, TLS
//! 1.3) is quinn-proto's; nothing here touches a socket or reads a clock:
//! the session is driven by datagrams and `now`, like the h2 session by bytes.

pub mod frame;
pub mod qpack;
pub mod session;
pub mod stream;
pub mod varint;

pub use session::{Buffers, ConnectionEnd, Event, Session, SessionSettings};
pub use stream::Response;
