//! Recursive delete of a directory tree (dbench's DELTREE, run between
//! loadfile passes, never on the hot path): it is allowed to allocate.
//!
//! Depth first with an explicit stack: list a directory (open, QUERY_DIRECTORY
//! until NO_MORE_FILES, close), unlink its files, push its subdirectories;
//! once every directory above it on the stack is gone, remove it (open with
//! DELETE, SET_INFO disposition, close). A tree that is already gone, or
//! vanishes under the walk, is success; the first other failure ends the walk
//! with its status.

use crate::create::attributes;
use crate::error::ProtocolError;
use crate::event::Done;
use crate::header::command;
use crate::info;
use crate::op::{Reply, Step, LIST, RMDIR, UNLINK};
use crate::outbound::Outbound;
use crate::path;
use crate::reply;
use crate::request;
use crate::status;
use crate::FileId;

/// The QUERY_DIRECTORY pattern matching every entry, UTF-16LE.
const ALL: &[u8] = &[b'*', 0];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    ListOpen,
    ListQuery { first: bool },
    ListClose,
    UnlinkOpen,
    UnlinkClose,
    RmdirOpen,
    RmdirSet,
    RmdirClose,
}

#[derive(Debug, Clone)]
struct Dir {
    path: String,
    /// Its files are gone and its subdirectories sit above it on the stack.
    listed: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Deltree {
    stack: Vec<Dir>,
    /// Files of the directory last listed, still to unlink.
    files: Vec<String>,
    /// Subdirectories found by the listing in progress.
    subdirs: Vec<String>,
    stage: Stage,
    fid: FileId,
    status: u32,
}

fn vanished(status: u32) -> bool {
    matches!(status, status::OBJECT_NAME_NOT_FOUND | status::OBJECT_PATH_NOT_FOUND | status::NO_SUCH_FILE)
}

impl Deltree {
    /// Starts the walk at `root`: queues the first open.
    pub fn start(tx: &mut Outbound, root: &str) -> Deltree {
        let root = path::components(root).collect::<Vec<_>>().join("\\");
        let mut walk = Deltree {
            stack: vec![Dir { path: root, listed: false }],
            files: Vec::new(),
            subdirs: Vec::new(),
            stage: Stage::ListOpen,
            fid: FileId([0; 16]),
            status: status::OK,
        };
        let first = walk.next(tx);
        debug_assert_eq!(first, Step::Sent, "a fresh walk has the root to list");
        walk
    }

    fn finish(&self, status: u32) -> Step {
        Step::Done(Done { status, fid: None, bytes: 0, entries: 0 })
    }

    /// Queues the next request of the walk, or ends it.
    fn next(&mut self, tx: &mut Outbound) -> Step {
        if let Some(file) = self.files.pop() {
            self.stage = Stage::UnlinkOpen;
            tx.send(command::CREATE, 0, |o| request::create(o, &file, &UNLINK));
            return Step::Sent;
        }
        let Some(top) = self.stack.last() else { return self.finish(status::OK) };
        if top.listed {
            self.stage = Stage::RmdirOpen;
            tx.send(command::CREATE, 0, |o| request::create(o, &top.path, &RMDIR));
        } else {
            self.stage = Stage::ListOpen;
            tx.send(command::CREATE, 0, |o| request::create(o, &top.path, &LIST));
        }
        Step::Sent
    }

    fn close(&mut self, tx: &mut Outbound, stage: Stage) -> Step {
        self.stage = stage;
        let fid = self.fid;
        tx.send(command::CLOSE, 0, |o| request::close(o, fid));
        Step::Sent
    }

    fn query(&mut self, tx: &mut Outbound, first: bool) -> Step {
        self.stage = Stage::ListQuery { first };
        let (fid, max) = (self.fid, 65536u32.min(tx.max_transact));
        let flags = if first { request::RESTART_SCANS } else { 0 };
        tx.send(command::QUERY_DIRECTORY, 0, |o| {
            request::query_directory(o, fid, info::file::BOTH_DIRECTORY, flags, ALL, max)
        });
        Step::Sent
    }

    pub fn on_reply(&mut self, tx: &mut Outbound, r: &Reply<'_>) -> Result<Step, ProtocolError> {
        let ok = r.status == status::OK;
        Ok(match self.stage {
            Stage::ListOpen if ok => {
                self.fid = reply::create(r.msg)?;
                self.query(tx, true)
            }
            Stage::ListOpen if vanished(r.status) => {
                self.stack.pop();
                self.next(tx)
            }
            Stage::ListOpen if r.status == status::NOT_A_DIRECTORY => {
                // The tree is a plain file: delete it as one.
                let dir = self.stack.pop().expect("invariant: ListOpen works on the stack's top");
                self.files.push(dir.path);
                self.next(tx)
            }
            Stage::ListQuery { .. } if ok => {
                let dir = &self.stack.last().expect("invariant: listing the stack's top").path;
                let buffer = reply::output_buffer(r.msg, "QUERY_DIRECTORY")?;
                for entry in reply::dir_entries(buffer) {
                    let entry = entry?;
                    if entry.is_dot_or_dotdot() {
                        continue;
                    }
                    let full = path::join(dir, &entry.name_string());
                    if entry.attributes & attributes::DIRECTORY != 0 {
                        self.subdirs.push(full);
                    } else {
                        self.files.push(full);
                    }
                }
                self.query(tx, false)
            }
            Stage::ListQuery { .. } => {
                if !matches!(r.status, status::NO_MORE_FILES | status::NO_SUCH_FILE) {
                    self.status = r.status;
                }
                self.close(tx, Stage::ListClose)
            }
            Stage::ListClose => {
                if self.status != status::OK {
                    return Ok(self.finish(self.status));
                }
                let top = self.stack.last_mut().expect("invariant: listing the stack's top");
                top.listed = true;
                let subdirs = std::mem::take(&mut self.subdirs);
                self.stack.extend(subdirs.into_iter().map(|path| Dir { path, listed: false }));
                self.next(tx)
            }
            Stage::UnlinkOpen if ok => {
                self.fid = reply::create(r.msg)?;
                self.close(tx, Stage::UnlinkClose)
            }
            Stage::UnlinkOpen | Stage::RmdirOpen if vanished(r.status) => {
                if self.stage == Stage::RmdirOpen {
                    self.stack.pop();
                }
                self.next(tx)
            }
            Stage::UnlinkClose => self.next(tx),
            Stage::RmdirOpen if ok => {
                self.fid = reply::create(r.msg)?;
                self.stage = Stage::RmdirSet;
                let fid = self.fid;
                tx.send(command::SET_INFO, 0, |o| {
                    request::set_info(o, info::TYPE_FILE, info::file::DISPOSITION, fid, request::disposition_info)
                });
                Step::Sent
            }
            Stage::RmdirSet => {
                self.status = r.status;
                self.close(tx, Stage::RmdirClose)
            }
            Stage::RmdirClose => {
                if self.status != status::OK {
                    return Ok(self.finish(self.status));
                }
                self.stack.pop();
                self.next(tx)
            }
            // A failed open other than "not there".
            Stage::ListOpen | Stage::UnlinkOpen | Stage::RmdirOpen => self.finish(r.status),
        })
    }
}
