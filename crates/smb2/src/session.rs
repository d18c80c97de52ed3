//! One simulated client's SMB2 connection, sans-IO: bytes in through
//! [`Session::receive`], bytes out through [`Session::output`], outcomes
//! through [`Session::poll_event`].
//!
//! Owns the session's phase (handshake, ready, busy with one operation,
//! logging off, dead), matching each reply to the one outstanding request,
//! skipping interim (STATUS_PENDING) replies, and the scratch buffer for the
//! names a later step of an operation needs. It never touches a socket or a
//! clock; what each operation sends next is [`crate::op`]'s business.

use crate::deltree::Deltree;
use crate::error::ProtocolError;
use crate::event::{Done, Event};
use crate::handshake::{Handshake, Progress};
use crate::header::{command, Header, FLAG_RESPONSE, UNSOLICITED_MESSAGE_ID};
use crate::inbound::Inbound;
use crate::op::{self, Bracketed, Op, Reply, Step};
use crate::outbound::Outbound;
use crate::path;
use crate::request;
use crate::status;
use crate::{Credentials, FileId};
use std::collections::VecDeque;

#[derive(Debug, Clone)]
enum Phase {
    Handshake(Box<Handshake>),
    Ready,
    Busy(Op),
    Deltree(Box<Deltree>),
    /// `logoff`: TREE_DISCONNECT sent, then LOGOFF.
    TreeDisconnect,
    Logoff,
    Closed,
    /// The handshake failed or the server broke the protocol.
    Dead,
}

/// Everything but the inbound reassembly, so a reply borrowed from the
/// reassembly buffer can be handled while the rest is mutated.
#[derive(Debug, Clone)]
struct Core {
    tx: Outbound,
    phase: Phase,
    events: VecDeque<Event>,
    /// UTF-16LE name for a later step: the FIND pattern or RENAME target.
    scratch: Vec<u8>,
}

/// One client connection to one share. Drive it with the socket: write
/// [`output`](Session::output), report it with
/// [`consume_output`](Session::consume_output), pass what is read to
/// [`receive`](Session::receive), then drain [`poll_event`](Session::poll_event).
///
/// Operations may start only when [`is_ready`](Session::is_ready); each ends
/// in exactly one [`Event::Done`]. Starting one otherwise is a bug in the
/// caller and panics.
#[derive(Debug, Clone)]
pub struct Session {
    inbound: Inbound,
    core: Core,
}

impl Session {
    /// Starts the handshake: NEGOTIATE is queued at once. `host` is used in
    /// the tree path `\\host\share`.
    pub fn new(host: &str, share: &str, credentials: Credentials) -> Session {
        let mut tx = Outbound::new();
        let handshake = Handshake::start(&mut tx, host, share, credentials);
        Session {
            inbound: Inbound::new(),
            core: Core {
                tx,
                phase: Phase::Handshake(Box::new(handshake)),
                events: VecDeque::with_capacity(4),
                scratch: Vec::with_capacity(512),
            },
        }
    }

    /// Bytes waiting to be written to the socket.
    pub fn output(&self) -> &[u8] {
        self.core.tx.output()
    }

    /// `n` bytes of [`output`](Session::output) were written.
    pub fn consume_output(&mut self, n: usize) {
        self.core.tx.consume(n);
    }

    /// Bytes read from the socket, split anywhere. An error means the
    /// server broke the protocol; the session is dead.
    pub fn receive(&mut self, input: &[u8]) -> Result<(), ProtocolError> {
        let mut input = input;
        loop {
            // Checked per message, not per read: bytes after the message that ended the session
            // (a failed handshake, LOGOFF's reply) are ignored however the reads split them.
            if matches!(self.core.phase, Phase::Dead | Phase::Closed) {
                return Ok(());
            }
            let handled = match self.inbound.next(&mut input) {
                Ok(Some(message)) => self.core.handle(message.bytes()),
                Ok(None) => return Ok(()),
                Err(e) => Err(e),
            };
            if let Err(e) = handled {
                self.core.phase = Phase::Dead;
                return Err(e);
            }
        }
    }

    pub fn poll_event(&mut self) -> Option<Event> {
        self.core.events.pop_front()
    }

    /// Tree connected and no operation outstanding.
    pub fn is_ready(&self) -> bool {
        matches!(self.core.phase, Phase::Ready)
    }

    /// The dialect the server chose (0x0202 or 0x0210); 0 before NEGOTIATE's reply.
    pub fn dialect(&self) -> u16 {
        self.core.tx.dialect
    }

    /// Whether requests are signed (only when the server requires it).
    pub fn is_signing(&self) -> bool {
        self.core.tx.is_signing()
    }

    /// CREATE with the caller's NT parameters (see [`crate::create`]).
    pub fn open(
        &mut self,
        path: &str,
        desired_access: u32,
        share_access: u32,
        disposition: u32,
        create_options: u32,
        file_attributes: u32,
    ) {
        let params = op::create_params(desired_access, share_access, disposition, create_options, file_attributes);
        self.start(Op::Open, |tx| tx.send(command::CREATE, 0, |o| request::create(o, path, &params)));
    }

    pub fn close(&mut self, fid: FileId) {
        self.start(Op::Single, |tx| tx.send(command::CLOSE, 0, |o| request::close(o, fid)));
    }

    /// READ `length` bytes at `offset`, in as many requests as the server's
    /// MaxReadSize needs; the data is counted (`Done::bytes`) and dropped.
    pub fn read(&mut self, fid: FileId, offset: u64, length: u32) {
        self.start_with(|tx| Op::start_io(tx, false, fid, offset, length));
    }

    /// WRITE `length` pattern bytes at `offset` (byte `i` of the file is
    /// `i % 251`), in as many requests as the server's MaxWriteSize needs.
    pub fn write(&mut self, fid: FileId, offset: u64, length: u32) {
        self.start_with(|tx| Op::start_io(tx, true, fid, offset, length));
    }

    pub fn flush(&mut self, fid: FileId) {
        self.start(Op::Single, |tx| tx.send(command::FLUSH, 0, |o| request::flush(o, fid)));
    }

    /// Exclusive byte-range lock that fails at once if it conflicts.
    pub fn lock(&mut self, fid: FileId, offset: u64, length: u64) {
        self.start(Op::Single, |tx| op::send_lock(tx, fid, offset, length, false));
    }

    pub fn unlock(&mut self, fid: FileId, offset: u64, length: u64) {
        self.start(Op::Single, |tx| op::send_lock(tx, fid, offset, length, true));
    }

    /// QUERY_INFO of a FileInformationClass (see [`crate::info::file`]).
    pub fn query_file_info(&mut self, fid: FileId, class: u8) {
        self.start(Op::Single, |tx| op::send_query_file(tx, fid, class));
    }

    /// SET_INFO FileBasicInformation: access, write and change times a few
    /// seconds before now (dbench's SET_FILE_INFORMATION).
    pub fn set_file_times(&mut self, fid: FileId) {
        self.start(Op::Single, |tx| op::send_set_times(tx, fid));
    }

    /// Opens the share root, QUERY_INFO of an FsInformationClass, closes.
    pub fn query_fs_info(&mut self, class: u8) {
        self.start_bracketed(Bracketed::QueryFs { class }, "", &op::STAT);
    }

    /// QUERY_PATH_INFORMATION: open for attributes, query basic and
    /// standard information, close.
    pub fn stat(&mut self, path: &str) {
        self.start_bracketed(Bracketed::Stat, path, &op::STAT);
    }

    /// QUERY_PATH_INFORMATION at one level: open for attributes, QUERY_INFO
    /// of `class` (see [`crate::info::file`]), close.
    pub fn query_path_info(&mut self, path: &str, class: u8) {
        self.start_bracketed(Bracketed::QueryPath { class }, path, &op::STAT);
    }

    /// FIND_FIRST: opens the pattern's directory, one QUERY_DIRECTORY with
    /// its last component as the pattern, closes. `Done::entries` counts
    /// what that query returned (`.` and `..` included when they match).
    pub fn find(&mut self, pattern: &str, max_entries: u32) {
        let (dir, last) = path::split_last(pattern);
        self.core.scratch.clear();
        path::put_utf16(&mut self.core.scratch, if last.is_empty() { "*" } else { last });
        self.start_bracketed(Bracketed::Find { max_entries }, dir, &op::LIST);
    }

    pub fn mkdir(&mut self, path: &str) {
        self.start_bracketed(Bracketed::Mkdir, path, &op::MKDIR);
    }

    /// Opens the directory for DELETE, sets its disposition, closes.
    pub fn rmdir(&mut self, path: &str) {
        self.start_bracketed(Bracketed::Rmdir, path, &op::RMDIR);
    }

    /// Opens a non-directory with DELETE_ON_CLOSE, closes.
    pub fn unlink(&mut self, path: &str) {
        self.start_bracketed(Bracketed::Unlink, path, &op::UNLINK);
    }

    /// Opens `old` for DELETE, SET_INFO FileRenameInformation to `new`
    /// (no replace), closes.
    pub fn rename(&mut self, old: &str, new: &str) {
        self.core.scratch.clear();
        path::put_path(&mut self.core.scratch, new);
        self.start_bracketed(Bracketed::Rename, old, &op::RENAME);
    }

    /// Deletes the tree at `path`; OK if it is gone afterwards, including
    /// when it never existed. Not for the hot path: it allocates.
    pub fn deltree(&mut self, path: &str) {
        self.start_phase(|tx| Phase::Deltree(Box::new(Deltree::start(tx, path))));
    }

    /// TREE_DISCONNECT, LOGOFF, then [`Event::Closed`].
    pub fn logoff(&mut self) {
        self.start_phase(|tx| {
            tx.send(command::TREE_DISCONNECT, 0, request::empty);
            Phase::TreeDisconnect
        });
    }

    fn start_bracketed(&mut self, what: Bracketed, path: &str, params: &request::CreateParams) {
        self.start(Op::bracketed(what), |tx| tx.send(command::CREATE, 0, |o| request::create(o, path, params)));
    }

    fn start(&mut self, op: Op, send: impl FnOnce(&mut Outbound)) {
        self.start_with(|tx| {
            send(tx);
            op
        });
    }

    fn start_with(&mut self, begin: impl FnOnce(&mut Outbound) -> Op) {
        self.start_phase(|tx| Phase::Busy(begin(tx)));
    }

    fn start_phase(&mut self, begin: impl FnOnce(&mut Outbound) -> Phase) {
        assert!(self.is_ready(), "an operation was started while the session is not ready ({:?})", self.core.phase);
        self.core.phase = begin(&mut self.core.tx);
    }
}

impl Core {
    /// One message from the server.
    fn handle(&mut self, msg: &[u8]) -> Result<(), ProtocolError> {
        let h = Header::parse(msg)?;
        if h.flags & FLAG_RESPONSE == 0 || h.message_id == UNSOLICITED_MESSAGE_ID {
            // An oplock or lease break notification: this client holds
            // neither, so there is nothing to acknowledge.
            return Ok(());
        }
        let expected = self.tx.outstanding();
        let Some(out) = expected.filter(|o| o.message_id == h.message_id) else {
            return Err(ProtocolError::UnexpectedReply { got: h.message_id, expected: expected.map(|o| o.message_id) });
        };
        if h.command != out.command {
            return Err(ProtocolError::CommandMismatch { got: h.command, expected: out.command });
        }
        self.tx.grant(h.credits);
        if h.is_async() && h.status == status::PENDING {
            // Interim reply: the final one follows with the same MessageId.
            return Ok(());
        }
        self.tx.complete();
        if self.tx.credits() == 0 {
            return Err(ProtocolError::NoCredits);
        }
        let reply = Reply { status: h.status, msg };
        let phase = std::mem::replace(&mut self.phase, Phase::Dead);
        self.phase = match phase {
            Phase::Handshake(mut hs) => match hs.on_reply(&mut self.tx, &h, msg)? {
                Progress::Sent => Phase::Handshake(hs),
                Progress::Connected => self.emit(Event::Connected, Phase::Ready),
                Progress::Failed(e) => self.emit(Event::Failed(e), Phase::Dead),
            },
            Phase::Busy(mut op) => match op.on_reply(&mut self.tx, &self.scratch, &reply)? {
                Step::Sent => Phase::Busy(op),
                Step::Done(done) => self.done(done),
            },
            Phase::Deltree(mut walk) => match walk.on_reply(&mut self.tx, &reply)? {
                Step::Sent => Phase::Deltree(walk),
                Step::Done(done) => self.done(done),
            },
            Phase::TreeDisconnect => {
                self.tx.send(command::LOGOFF, 0, request::empty);
                Phase::Logoff
            }
            Phase::Logoff => self.emit(Event::Closed, Phase::Closed),
            Phase::Ready | Phase::Closed | Phase::Dead => {
                unreachable!("invariant: a reply matched an outstanding request, so an operation is running")
            }
        };
        Ok(())
    }

    fn done(&mut self, done: Done) -> Phase {
        self.emit(Event::Done(done), Phase::Ready)
    }

    fn emit(&mut self, event: Event, next: Phase) -> Phase {
        self.events.push_back(event);
        next
    }
}
