//! One FastCGI transport connection, as the application side sees it: which
//! request is in flight, what to answer to management records, when the
//! connection must close.
//!
//! Sans-IO: [`Connection::receive`] takes the bytes read so far and appends
//! whatever must be sent back to an output `Vec`; the caller does the reading
//! and writing ([`crate::server`]) and builds the response body
//! ([`crate::reply`]). It must not know what a response says.
//!
//! One request at a time (`FCGI_MPXS_CONNS` is 0): a second
//! `FCGI_BEGIN_REQUEST` while one is in flight gets `FCGI_CANT_MPX_CONN`.
//! A request is ready once its params and its stdin have both ended; the
//! first [`MAX_STDIN_KEPT`] bytes of stdin are kept (SPECweb99's POST form),
//! the rest counted and dropped. Records for request ids that are not in flight are
//! ignored, as the spec asks.

use crate::error::ProtocolError;
use crate::params::Params;
use crate::record::{self, Record};

/// Largest `FCGI_PARAMS` stream accepted. nginx's default header buffers
/// allow 32 KiB of request headers; 1 MiB leaves room for any real server
/// while keeping a broken one from growing a connection without bound.
pub const MAX_PARAMS_BYTES: usize = 1 << 20;

/// Bytes of a request body kept for the answer: SPECweb99's POST form is
/// about 50 bytes; the other pages ignore the body, so a large one costs no memory.
pub const MAX_STDIN_KEPT: usize = 4096;

/// What `FCGI_GET_VALUES` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `FCGI_MAX_CONNS`: connections this process can hold open at once.
    pub max_conns: u32,
}

impl Limits {
    /// `FCGI_MAX_REQS`: without multiplexing, one request per connection.
    pub fn max_reqs(self) -> u32 {
        self.max_conns
    }
}

/// A request whose params and stdin have ended: time to answer it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub id: u16,
    pub params: Params,
    /// The start of the body: at most [`MAX_STDIN_KEPT`] bytes.
    pub stdin: Vec<u8>,
    /// The whole body's length, kept or not.
    pub stdin_len: u64,
}

/// What [`Connection::receive`] leaves the caller to do once the output it
/// appended has been written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// Read more bytes.
    NeedMore,
    /// Answer this request (its body as `FCGI_STDOUT` records), then call
    /// [`Connection::finish`].
    Ready(Request),
    /// Close the connection: the server did not ask to keep it.
    Close,
}

/// The application side of one connection.
#[derive(Debug)]
pub struct Connection {
    limits: Limits,
    state: State,
}

#[derive(Debug)]
enum State {
    Idle,
    Reading(Pending),
    /// Handed to the caller as [`Progress::Ready`]; [`Connection::finish`]
    /// ends it.
    Answering {
        id: u16,
        keep_conn: bool,
    },
}

#[derive(Debug)]
struct Pending {
    id: u16,
    keep_conn: bool,
    params: Vec<u8>,
    params_done: bool,
    stdin: Vec<u8>,
    stdin_len: u64,
    stdin_done: bool,
}

impl Connection {
    pub fn new(limits: Limits) -> Connection {
        Connection { limits, state: State::Idle }
    }

    /// Handles the whole records at the start of `input`, appending any
    /// replies (`FCGI_GET_VALUES_RESULT`, `FCGI_UNKNOWN_TYPE`,
    /// `FCGI_END_REQUEST` for a rejected or aborted request) to `out`.
    /// Returns how many bytes of `input` it used (the caller drops them) and
    /// what to do next; it stops at the first record that makes a request
    /// ready or the connection close, leaving the rest for the next call.
    pub fn receive(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(usize, Progress), ProtocolError> {
        let mut used = 0;
        while let Some((record, len)) = record::decode(&input[used..])? {
            used += len;
            if let Some(progress) = self.handle(record, out)? {
                return Ok((used, progress));
            }
        }
        Ok((used, Progress::NeedMore))
    }

    /// Ends the request last returned as [`Progress::Ready`] once its body
    /// has been appended: the empty `FCGI_STDOUT` record that closes the
    /// stream, then `FCGI_END_REQUEST` with `FCGI_REQUEST_COMPLETE`. Returns
    /// whether the connection stays open (`FCGI_KEEP_CONN`).
    pub fn finish(&mut self, out: &mut Vec<u8>) -> bool {
        let State::Answering { id, keep_conn } = std::mem::replace(&mut self.state, State::Idle) else {
            debug_assert!(false, "finish() without a ready request");
            return true;
        };
        record::encode_record(out, record::STDOUT, id, &[]);
        record::encode_end_request(out, id, 0, record::REQUEST_COMPLETE);
        keep_conn
    }

    fn handle(&mut self, record: Record<'_>, out: &mut Vec<u8>) -> Result<Option<Progress>, ProtocolError> {
        match record.kind {
            record::GET_VALUES if record.request_id == record::NULL_REQUEST_ID => {
                self.answer_get_values(record.content, out);
                Ok(None)
            }
            record::BEGIN_REQUEST => self.begin(record, out),
            record::ABORT_REQUEST => Ok(self.abort(record.request_id, out)),
            record::PARAMS => self.params(record),
            record::STDIN => self.stdin(record),
            // Types a responder never gets (DATA is the filter role's) or that
            // only flow from application to server: nothing to do.
            record::END_REQUEST..=record::GET_VALUES_RESULT | record::UNKNOWN_TYPE => Ok(None),
            unknown => {
                record::encode_unknown_type(out, unknown);
                Ok(None)
            }
        }
    }

    fn begin(&mut self, record: Record<'_>, out: &mut Vec<u8>) -> Result<Option<Progress>, ProtocolError> {
        let begin = record::decode_begin_request(record.content)?;
        let id = record.request_id;
        if id == record::NULL_REQUEST_ID {
            return Err(ProtocolError::NullRequestId);
        }
        if !matches!(self.state, State::Idle) {
            record::encode_end_request(out, id, 0, record::CANT_MPX_CONN);
            return Ok(None);
        }
        if begin.role != record::RESPONDER {
            record::encode_end_request(out, id, 0, record::UNKNOWN_ROLE);
            return Ok((!begin.keep_conn).then_some(Progress::Close));
        }
        self.state = State::Reading(Pending {
            id,
            keep_conn: begin.keep_conn,
            params: Vec::new(),
            params_done: false,
            stdin: Vec::new(),
            stdin_len: 0,
            stdin_done: false,
        });
        Ok(None)
    }

    /// The spec: the application answers an abort with `FCGI_END_REQUEST`.
    /// A request already being answered runs to its end instead: its
    /// `FCGI_END_REQUEST` is on its way.
    fn abort(&mut self, id: u16, out: &mut Vec<u8>) -> Option<Progress> {
        let State::Reading(pending) = &self.state else {
            return None;
        };
        if pending.id != id {
            return None;
        }
        let keep_conn = pending.keep_conn;
        self.state = State::Idle;
        record::encode_end_request(out, id, 0, record::REQUEST_COMPLETE);
        (!keep_conn).then_some(Progress::Close)
    }

    fn params(&mut self, record: Record<'_>) -> Result<Option<Progress>, ProtocolError> {
        let Some(pending) = self.pending(record.request_id) else {
            return Ok(None);
        };
        if pending.params_done {
            return Ok(None);
        }
        if record.content.is_empty() {
            pending.params_done = true;
            return self.ready_if_done();
        }
        if pending.params.len() + record.content.len() > MAX_PARAMS_BYTES {
            return Err(ProtocolError::ParamsTooLarge { limit: MAX_PARAMS_BYTES });
        }
        pending.params.extend_from_slice(record.content);
        Ok(None)
    }

    fn stdin(&mut self, record: Record<'_>) -> Result<Option<Progress>, ProtocolError> {
        let Some(pending) = self.pending(record.request_id) else {
            return Ok(None);
        };
        if record.content.is_empty() {
            pending.stdin_done = true;
            return self.ready_if_done();
        }
        // Past the kept start, a body is counted and dropped as it comes.
        if pending.stdin_done {
            return Ok(None);
        }
        let room = MAX_STDIN_KEPT.saturating_sub(pending.stdin.len());
        pending.stdin.extend_from_slice(&record.content[..room.min(record.content.len())]);
        pending.stdin_len += record.content.len() as u64;
        Ok(None)
    }

    fn pending(&mut self, id: u16) -> Option<&mut Pending> {
        match &mut self.state {
            State::Reading(pending) if pending.id == id => Some(pending),
            _ => None,
        }
    }

    fn ready_if_done(&mut self) -> Result<Option<Progress>, ProtocolError> {
        let State::Reading(pending) = &mut self.state else {
            return Ok(None);
        };
        if !(pending.params_done && pending.stdin_done) {
            return Ok(None);
        }
        let (id, keep_conn, stdin_len) = (pending.id, pending.keep_conn, pending.stdin_len);
        let params = Params::new(std::mem::take(&mut pending.params))?;
        let stdin = std::mem::take(&mut pending.stdin);
        self.state = State::Answering { id, keep_conn };
        Ok(Some(Progress::Ready(Request { id, params, stdin, stdin_len })))
    }

    /// `FCGI_GET_VALUES_RESULT` with the variables asked for that this
    /// application knows, each once; unknown names are left out, as the spec
    /// asks.
    fn answer_get_values(&self, content: &[u8], out: &mut Vec<u8>) {
        let known = [
            ("FCGI_MAX_CONNS", self.limits.max_conns),
            ("FCGI_MAX_REQS", self.limits.max_reqs()),
            ("FCGI_MPXS_CONNS", 0),
        ];
        let mut answered = [false; 3];
        let mut body = Vec::new();
        // A malformed query gets the pairs before the fault: management
        // records carry no request to fail.
        for (name, _) in record::decode_pairs(content).map_while(Result::ok) {
            if let Some(i) = known.iter().position(|(k, _)| k.as_bytes() == name) {
                if !std::mem::replace(&mut answered[i], true) {
                    record::encode_pair(&mut body, name, known[i].1.to_string().as_bytes());
                }
            }
        }
        record::encode_record(out, record::GET_VALUES_RESULT, record::NULL_REQUEST_ID, &body);
    }
}
