//! crest's SMB2 client, sans-IO: one [`Session`] per simulated client, driven
//! by the engine over a nonblocking socket (many sessions per thread), to
//! replay dbench's NetBench-derived loadfiles against Samba or Windows.
//!
//! A session takes bytes in ([`Session::receive`]) and gives bytes out
//! ([`Session::output`]) and [`Event`]s ([`Session::poll_event`]); it never
//! touches a socket. One operation is outstanding at a time (closed loop).
//! On the hot path nothing allocates: requests are built in a reused output
//! buffer (names encoded straight into it, WRITE data generated into it),
//! replies are parsed in place, and READ data is counted and dropped as it
//! streams past.
//!
//! Layers, each depending only on those below it:
//! - `session`: phases, reply matching, interim replies; the public API;
//! - `handshake`: NEGOTIATE, SESSION_SETUP with NTLMSSP, TREE_CONNECT;
//!   `op`: what each operation sends next and which status decides it;
//!   `deltree`: the recursive delete (allowed to allocate);
//! - `outbound`: MessageIds, credits, signing, the output buffer;
//!   `inbound`: cutting the byte stream into messages;
//! - `request` / `reply`: message bodies; `header`: the SMB2 and
//!   transport headers; `ntlm`: NTLMv2; `sign`: HMAC-SHA256 signing;
//!   `path`: names as UTF-16; `wire`: little-endian fields;
//!   `ambient`: the wall clock and unique bytes;
//! - [`status`], [`create`], [`info`]: the protocol's numbers.
//!
//! Implemented: dialects 2.0.2 and 2.1, NTLMv2 over raw NTLMSSP, signing when
//! the server requires it. Not implemented: SMB 3.x (encryption, AES
//! signing), Kerberos/SPNEGO, compounding, oplocks and leases, DFS,
//! reconnect.

mod ambient;
pub mod create;
mod deltree;
mod error;
mod event;
mod handshake;
mod header;
mod inbound;
pub mod info;
mod ntlm;
mod op;
mod outbound;
mod path;
mod reply;
mod request;
mod session;
mod sign;
pub mod status;
mod wire;

pub use error::{ProtocolError, SetupError};
pub use event::{Done, Event};
pub use request::pattern_byte;
pub use session::Session;

/// Who logs on. `domain` may be empty (a standalone server takes any).
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub user: String,
    pub password: String,
    pub domain: String,
}

/// Names the user and domain, never the password: a debug print or a panic
/// message must not carry it.
impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &"<hidden>")
            .field("domain", &self.domain)
            .finish()
    }
}

/// An open handle: SMB2_FILEID, persistent then volatile half.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileId(pub [u8; 16]);
