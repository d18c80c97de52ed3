//! The two ways a session ends badly: the server broke the protocol
//! ([`ProtocolError`], returned by `Session::receive`), or the handshake was
//! refused ([`SetupError`], delivered as `Event::Failed`). Owns only the types
//! and their messages; an operation's NTSTATUS is data (`Done::status`), never
//! an error.

use crate::status;

/// The server sent something this client cannot follow; the session is dead
/// and its socket should be closed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("transport frame starts with {0:#04x}, not 0x00 (is the peer speaking SMB2 over TCP port 445 framing?)")]
    Framing(u8),
    #[error("message does not start with 0xFE 'SMB' (SMB1 or not SMB at all)")]
    NotSmb2,
    #[error("{command} reply of {len} bytes is too short or points outside itself")]
    Truncated { command: &'static str, len: usize },
    #[error("reply with MessageId {got} while {expected:?} was outstanding")]
    UnexpectedReply { got: u64, expected: Option<u64> },
    #[error("reply for command {got:#06x} to a {expected:#06x} request")]
    CommandMismatch { got: u16, expected: u16 },
    #[error("server chose dialect {0:#06x}, which was not offered (offered 0x0202 and 0x0210)")]
    Dialect(u16),
    #[error("server left this client with no credits, so no request can be sent")]
    NoCredits,
    #[error("NTLMSSP challenge is malformed: {0}")]
    Challenge(&'static str),
}

/// Why the handshake (NEGOTIATE, SESSION_SETUP, TREE_CONNECT) failed; after
/// `Event::Failed` the session sends nothing more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("NEGOTIATE refused: {}", status::name(*.0))]
    Negotiate(u32),
    #[error("logon failure: the server rejected the user name or password")]
    LogonFailure,
    #[error("SESSION_SETUP refused: {}", status::name(*.0))]
    SessionSetup(u32),
    #[error("the server requires encryption (SMB 3), which this client does not implement")]
    EncryptionRequired,
    #[error("the share does not exist on the server (BAD_NETWORK_NAME)")]
    BadShare,
    #[error("TREE_CONNECT refused: {}", status::name(*.0))]
    TreeConnect(u32),
}
