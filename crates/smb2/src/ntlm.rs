//! NTLMSSP with NTLMv2 ([MS-NLMP]), as raw tokens in SESSION_SETUP: the
//! NEGOTIATE_MESSAGE, parsing the CHALLENGE_MESSAGE, and the
//! AUTHENTICATE_MESSAGE with its NTLMv2 response and session base key.
//!
//! Owns message layouts and the NTLMv2 arithmetic. Time and the client
//! challenge come in as arguments (see [`crate::ambient`]). Not implemented:
//! key exchange (NEGOTIATE_KEY_EXCH, which needs RC4) and the MIC, which
//! neither Samba nor Windows requires of a client that does not send
//! MsvAvFlags; so the exported session key is the session base key.

use crate::error::ProtocolError;
use crate::path::put_utf16;
use crate::wire::{put, Fields};
use hmac::{Hmac, Mac};
use md4::{Digest, Md4};
use md5::Md5;

type HmacMd5 = Hmac<Md5>;

const SIGNATURE: &[u8; 8] = b"NTLMSSP\0";

/// NegotiateFlags bits ([MS-NLMP] 2.2.2.5).
const NEGOTIATE_UNICODE: u32 = 0x0000_0001;
const REQUEST_TARGET: u32 = 0x0000_0004;
const NEGOTIATE_SIGN: u32 = 0x0000_0010;
const NEGOTIATE_NTLM: u32 = 0x0000_0200;
const NEGOTIATE_ALWAYS_SIGN: u32 = 0x0000_8000;
const NEGOTIATE_EXTENDED_SESSIONSECURITY: u32 = 0x0008_0000;
const NEGOTIATE_TARGET_INFO: u32 = 0x0080_0000;
const NEGOTIATE_VERSION: u32 = 0x0200_0000;
const NEGOTIATE_128: u32 = 0x2000_0000;
const NEGOTIATE_56: u32 = 0x8000_0000;

/// What this client asks for: Unicode, NTLM with extended session security,
/// signing-capable keys; no key exchange (see the module comment).
pub(crate) const CLIENT_FLAGS: u32 = NEGOTIATE_UNICODE
    | REQUEST_TARGET
    | NEGOTIATE_SIGN
    | NEGOTIATE_NTLM
    | NEGOTIATE_ALWAYS_SIGN
    | NEGOTIATE_EXTENDED_SESSIONSECURITY
    | NEGOTIATE_TARGET_INFO
    | NEGOTIATE_VERSION
    | NEGOTIATE_128
    | NEGOTIATE_56;

/// The VERSION field ([MS-NLMP] 2.2.2.10): Windows 7's 6.1.7600, NTLM
/// revision 15. Only informative; servers do not act on it.
const VERSION: [u8; 8] = [6, 1, 0xB0, 0x1D, 0, 0, 0, 15];

/// MsvAvTimestamp and MsvAvEOL AV_PAIR ids ([MS-NLMP] 2.2.2.1).
const AV_EOL: u16 = 0;
const AV_TIMESTAMP: u16 = 7;

/// Appends the NEGOTIATE_MESSAGE ([MS-NLMP] 2.2.1.1): no domain or
/// workstation supplied, so both fields are empty and point at the payload.
pub(crate) fn negotiate_message(out: &mut Vec<u8>) {
    const PAYLOAD_AT: u32 = 40;
    out.extend_from_slice(SIGNATURE);
    put!(out, 1u32, CLIENT_FLAGS, 0u16, 0u16, PAYLOAD_AT, 0u16, 0u16, PAYLOAD_AT);
    out.extend_from_slice(&VERSION);
}

/// The parts of a CHALLENGE_MESSAGE ([MS-NLMP] 2.2.1.2) the client uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Challenge<'a> {
    pub flags: u32,
    pub server_challenge: [u8; 8],
    pub target_info: &'a [u8],
}

pub(crate) fn parse_challenge(token: &[u8]) -> Result<Challenge<'_>, ProtocolError> {
    let f = Fields::new(token, "NTLMSSP CHALLENGE");
    let bad = ProtocolError::Challenge;
    if f.slice(0, 8).map_err(|_| bad("shorter than its header"))? != SIGNATURE {
        return Err(bad("no NTLMSSP signature (a SPNEGO-wrapped token?)"));
    }
    if f.u32(8)? != 2 {
        return Err(bad("message type is not 2 (CHALLENGE)"));
    }
    let flags = f.u32(20)?;
    let server_challenge = f.array(24)?;
    let target_info = if flags & NEGOTIATE_TARGET_INFO != 0 {
        f.slice(f.u32(44)? as usize, f.u16(40)? as usize).map_err(|_| bad("TargetInfo points outside the token"))?
    } else {
        &[]
    };
    Ok(Challenge { flags, server_challenge, target_info })
}

/// The server's MsvAvTimestamp, if its TargetInfo has one.
pub(crate) fn av_timestamp(target_info: &[u8]) -> Option<u64> {
    let f = Fields::new(target_info, "AV_PAIR");
    let mut at = 0;
    loop {
        let (id, len) = (f.u16(at).ok()?, f.u16(at + 2).ok()? as usize);
        match id {
            AV_EOL => return None,
            AV_TIMESTAMP if len == 8 => return f.u64(at + 4).ok(),
            _ => at += 4 + len,
        }
    }
}

fn utf16(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() * 2);
    put_utf16(&mut out, s);
    out
}

fn hmac_md5(key: &[u8], parts: &[&[u8]]) -> [u8; 16] {
    let mut mac = HmacMd5::new_from_slice(key).expect("invariant: HMAC takes a key of any length");
    for p in parts {
        mac.update(p);
    }
    mac.finalize().into_bytes().into()
}

/// NTOWFv2 ([MS-NLMP] 3.3.2): HMAC-MD5 keyed with the NT hash
/// (MD4 of the UTF-16LE password) over UTF-16LE(UPPER(user) + domain).
pub(crate) fn ntowf_v2(password: &str, user: &str, domain: &str) -> [u8; 16] {
    let nt_hash: [u8; 16] = Md4::digest(utf16(password)).into();
    hmac_md5(&nt_hash, &[&utf16(&user.to_uppercase()), &utf16(domain)])
}

/// The NTLMv2 responses and key for one challenge ([MS-NLMP] 3.3.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ntlmv2 {
    /// NTProofStr followed by the client blob ("temp").
    pub nt_response: Vec<u8>,
    /// LMv2: HMAC-MD5 over both challenges, then the client challenge.
    pub lm_response: [u8; 24],
    pub session_base_key: [u8; 16],
}

pub(crate) fn ntlmv2(
    response_key: &[u8; 16],
    server_challenge: &[u8; 8],
    client_challenge: &[u8; 8],
    time: u64,
    target_info: &[u8],
) -> Ntlmv2 {
    // temp = RespType 1, HiRespType 1, Z(6), time, client challenge, Z(4),
    // the server's AV pairs, Z(4).
    let mut temp = Vec::with_capacity(32 + target_info.len());
    temp.extend_from_slice(&[1, 1, 0, 0, 0, 0, 0, 0]);
    put!(temp, time);
    temp.extend_from_slice(client_challenge);
    temp.extend_from_slice(&[0; 4]);
    temp.extend_from_slice(target_info);
    temp.extend_from_slice(&[0; 4]);
    let nt_proof = hmac_md5(response_key, &[server_challenge, &temp]);
    let mut nt_response = nt_proof.to_vec();
    nt_response.extend_from_slice(&temp);
    let mut lm_response = [0; 24];
    lm_response[..16].copy_from_slice(&hmac_md5(response_key, &[server_challenge, client_challenge]));
    lm_response[16..].copy_from_slice(client_challenge);
    Ntlmv2 { nt_response, lm_response, session_base_key: hmac_md5(response_key, &[&nt_proof]) }
}

/// Who is logging on.
pub(crate) struct Identity<'a> {
    pub user: &'a str,
    pub password: &'a str,
    pub domain: &'a str,
}

/// Appends the AUTHENTICATE_MESSAGE ([MS-NLMP] 2.2.1.3) answering
/// `challenge`; returns the session key (the session base key: no key
/// exchange). `now` is used only when the server sent no MsvAvTimestamp.
pub(crate) fn authenticate_message(
    out: &mut Vec<u8>,
    who: &Identity<'_>,
    challenge: &Challenge<'_>,
    client_challenge: [u8; 8],
    now: u64,
) -> [u8; 16] {
    let server_time = av_timestamp(challenge.target_info);
    let key = ntowf_v2(who.password, who.user, who.domain);
    let r =
        ntlmv2(&key, &challenge.server_challenge, &client_challenge, server_time.unwrap_or(now), challenge.target_info);
    // With a server timestamp the LM response carries nothing the NT one
    // does not; [MS-NLMP] 3.3.2 has the client send zeros then.
    let lm: &[u8] = if server_time.is_some() { &[0; 24] } else { &r.lm_response };
    let (domain, user) = (utf16(who.domain), utf16(who.user));
    let fields: [&[u8]; 5] = [lm, &r.nt_response, &domain, &user, &[]];

    const PAYLOAD_AT: usize = 72;
    let start = out.len();
    out.extend_from_slice(SIGNATURE);
    put!(out, 3u32);
    // The payload holds the values in the order their fields have in the
    // header (LM, NT, domain, user, workstation), so one walk fills both.
    let mut at = PAYLOAD_AT;
    for value in fields {
        put!(out, value.len() as u16, value.len() as u16, at as u32);
        at += value.len();
    }
    put!(out, 0u16, 0u16, at as u32); // EncryptedRandomSessionKey: none
    put!(out, CLIENT_FLAGS & challenge.flags);
    out.extend_from_slice(&VERSION);
    debug_assert_eq!(out.len() - start, PAYLOAD_AT);
    for value in fields {
        out.extend_from_slice(value);
    }
    r.session_base_key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    /// The CHALLENGE_MESSAGE of [MS-NLMP] 4.2.4 (flags 0xe28a8233, server
    /// challenge 0123456789abcdef, AV pairs Domain and Server).
    fn spec_challenge() -> Vec<u8> {
        hex("4e544c4d53535000 02000000 0c000c00 38000000 33828ae2 0123456789abcdef 0000000000000000
             24002400 44000000 060070170000000f 530065007200760065007200
             02000c0044006f006d00610069006e00 01000c00530065007200760065007200 00000000")
    }

    /// MS-NLMP 4.2.4.1.1: NTOWFv2("Password", "User", "Domain").
    #[test]
    fn ntowf_v2_matches_the_spec() {
        assert_eq!(ntowf_v2("Password", "User", "Domain").to_vec(), hex("0c868a403bfd7a93a3001ef22ef02e3f"));
    }

    /// MS-NLMP 4.2.4.2: the LMv2 and NTLMv2 responses and the session base
    /// key for time 0 and client challenge aa..aa.
    #[test]
    fn ntlmv2_matches_the_spec() {
        let token = spec_challenge();
        let c = parse_challenge(&token).unwrap();
        assert_eq!(c.flags, 0xe28a_8233);
        assert_eq!(c.server_challenge.to_vec(), hex("0123456789abcdef"));
        assert_eq!(c.target_info.len(), 36);
        assert_eq!(av_timestamp(c.target_info), None);
        let key = ntowf_v2("Password", "User", "Domain");
        let r = ntlmv2(&key, &c.server_challenge, &[0xaa; 8], 0, c.target_info);
        assert_eq!(r.lm_response.to_vec(), hex("86c35097ac9cec102554764a57cccc19 aaaaaaaaaaaaaaaa"));
        let mut want_nt =
            hex("68cd0ab851e51c96aabc927bebef6a1c 0101000000000000 0000000000000000 aaaaaaaaaaaaaaaa 00000000");
        want_nt.extend_from_slice(c.target_info);
        want_nt.extend_from_slice(&[0; 4]);
        assert_eq!(r.nt_response, want_nt);
        assert_eq!(r.session_base_key.to_vec(), hex("8de40ccadbc14a82f15cb0ad0de95ca3"));
    }

    #[test]
    fn negotiate_message_fields() {
        let mut m = Vec::new();
        negotiate_message(&mut m);
        assert_eq!(m.len(), 40);
        assert_eq!(&m[..8], b"NTLMSSP\0");
        assert_eq!(m[8..12], 1u32.to_le_bytes());
        assert_eq!(m[12..16], CLIENT_FLAGS.to_le_bytes());
        assert_eq!(m[16..24], [0, 0, 0, 0, 40, 0, 0, 0]); // domain: empty
        assert_eq!(m[24..32], [0, 0, 0, 0, 40, 0, 0, 0]); // workstation: empty
        assert_eq!(m[32..40], VERSION);
    }

    /// The AUTHENTICATE_MESSAGE for the spec's inputs: each field points at
    /// the spec's value.
    #[test]
    fn authenticate_message_fields() {
        let token = spec_challenge();
        let c = parse_challenge(&token).unwrap();
        let mut m = Vec::new();
        let who = Identity { user: "User", password: "Password", domain: "Domain" };
        let key = authenticate_message(&mut m, &who, &c, [0xaa; 8], 0);
        assert_eq!(key.to_vec(), hex("8de40ccadbc14a82f15cb0ad0de95ca3"));
        assert_eq!(&m[..8], b"NTLMSSP\0");
        assert_eq!(m[8..12], 3u32.to_le_bytes());
        let field = |at: usize| {
            let len = u16::from_le_bytes([m[at], m[at + 1]]) as usize;
            let off = u32::from_le_bytes(m[at + 4..at + 8].try_into().unwrap()) as usize;
            assert_eq!(m[at + 2..at + 4], m[at..at + 2], "MaxLen == Len");
            m[off..off + len].to_vec()
        };
        assert_eq!(field(12), hex("86c35097ac9cec102554764a57cccc19 aaaaaaaaaaaaaaaa"));
        assert_eq!(field(20)[..16].to_vec(), hex("68cd0ab851e51c96aabc927bebef6a1c"));
        assert_eq!(field(28), utf16("Domain"));
        assert_eq!(field(36), utf16("User"));
        assert_eq!(field(44), b"");
        assert_eq!(field(52), b"");
        assert_eq!(m[60..64], (CLIENT_FLAGS & 0xe28a_8233).to_le_bytes());
        assert_eq!(m[64..72], VERSION);
    }

    #[test]
    fn server_timestamp_is_used_and_lm_is_zero() {
        let mut info = Vec::new();
        put!(info, 7u16, 8u16, 0x01d0_0000_0000_0001u64, 0u16, 0u16);
        assert_eq!(av_timestamp(&info), Some(0x01d0_0000_0000_0001));
        let c = Challenge { flags: CLIENT_FLAGS, server_challenge: [1; 8], target_info: &info };
        let mut m = Vec::new();
        let who = Identity { user: "u", password: "p", domain: "" };
        authenticate_message(&mut m, &who, &c, [2; 8], 99);
        let off = u32::from_le_bytes(m[16..20].try_into().unwrap()) as usize;
        assert_eq!(m[off..off + 24], [0; 24]);
        let nt_off = u32::from_le_bytes(m[24..28].try_into().unwrap()) as usize;
        assert_eq!(m[nt_off + 24..nt_off + 32], 0x01d0_0000_0000_0001u64.to_le_bytes());
    }

    #[test]
    fn malformed_challenges_are_rejected() {
        assert!(parse_challenge(b"NTLMSSP\0").is_err());
        assert!(parse_challenge(b"\xa1\x81\xb6\x30\x81\xb3\xa0\x03\x0a\x01\x01").is_err());
        let mut t = spec_challenge();
        t[8] = 3;
        assert!(parse_challenge(&t).is_err());
        let mut t = spec_challenge();
        t[44] = 0xF0; // TargetInfo offset past the end
        assert!(parse_challenge(&t).is_err());
    }
}
