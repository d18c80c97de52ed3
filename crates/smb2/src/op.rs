//! The operations a ready session runs, each a short sequence of requests,
//! one at a time: what to send next when a reply comes, and which reply's
//! status decides the outcome.
//!
//! Owns the per-operation state and the "decisive status" rules:
//! - a failed CREATE ends the operation with its status (nothing to close);
//! - a failed middle step is reported, but the handle is still closed;
//! - otherwise the CLOSE's status is reported;
//! - FIND reports NO_SUCH_FILE when its first QUERY_DIRECTORY finds nothing
//!   (NO_MORE_FILES included), as dbench's loadfiles expect.
//!
//! Requests are queued through [`Outbound`]; state is plain data, so no
//! operation allocates (deltree, the exception, lives in [`crate::deltree`]).

use crate::create::{access, disposition, options, share};
use crate::error::ProtocolError;
use crate::event::Done;
use crate::header::command;
use crate::info;
use crate::outbound::Outbound;
use crate::reply;
use crate::request::{self, CreateParams};
use crate::status;
use crate::{ambient, FileId};

/// What the session hands an operation with each final reply.
pub(crate) struct Reply<'a> {
    pub status: u32,
    /// The whole message, or only the head of a successful READ reply.
    pub msg: &'a [u8],
}

/// After a reply: another request is queued, or the operation is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    Sent,
    Done(Done),
}

/// Output buffer size for QUERY_INFO and QUERY_DIRECTORY (capped by the
/// server's MaxTransactSize): room for about 500 directory entries.
const MAX_OUTPUT: u32 = 65536;

fn max_output(tx: &Outbound) -> u32 {
    MAX_OUTPUT.min(tx.max_transact)
}

/// Seconds before now that `set_file_times` stamps: in the past, so that a
/// later write visibly moves the times.
const SET_TIMES_AGO_S: u64 = 3;

/// The opens behind path operations.
pub(crate) const STAT: CreateParams = CreateParams {
    desired_access: access::READ_ATTRIBUTES | access::SYNCHRONIZE,
    file_attributes: 0,
    share_access: share::ALL,
    disposition: disposition::OPEN,
    options: 0,
};
pub(crate) const LIST: CreateParams = CreateParams {
    desired_access: access::LIST_DIRECTORY | access::READ_ATTRIBUTES | access::SYNCHRONIZE,
    options: options::DIRECTORY_FILE,
    ..STAT
};
pub(crate) const MKDIR: CreateParams =
    CreateParams { disposition: disposition::CREATE, options: options::DIRECTORY_FILE, ..STAT };
pub(crate) const RMDIR: CreateParams = CreateParams {
    desired_access: access::DELETE | access::READ_ATTRIBUTES | access::SYNCHRONIZE,
    options: options::DIRECTORY_FILE,
    ..STAT
};
pub(crate) const UNLINK: CreateParams =
    CreateParams { options: options::NON_DIRECTORY_FILE | options::DELETE_ON_CLOSE, ..RMDIR };
pub(crate) const RENAME: CreateParams = CreateParams { options: 0, ..RMDIR };

pub(crate) fn create_params(
    desired_access: u32,
    share_access: u32,
    disposition: u32,
    options: u32,
    attributes: u32,
) -> CreateParams {
    CreateParams { desired_access, file_attributes: attributes, share_access, disposition, options }
}

/// The opens that bracket a middle step: which middle step follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bracketed {
    /// QUERY_INFO of a file-system class on the share root.
    QueryFs {
        class: u8,
    },
    /// QUERY_INFO basic, then standard.
    Stat,
    /// QUERY_INFO of one file class.
    QueryPath {
        class: u8,
    },
    /// One QUERY_DIRECTORY with the pattern held in the session's scratch.
    Find {
        max_entries: u32,
    },
    Mkdir,
    /// SET_INFO disposition.
    Rmdir,
    /// Nothing: the open asked for DELETE_ON_CLOSE.
    Unlink,
    /// SET_INFO rename to the name held in the session's scratch.
    Rename,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    Create,
    Middle(u8),
    Close,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// CREATE, reported with its handle.
    Open,
    /// One request whose status is the outcome (CLOSE, FLUSH, LOCK, QUERY_INFO, SET_INFO).
    Single,
    /// READ or WRITE, in chunks the server and the credits allow.
    Io { write: bool, fid: FileId, offset: u64, left: u32, asked: u32, bytes: u64 },
    /// CREATE, middle steps, CLOSE.
    Bracketed { what: Bracketed, stage: Stage, fid: FileId, status: u32, entries: u32 },
}

impl Op {
    pub fn bracketed(what: Bracketed) -> Op {
        Op::Bracketed { what, stage: Stage::Create, fid: FileId([0; 16]), status: status::OK, entries: 0 }
    }

    /// Starts a READ or WRITE: queues the first chunk.
    pub fn start_io(tx: &mut Outbound, write: bool, fid: FileId, offset: u64, length: u32) -> Op {
        let mut op = Op::Io { write, fid, offset, left: length, asked: 0, bytes: 0 };
        op.send_chunk(tx);
        op
    }

    fn send_chunk(&mut self, tx: &mut Outbound) {
        if let Op::Io { write, fid, offset, left, ref mut asked, .. } = *self {
            let n = left.min(tx.io_limit(write));
            *asked = n;
            if write {
                tx.send(command::WRITE, n, |o| request::write(o, fid, offset, n));
            } else {
                tx.send(command::READ, n, |o| request::read(o, fid, offset, n));
            }
        }
    }

    /// Takes the final reply to the request this operation sent last.
    /// `scratch` holds the FIND pattern or RENAME target (UTF-16LE).
    pub fn on_reply(&mut self, tx: &mut Outbound, scratch: &[u8], r: &Reply<'_>) -> Result<Step, ProtocolError> {
        let done = |status: u32| Step::Done(Done { status, fid: None, bytes: 0, entries: 0 });
        match self {
            Op::Open => {
                let fid = if r.status == status::OK { Some(reply::create(r.msg)?) } else { None };
                Ok(Step::Done(Done { status: r.status, fid, bytes: 0, entries: 0 }))
            }
            Op::Single => Ok(done(r.status)),
            Op::Io { write, offset, left, asked, bytes, .. } => {
                if r.status != status::OK {
                    // A failure after some data moved (EOF mid-read) still
                    // reports the bytes that did.
                    let status = if *bytes > 0 { status::OK } else { r.status };
                    return Ok(Step::Done(Done { status, fid: None, bytes: *bytes, entries: 0 }));
                }
                let moved = (if *write { reply::write(r.msg)? } else { reply::read(r.msg)? }).min(*asked);
                *bytes += u64::from(moved);
                *offset += u64::from(moved);
                *left -= moved;
                // A short transfer is the end of the file (reads) or all the
                // server will take (writes): stop there.
                if *left == 0 || moved < *asked {
                    return Ok(Step::Done(Done { status: status::OK, fid: None, bytes: *bytes, entries: 0 }));
                }
                self.send_chunk(tx);
                Ok(Step::Sent)
            }
            Op::Bracketed { what, stage, fid, status, entries } => {
                match *stage {
                    Stage::Create => {
                        if r.status != status::OK {
                            return Ok(done(r.status));
                        }
                        *fid = reply::create(r.msg)?;
                        *stage = Stage::Middle(0);
                    }
                    Stage::Middle(i) => {
                        if r.status != status::OK && *status == status::OK {
                            *status = r.status;
                        }
                        if let Bracketed::Find { max_entries } = *what {
                            *status = match r.status {
                                status::OK => {
                                    let buffer = reply::output_buffer(r.msg, "QUERY_DIRECTORY")?;
                                    let mut n = 0u32;
                                    for e in reply::dir_entries(buffer) {
                                        e?;
                                        n += 1;
                                    }
                                    *entries = n.min(max_entries);
                                    if n == 0 {
                                        status::NO_SUCH_FILE
                                    } else {
                                        status::OK
                                    }
                                }
                                status::NO_MORE_FILES => status::NO_SUCH_FILE,
                                other => other,
                            };
                        }
                        *stage = Stage::Middle(i + 1);
                    }
                    Stage::Close => {
                        let status = if *status != status::OK { *status } else { r.status };
                        return Ok(Step::Done(Done { status, fid: None, bytes: 0, entries: *entries }));
                    }
                }
                let Stage::Middle(i) = *stage else { unreachable!("set just above") };
                let (fid, failed) = (*fid, *status != status::OK);
                if failed || !send_middle(tx, *what, i, fid, scratch) {
                    *stage = Stage::Close;
                    tx.send(command::CLOSE, 0, |o| request::close(o, fid));
                }
                Ok(Step::Sent)
            }
        }
    }
}

/// Queues middle step `i` of `what`; false when there is none (time to close).
fn send_middle(tx: &mut Outbound, what: Bracketed, i: u8, fid: FileId, scratch: &[u8]) -> bool {
    let max = max_output(tx);
    match (what, i) {
        (Bracketed::QueryFs { class }, 0) => {
            tx.send(command::QUERY_INFO, 0, |o| request::query_info(o, info::TYPE_FILESYSTEM, class, fid, max))
        }
        (Bracketed::QueryPath { class }, 0) => {
            tx.send(command::QUERY_INFO, 0, |o| request::query_info(o, info::TYPE_FILE, class, fid, max))
        }
        (Bracketed::Stat, 0) => {
            tx.send(command::QUERY_INFO, 0, |o| request::query_info(o, info::TYPE_FILE, info::file::BASIC, fid, max))
        }
        (Bracketed::Stat, 1) => {
            tx.send(command::QUERY_INFO, 0, |o| request::query_info(o, info::TYPE_FILE, info::file::STANDARD, fid, max))
        }
        (Bracketed::Find { .. }, 0) => tx.send(command::QUERY_DIRECTORY, 0, |o| {
            request::query_directory(o, fid, info::file::BOTH_DIRECTORY, request::RESTART_SCANS, scratch, max)
        }),
        (Bracketed::Rmdir, 0) => tx.send(command::SET_INFO, 0, |o| {
            request::set_info(o, info::TYPE_FILE, info::file::DISPOSITION, fid, request::disposition_info)
        }),
        (Bracketed::Rename, 0) => tx.send(command::SET_INFO, 0, |o| {
            request::set_info(o, info::TYPE_FILE, info::file::RENAME, fid, |o| request::rename_info(o, scratch))
        }),
        _ => return false,
    }
    true
}

/// Queues the SET_INFO of FileBasicInformation that stamps access, write and
/// change times a few seconds in the past (creation time left alone).
pub(crate) fn send_set_times(tx: &mut Outbound, fid: FileId) {
    let then = ambient::filetime_now().saturating_sub(SET_TIMES_AGO_S * 10_000_000);
    tx.send(command::SET_INFO, 0, |o| {
        request::set_info(o, info::TYPE_FILE, info::file::BASIC, fid, |o| request::basic_info(o, 0, then, then, then))
    });
}

/// Queues a one-element LOCK: exclusive and fail-immediately, or unlock.
pub(crate) fn send_lock(tx: &mut Outbound, fid: FileId, offset: u64, length: u64, unlock: bool) {
    let flags = if unlock { request::LOCK_UNLOCK } else { request::LOCK_EXCLUSIVE | request::LOCK_FAIL_IMMEDIATELY };
    tx.send(command::LOCK, 0, |o| request::lock(o, fid, offset, length, flags));
}

/// Queues QUERY_INFO of a file class on an open handle.
pub(crate) fn send_query_file(tx: &mut Outbound, fid: FileId, class: u8) {
    let max = max_output(tx);
    tx.send(command::QUERY_INFO, 0, |o| request::query_info(o, info::TYPE_FILE, class, fid, max));
}
