//! The sending side of a connection: the output buffer, MessageIds, credits,
//! the one outstanding request, and signing.
//!
//! Owns numbering and credit accounting ([MS-SMB2] 3.2.4.1): each request
//! takes the next MessageId and as many credits as its CreditCharge; each
//! reply grants CreditResponse credits. Writes headers and leaves bodies to
//! [`crate::request`]. The buffer is reused: once the caller has consumed all
//! of it, it is cleared, so steady-state sending does not allocate.

use crate::header::{begin_transport, command, patch_transport, RequestHeader, TRANSPORT_LEN};
use crate::sign::Signer;

/// Credits asked for on every request: enough that a closed-loop client
/// never waits for credits, few enough not to hog the server's pool.
const CREDIT_REQUEST: u16 = 64;
/// One credit pays for 64 KiB of READ/WRITE payload ([MS-SMB2] 3.1.5.2).
const CREDIT_BYTES: u32 = 65536;
/// Largest READ or WRITE this client sends in one request, whatever the
/// server allows (Samba offers 8 MiB with large MTU).
const MAX_IO: u32 = 8 << 20;

/// The request awaiting its reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Outstanding {
    pub message_id: u64,
    pub command: u16,
}

#[derive(Debug, Clone)]
pub(crate) struct Outbound {
    out: Vec<u8>,
    /// Bytes of `out` the caller has already written to the socket.
    consumed: usize,
    next_message_id: u64,
    credits: u32,
    outstanding: Option<Outstanding>,
    pub session_id: u64,
    pub tree_id: u32,
    /// The dialect the server chose; 0 before NEGOTIATE's reply.
    pub dialect: u16,
    /// 2.1 with large MTU: CreditCharge counts 64 KiB units.
    multi_credit: bool,
    pub max_read: u32,
    pub max_write: u32,
    pub max_transact: u32,
    signer: Option<Signer>,
}

impl Outbound {
    pub fn new() -> Outbound {
        Outbound {
            out: Vec::with_capacity(4096),
            consumed: 0,
            next_message_id: 0,
            // A new connection may send one request: NEGOTIATE.
            credits: 1,
            outstanding: None,
            session_id: 0,
            tree_id: 0,
            dialect: 0,
            multi_credit: false,
            max_read: CREDIT_BYTES,
            max_write: CREDIT_BYTES,
            max_transact: CREDIT_BYTES,
            signer: None,
        }
    }

    pub fn output(&self) -> &[u8] {
        &self.out[self.consumed..]
    }

    pub fn consume(&mut self, n: usize) {
        assert!(
            n <= self.out.len() - self.consumed,
            "consume_output({n}) beyond the {} bytes pending",
            self.output().len()
        );
        self.consumed += n;
        if self.consumed == self.out.len() {
            self.out.clear();
            self.consumed = 0;
        }
    }

    pub fn credits(&self) -> u32 {
        self.credits
    }

    pub fn outstanding(&self) -> Option<Outstanding> {
        self.outstanding
    }

    /// Records a reply's credit grant (interim replies grant too).
    pub fn grant(&mut self, credits: u16) {
        self.credits = self.credits.saturating_add(u32::from(credits));
    }

    /// The outstanding request got its final reply.
    pub fn complete(&mut self) {
        self.outstanding = None;
    }

    /// Applies the negotiated dialect and limits.
    pub fn negotiated(&mut self, dialect: u16, multi_credit: bool, max_read: u32, max_write: u32, max_transact: u32) {
        self.dialect = dialect;
        self.multi_credit = multi_credit;
        let single = |v: u32| if multi_credit { v } else { v.min(CREDIT_BYTES) };
        self.max_read = single(max_read).min(MAX_IO);
        self.max_write = single(max_write).min(MAX_IO);
        self.max_transact = single(max_transact).min(MAX_IO);
    }

    pub fn enable_signing(&mut self, session_key: &[u8; 16]) {
        self.signer = Some(Signer::new(session_key));
    }

    pub fn is_signing(&self) -> bool {
        self.signer.is_some()
    }

    /// The largest READ (or WRITE, `write`) the next request may carry:
    /// the server's limit, and no more than the credits at hand pay for.
    pub fn io_limit(&self, write: bool) -> u32 {
        let server = if write { self.max_write } else { self.max_read };
        let affordable = if self.multi_credit { self.credits.saturating_mul(CREDIT_BYTES) } else { CREDIT_BYTES };
        server.min(affordable).max(1)
    }

    /// Queues one request: header, then the body `body` appends. `payload`
    /// is the READ/WRITE length that sets the CreditCharge (0 otherwise).
    pub fn send(&mut self, command: u16, payload: u32, body: impl FnOnce(&mut Vec<u8>)) {
        assert!(self.outstanding.is_none(), "invariant: one request outstanding at a time");
        // CreditCharge = (payload - 1) / 64 KiB + 1 with multi-credit; the
        // field is reserved (0) otherwise, and the request still uses one
        // credit and one MessageId.
        let charge = if self.multi_credit { payload.saturating_sub(1) / CREDIT_BYTES + 1 } else { 0 };
        let cost = charge.max(1);
        debug_assert!(cost <= self.credits, "invariant: io_limit keeps requests within the credits at hand");
        let message_id = self.next_message_id;
        let at = begin_transport(&mut self.out);
        RequestHeader {
            command,
            credit_charge: charge as u16,
            credit_request: CREDIT_REQUEST.max(charge as u16),
            message_id,
            tree_id: self.tree_id,
            session_id: self.session_id,
        }
        .write(&mut self.out);
        body(&mut self.out);
        patch_transport(&mut self.out, at);
        // SESSION_SETUP is never signed by a 2.x client; signing starts after it.
        if let (Some(signer), false) = (&self.signer, command == command::SESSION_SETUP) {
            signer.sign(&mut self.out[at + TRANSPORT_LEN..]);
        }
        self.next_message_id += u64::from(cost);
        self.credits = self.credits.saturating_sub(cost);
        self.outstanding = Some(Outstanding { message_id, command });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::{Header, HEADER_LEN};

    fn last_header(tx: &Outbound) -> Header {
        Header::parse(&tx.output()[TRANSPORT_LEN..]).unwrap()
    }

    #[test]
    fn message_ids_and_credits_follow_the_charge() {
        let mut tx = Outbound::new();
        tx.send(command::NEGOTIATE, 0, |_| {});
        assert_eq!(tx.credits(), 0);
        assert_eq!(tx.outstanding(), Some(Outstanding { message_id: 0, command: command::NEGOTIATE }));
        let h = last_header(&tx);
        assert_eq!((h.message_id, h.credit_charge, h.credits), (0, 0, 64));
        tx.complete();
        tx.grant(10);
        tx.negotiated(0x0210, true, 1 << 20, 1 << 20, 1 << 20);
        tx.consume(tx.output().len());
        assert!(tx.output().is_empty());

        tx.send(command::WRITE, 3 * 65536 + 1, |_| {});
        let h = last_header(&tx);
        assert_eq!((h.message_id, h.credit_charge, h.credits), (1, 4, 64));
        assert_eq!(tx.credits(), 6);
        tx.complete();
        tx.send(command::READ, 65536, |_| {});
        assert_eq!(tx.outstanding().unwrap().message_id, 5);
        assert_eq!(tx.credits(), 5);
    }

    #[test]
    fn io_limit_respects_server_limit_credits_and_dialect() {
        let mut tx = Outbound::new();
        tx.negotiated(0x0202, false, 1 << 20, 1 << 20, 1 << 20);
        assert_eq!(tx.io_limit(false), 65536);
        tx.negotiated(0x0210, true, 1 << 20, 300_000, 1 << 20);
        tx.grant(1);
        assert_eq!(tx.credits(), 2);
        assert_eq!(tx.io_limit(false), 2 * 65536);
        tx.grant(100);
        assert_eq!((tx.io_limit(false), tx.io_limit(true)), (1 << 20, 300_000));
    }

    #[test]
    fn partial_consumption_keeps_the_rest() {
        let mut tx = Outbound::new();
        tx.send(command::NEGOTIATE, 0, |o| o.extend_from_slice(&[1, 2, 3]));
        let len = tx.output().len();
        assert_eq!(len, TRANSPORT_LEN + HEADER_LEN + 3);
        assert_eq!(tx.output()[..4], [0, 0, 0, 67]);
        tx.consume(10);
        assert_eq!(tx.output().len(), len - 10);
        assert_eq!(tx.output()[tx.output().len() - 3..], [1, 2, 3]);
        tx.consume(len - 10);
        assert!(tx.output().is_empty());
    }

    #[test]
    fn requests_after_session_setup_are_signed_when_enabled() {
        let mut tx = Outbound::new();
        tx.enable_signing(&[1; 16]);
        tx.send(command::SESSION_SETUP, 0, |_| {});
        assert_eq!(last_header(&tx).flags & 8, 0);
        tx.consume(tx.output().len());
        tx.complete();
        tx.grant(1);
        tx.send(command::TREE_CONNECT, 0, |o| o.push(0));
        let msg = tx.output()[TRANSPORT_LEN..].to_vec();
        assert_eq!(last_header(&tx).flags & 8, 8);
        assert_eq!(msg[48..64], Signer::new(&[1; 16]).signature(&msg));
    }
}
