//! What a session reports to its driver. Owns only the types.

use crate::error::SetupError;
use crate::FileId;

/// One thing that happened, from [`crate::Session::poll_event`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// NEGOTIATE, SESSION_SETUP and TREE_CONNECT succeeded; operations may start.
    Connected,
    /// One operation finished, whatever its NT status.
    Done(Done),
    /// The handshake failed; the session is dead and sends nothing more.
    Failed(SetupError),
    /// `logoff` finished (TREE_DISCONNECT and LOGOFF answered); close the socket.
    Closed,
}

/// The outcome of one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    /// NTSTATUS of the decisive reply: a failed open's, else a failed middle
    /// step's, else the final close's (`find`: NO_SUCH_FILE when nothing matched).
    pub status: u32,
    /// The handle, for a successful `open`.
    pub fid: Option<FileId>,
    /// Data bytes read or written.
    pub bytes: u64,
    /// Directory entries a `find` returned (at most its `max_entries`).
    pub entries: u32,
}
