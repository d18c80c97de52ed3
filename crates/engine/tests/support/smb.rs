//! A scripted SMB2 server for engine tests, on the raw TCP fixture, with no
//! Samba: it answers a session's setup with the replies crates/smb2 captured
//! from Samba (its tests/data, which its replay tests feed to sessions the
//! same way) and every later request as the test's script says, each reply's
//! MessageId set to its request's. A reply can be trickled a byte at a time.
#![allow(dead_code)]

use super::Conn;

/// SMB2 command codes (MS-SMB2 2.2.1).
pub const NEGOTIATE: u16 = 0x0;
pub const SESSION_SETUP: u16 = 0x1;
pub const TREE_CONNECT: u16 = 0x3;
pub const CREATE: u16 = 0x5;
pub const READ: u16 = 0x8;

/// How the server answers a request.
pub enum Answer {
    /// The reply, whole.
    Reply(Vec<u8>),
    /// The reply a byte every `TRICKLE_EVERY`, until the client goes: nothing more is answered.
    Trickle(Vec<u8>),
}

/// The messages of the captured step `name` (crates/smb2/tests/data/NAME.bin), without their transport headers.
pub fn captured(name: &str) -> Vec<Vec<u8>> {
    let path = format!("{}/../smb2/tests/data/{name}.bin", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut messages = Vec::new();
    let mut rest = &bytes[..];
    while rest.len() >= 4 {
        let len = u32::from_be_bytes([0, rest[1], rest[2], rest[3]]) as usize;
        messages.push(rest[4..4 + len].to_vec());
        rest = &rest[4 + len..];
    }
    messages
}

/// A handler: the session's setup answered as Samba answered it (NEGOTIATE,
/// two SESSION_SETUPs, TREE_CONNECT), unless `script` answers a request
/// first; a request neither answers is left unanswered.
pub fn serve(script: fn(command: u16) -> Option<Answer>) -> impl Fn(Conn) + Send + Sync + 'static {
    move |mut conn: Conn| {
        let setup = captured("ops-00-connect");
        let mut setups = 0;
        while let Some(request) = read_message(&mut conn) {
            let command = u16::from_le_bytes([request[12], request[13]]);
            let answer = script(command).or_else(|| {
                let reply = match command {
                    NEGOTIATE => &setup[0],
                    SESSION_SETUP => {
                        setups += 1;
                        &setup[setups.min(2)]
                    }
                    TREE_CONNECT => &setup[3],
                    _ => return None,
                };
                Some(Answer::Reply(reply.clone()))
            });
            let sent = match answer {
                Some(Answer::Reply(reply)) => conn.send(&framed(&reply, &request)),
                Some(Answer::Trickle(reply)) => return conn.trickle(framed(&reply, &request)),
                None => true,
            };
            if !sent {
                return;
            }
        }
    }
}

/// `reply` with `request`'s MessageId, behind its transport header (a zero byte, the length in 24 bits).
fn framed(reply: &[u8], request: &[u8]) -> Vec<u8> {
    let mut out = (reply.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(reply);
    out[4 + 24..4 + 32].copy_from_slice(&request[24..32]);
    out
}

/// The next request (one transport frame, without its header); None when the client went.
fn read_message(conn: &mut Conn) -> Option<Vec<u8>> {
    let head = conn.read_exact(4)?;
    conn.read_exact(u32::from_be_bytes([0, head[1], head[2], head[3]]) as usize)
}
