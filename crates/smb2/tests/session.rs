//! The session on hand-made bytes: what it sends first, field by field, and
//! how it treats replies a live Samba rarely produces on demand (interim
//! STATUS_PENDING replies, oplock breaks, wrong MessageIds, no credits).
//! Replies are built byte by byte from [MS-SMB2] here, not with the crate's
//! own encoder, on top of the captured handshake in tests/data.

use crate::support::credentials;
use crest_smb2::{status, Done, Event, FileId, ProtocolError, Session};

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

#[test]
fn negotiate_is_queued_at_once() {
    let s = Session::new("server", "share", credentials("u", "p"));
    let out = s.output();
    assert_eq!(out[..4], [0, 0, 0, (64 + 36 + 4) as u8], "transport header: 24-bit big-endian length");
    let m = &out[4..];
    assert_eq!(&m[..4], b"\xFESMB");
    assert_eq!(u16_at(m, 4), 64);
    assert_eq!(u16_at(m, 6), 0, "CreditCharge 0 before a dialect is chosen");
    assert_eq!(u16_at(m, 12), 0, "NEGOTIATE");
    assert_eq!(u16_at(m, 14), 64, "credits asked for");
    assert_eq!(u32_at(m, 16), 0, "flags");
    assert_eq!(u64_at(m, 24), 0, "MessageId");
    assert_eq!((u32_at(m, 36), u64_at(m, 40)), (0, 0), "TreeId, SessionId");
    let b = &m[64..];
    assert_eq!((u16_at(b, 0), u16_at(b, 2), u16_at(b, 4)), (36, 2, 1), "size, 2 dialects, signing enabled");
    assert_eq!(u32_at(b, 8), 4, "large MTU");
    assert_ne!(b[12..28], [0; 16], "a client GUID");
    assert_eq!((u16_at(b, 36), u16_at(b, 38)), (0x0202, 0x0210));
    assert!(!s.is_ready());
}

/// A session connected with the captured handshake, and its output drained.
fn connected() -> Session {
    let mut s = Session::new("127.0.0.1", "share", credentials("root", "any"));
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ops-00-connect.bin");
    s.receive(&std::fs::read(path).unwrap()).unwrap();
    assert_eq!(s.poll_event(), Some(Event::Connected));
    s.consume_output(s.output().len());
    s
}

/// The MessageId of the request just queued (the last one in the output).
fn queued_message_id(s: &Session) -> u64 {
    u64_at(&s.output()[4..], 24)
}

/// A reply frame: transport header, header, `body`.
fn reply(command: u16, status: u32, flags: u32, message_id: u64, credits: u16, body: &[u8]) -> Vec<u8> {
    let mut m = b"\xFESMB".to_vec();
    m.extend_from_slice(&64u16.to_le_bytes());
    m.extend_from_slice(&1u16.to_le_bytes()); // CreditCharge
    m.extend_from_slice(&status.to_le_bytes());
    m.extend_from_slice(&command.to_le_bytes());
    m.extend_from_slice(&credits.to_le_bytes());
    m.extend_from_slice(&(flags | 1).to_le_bytes()); // SERVER_TO_REDIR
    m.extend_from_slice(&0u32.to_le_bytes()); // NextCommand
    m.extend_from_slice(&message_id.to_le_bytes());
    m.extend_from_slice(&[0; 8]); // Reserved + TreeId, or AsyncId
    m.extend_from_slice(&[0; 8]); // SessionId
    m.extend_from_slice(&[0; 16]); // Signature
    m.extend_from_slice(body);
    let mut f = (m.len() as u32).to_be_bytes().to_vec();
    f.extend_from_slice(&m);
    f
}

const CLOSE: u16 = 6;
const ASYNC: u32 = 2;
/// An error reply body ([MS-SMB2] 2.2.2).
const ERROR_BODY: [u8; 9] = [9, 0, 0, 0, 0, 0, 0, 0, 0];

fn close_body() -> Vec<u8> {
    let mut b = vec![0u8; 60];
    b[0] = 60;
    b
}

#[test]
fn interim_pending_replies_are_skipped() {
    let mut s = connected();
    s.close(FileId([7; 16]));
    let id = queued_message_id(&s);
    s.receive(&reply(CLOSE, status::PENDING, ASYNC, id, 1, &ERROR_BODY)).unwrap();
    assert_eq!(s.poll_event(), None);
    assert!(!s.is_ready());
    s.receive(&reply(CLOSE, status::OK, ASYNC, id, 1, &close_body())).unwrap();
    assert_eq!(s.poll_event(), Some(Event::Done(Done { status: 0, fid: None, bytes: 0, entries: 0 })));
    assert!(s.is_ready());
}

#[test]
fn oplock_breaks_are_ignored() {
    let mut s = connected();
    s.close(FileId([7; 16]));
    let id = queued_message_id(&s);
    let mut brk = reply(0x12, 0, 0, u64::MAX, 0, &[24, 0, 1, 0, 0, 0, 0, 0]);
    brk.extend(reply(CLOSE, status::FILE_CLOSED, 0, id, 1, &ERROR_BODY));
    s.receive(&brk).unwrap();
    assert_eq!(
        s.poll_event(),
        Some(Event::Done(Done { status: status::FILE_CLOSED, fid: None, bytes: 0, entries: 0 }))
    );
}

#[test]
fn a_reply_to_nothing_outstanding_is_a_protocol_error() {
    let mut s = connected();
    s.close(FileId([7; 16]));
    let id = queued_message_id(&s);
    let got = s.receive(&reply(CLOSE, 0, 0, id + 5, 1, &close_body()));
    assert_eq!(got, Err(ProtocolError::UnexpectedReply { got: id + 5, expected: Some(id) }));
    assert!(!s.is_ready());
    // A dead session ignores whatever else arrives.
    assert_eq!(s.receive(&reply(CLOSE, 0, 0, id, 1, &close_body())), Ok(()));
    assert_eq!(s.poll_event(), None);
}

#[test]
fn a_reply_for_another_command_is_a_protocol_error() {
    let mut s = connected();
    s.close(FileId([7; 16]));
    let id = queued_message_id(&s);
    let got = s.receive(&reply(8, 0, 0, id, 1, &close_body()));
    assert_eq!(got, Err(ProtocolError::CommandMismatch { got: 8, expected: CLOSE }));
}

#[test]
fn running_out_of_credits_is_a_protocol_error() {
    // The captured handshake leaves some credits; spend them with replies
    // that grant none, until a request would have none to use.
    let mut s = connected();
    for _ in 0..10_000 {
        s.close(FileId([7; 16]));
        let id = queued_message_id(&s);
        s.consume_output(s.output().len());
        match s.receive(&reply(CLOSE, 0, 0, id, 0, &close_body())) {
            Ok(()) => assert!(matches!(s.poll_event(), Some(Event::Done(_)))),
            Err(e) => {
                assert_eq!(e, ProtocolError::NoCredits);
                return;
            }
        }
    }
    panic!("credits never ran out");
}

#[test]
#[should_panic(expected = "not ready")]
fn starting_an_operation_before_connecting_is_a_bug() {
    let mut s = Session::new("h", "s", credentials("u", "p"));
    s.mkdir("x");
}

#[test]
fn a_non_smb2_frame_is_a_protocol_error() {
    let mut s = Session::new("h", "s", credentials("u", "p"));
    assert_eq!(s.receive(&[0, 0, 0, 4, 0xFF, b'S', b'M', b'B']), Err(ProtocolError::NotSmb2));
    let mut s = Session::new("h", "s", credentials("u", "p"));
    assert_eq!(s.receive(b"HTTP/1.1 400"), Err(ProtocolError::Framing(b'H')));
}
