//! Request bodies ([MS-SMB2] 2.2.3 to 2.2.39), each appended to the output
//! buffer right after its header.
//!
//! Owns body layouts only: fixed fields, buffer offsets (counted from the
//! SMB2 header, whose 64 bytes come just before the body) and variable parts.
//! Names are encoded straight into the buffer and WRITE data is generated
//! into it, so nothing here allocates once the buffer has grown. Headers,
//! numbering and signing belong to [`crate::outbound`].

use crate::header::HEADER_LEN;
use crate::path;
use crate::wire::{patch_u16, patch_u32, put, zeros};
use crate::FileId;

/// Lock element flags ([MS-SMB2] 2.2.26.1).
pub(crate) const LOCK_EXCLUSIVE: u32 = 0x2;
pub(crate) const LOCK_UNLOCK: u32 = 0x4;
pub(crate) const LOCK_FAIL_IMMEDIATELY: u32 = 0x10;

/// QUERY_DIRECTORY flag: start the enumeration from the beginning.
pub(crate) const RESTART_SCANS: u8 = 0x1;

/// NEGOTIATE SecurityMode: signing enabled (but not required).
pub(crate) const SIGNING_ENABLED: u16 = 0x1;
/// NEGOTIATE SecurityMode bit a server sets when it requires signing.
pub(crate) const SIGNING_REQUIRED: u16 = 0x2;
/// Global capability: multi-credit requests (SMB 2.1 large MTU).
pub(crate) const CAP_LARGE_MTU: u32 = 0x4;

/// The WRITE payload's repeating pattern: byte `i` of a file is `i % 251`, so
/// a test can check any range on disk, and 251 being prime keeps the pattern
/// from lining up with block sizes.
const PATTERN_PERIOD: usize = 251;
const PATTERN: [u8; PATTERN_PERIOD] = {
    let mut p = [0u8; PATTERN_PERIOD];
    let mut i = 0;
    while i < PATTERN_PERIOD {
        p[i] = i as u8;
        i += 1;
    }
    p
};

/// The byte the WRITE pattern puts at file offset `at`.
pub fn pattern_byte(at: u64) -> u8 {
    (at % PATTERN_PERIOD as u64) as u8
}

/// The fields of a CREATE request a caller chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CreateParams {
    pub desired_access: u32,
    pub file_attributes: u32,
    pub share_access: u32,
    pub disposition: u32,
    pub options: u32,
}

/// Offset from the header of a body's variable part starting at body byte `at`.
fn offset(at: usize) -> u16 {
    (HEADER_LEN + at) as u16
}

/// NEGOTIATE (2.2.3), for 2.x dialects: no negotiate contexts, ClientStartTime 0.
pub(crate) fn negotiate(out: &mut Vec<u8>, dialects: &[u16], capabilities: u32, client_guid: [u8; 16]) {
    put!(out, 36u16, dialects.len() as u16, SIGNING_ENABLED, 0u16, capabilities);
    out.extend_from_slice(&client_guid);
    put!(out, 0u64);
    for &d in dialects {
        put!(out, d);
    }
}

/// SESSION_SETUP (2.2.5) carrying one security token (raw NTLMSSP here).
pub(crate) fn session_setup(out: &mut Vec<u8>, token: &[u8]) {
    put!(
        out,
        25u16,
        0u8, /* Flags */
        SIGNING_ENABLED as u8,
        0u32, /* Capabilities */
        0u32  /* Channel */
    );
    put!(out, offset(24), token.len() as u16, 0u64 /* PreviousSessionId */);
    out.extend_from_slice(token);
}

/// LOGOFF (2.2.7) and TREE_DISCONNECT (2.2.11) share this 4-byte body.
pub(crate) fn empty(out: &mut Vec<u8>) {
    put!(out, 4u16, 0u16);
}

/// TREE_CONNECT (2.2.9) to `\\host\share`.
pub(crate) fn tree_connect(out: &mut Vec<u8>, host: &str, share: &str) {
    let start = out.len();
    put!(out, 9u16, 0u16, offset(8), 0u16);
    let mut len = path::put_utf16(out, "\\\\");
    len += path::put_utf16(out, host);
    len += path::put_utf16(out, "\\");
    len += path::put_utf16(out, share);
    patch_u16(out, start + 6, len as u16);
}

/// CREATE (2.2.13) of a share-relative path, no oplock, no create contexts.
pub(crate) fn create(out: &mut Vec<u8>, name: &str, p: &CreateParams) {
    let start = out.len();
    put!(out, 57u16, 0u8 /* SecurityFlags */, 0u8 /* RequestedOplockLevel: none */);
    put!(out, 2u32 /* ImpersonationLevel: Impersonation */, 0u64 /* SmbCreateFlags */, 0u64);
    put!(out, p.desired_access, p.file_attributes, p.share_access, p.disposition, p.options);
    put!(out, offset(56), 0u16 /* NameLength, patched */, 0u32, 0u32 /* no create contexts */);
    let len = path::put_path(out, name);
    patch_u16(out, start + 46, len as u16);
    // The body's variable part must hold at least one byte, even for the
    // share root's empty name.
    if len == 0 {
        zeros(out, 1);
    }
}

/// CLOSE (2.2.15) without post-query attributes.
pub(crate) fn close(out: &mut Vec<u8>, fid: FileId) {
    put!(out, 24u16, 0u16, 0u32);
    out.extend_from_slice(&fid.0);
}

/// FLUSH (2.2.17).
pub(crate) fn flush(out: &mut Vec<u8>, fid: FileId) {
    put!(out, 24u16, 0u16, 0u32);
    out.extend_from_slice(&fid.0);
}

/// READ (2.2.19): `length` bytes at `offset`, no minimum, no channel.
pub(crate) fn read(out: &mut Vec<u8>, fid: FileId, offset_in_file: u64, length: u32) {
    // Padding 0x50: where the server should put the data (right after its
    // 16-byte fixed reply body).
    put!(out, 49u16, 0x50u8, 0u8, length, offset_in_file);
    out.extend_from_slice(&fid.0);
    put!(out, 0u32 /* MinimumCount */, 0u32 /* Channel */, 0u32 /* RemainingBytes */, 0u16, 0u16, 0u8);
}

/// WRITE (2.2.21) of `length` pattern bytes at `offset_in_file`.
pub(crate) fn write(out: &mut Vec<u8>, fid: FileId, offset_in_file: u64, length: u32) {
    put!(out, 49u16, offset(48), length, offset_in_file);
    out.extend_from_slice(&fid.0);
    put!(out, 0u32 /* Channel */, 0u32 /* RemainingBytes */, 0u16, 0u16, 0u32 /* Flags */);
    put_pattern(out, offset_in_file, length as usize);
}

/// Appends the WRITE pattern for file bytes `[at, at + len)`.
fn put_pattern(out: &mut Vec<u8>, at: u64, len: usize) {
    out.reserve(len);
    let mut phase = (at % PATTERN_PERIOD as u64) as usize;
    let mut left = len;
    while left > 0 {
        let n = left.min(PATTERN_PERIOD - phase);
        out.extend_from_slice(&PATTERN[phase..phase + n]);
        left -= n;
        phase = 0;
    }
}

/// LOCK (2.2.26) with one element.
pub(crate) fn lock(out: &mut Vec<u8>, fid: FileId, offset_in_file: u64, length: u64, flags: u32) {
    put!(out, 48u16, 1u16 /* LockCount */, 0u32 /* LockSequence */);
    out.extend_from_slice(&fid.0);
    put!(out, offset_in_file, length, flags, 0u32);
}

/// QUERY_DIRECTORY (2.2.33) with `pattern` already in UTF-16LE.
pub(crate) fn query_directory(out: &mut Vec<u8>, fid: FileId, class: u8, flags: u8, pattern: &[u8], max_output: u32) {
    put!(out, 33u16, class, flags, 0u32 /* FileIndex */);
    out.extend_from_slice(&fid.0);
    put!(out, offset(32), pattern.len() as u16, max_output);
    out.extend_from_slice(pattern);
    if pattern.is_empty() {
        zeros(out, 1);
    }
}

/// QUERY_INFO (2.2.37) of a file or file-system class; no input buffer.
pub(crate) fn query_info(out: &mut Vec<u8>, info_type: u8, class: u8, fid: FileId, max_output: u32) {
    put!(out, 41u16, info_type, class, max_output, 0u16 /* InputBufferOffset */, 0u16, 0u32);
    put!(out, 0u32 /* AdditionalInformation */, 0u32 /* Flags */);
    out.extend_from_slice(&fid.0);
    zeros(out, 1);
}

/// SET_INFO (2.2.39); `value` appends the information buffer.
pub(crate) fn set_info(out: &mut Vec<u8>, info_type: u8, class: u8, fid: FileId, value: impl FnOnce(&mut Vec<u8>)) {
    let start = out.len();
    put!(out, 33u16, info_type, class, 0u32 /* BufferLength, patched */, offset(32), 0u16, 0u32);
    out.extend_from_slice(&fid.0);
    let value_start = out.len();
    value(out);
    let len = out.len() - value_start;
    patch_u32(out, start + 4, len as u32);
}

/// FileBasicInformation ([MS-FSCC] 2.4.7): 0 leaves a time or the
/// attributes unchanged.
pub(crate) fn basic_info(out: &mut Vec<u8>, creation: u64, access: u64, write: u64, change: u64) {
    put!(out, creation, access, write, change, 0u32 /* FileAttributes */, 0u32);
}

/// FileDispositionInformation ([MS-FSCC] 2.4.11): delete on last close.
pub(crate) fn disposition_info(out: &mut Vec<u8>) {
    out.push(1);
}

/// FileRenameInformation, SMB2 form ([MS-FSCC] 2.4.37.2): no replace,
/// RootDirectory 0, `name` (UTF-16LE) relative to the share root.
pub(crate) fn rename_info(out: &mut Vec<u8>, name: &[u8]) {
    put!(out, 0u8 /* ReplaceIfExists */);
    zeros(out, 7);
    put!(out, 0u64 /* RootDirectory */, name.len() as u32);
    out.extend_from_slice(name);
}

#[cfg(test)]
mod tests {
    use super::*;

    const FID: FileId = FileId([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);

    fn u16_at(b: &[u8], at: usize) -> u16 {
        u16::from_le_bytes([b[at], b[at + 1]])
    }
    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }
    fn u64_at(b: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
    }
    fn utf16(s: &str) -> Vec<u8> {
        s.encode_utf16().flat_map(u16::to_le_bytes).collect()
    }

    #[test]
    fn negotiate_body() {
        let mut b = Vec::new();
        negotiate(&mut b, &[0x0202, 0x0210], CAP_LARGE_MTU, [0xAB; 16]);
        assert_eq!(b.len(), 36 + 4);
        assert_eq!(u16_at(&b, 0), 36);
        assert_eq!(u16_at(&b, 2), 2); // DialectCount
        assert_eq!(u16_at(&b, 4), SIGNING_ENABLED);
        assert_eq!(u32_at(&b, 8), CAP_LARGE_MTU);
        assert_eq!(b[12..28], [0xAB; 16]);
        assert_eq!(u64_at(&b, 28), 0);
        assert_eq!((u16_at(&b, 36), u16_at(&b, 38)), (0x0202, 0x0210));
    }

    #[test]
    fn session_setup_body() {
        let mut b = Vec::new();
        session_setup(&mut b, b"NTLMSSP\0token");
        assert_eq!(u16_at(&b, 0), 25);
        assert_eq!(b[3], 1); // SecurityMode
        assert_eq!(u16_at(&b, 12), 64 + 24); // SecurityBufferOffset
        assert_eq!(u16_at(&b, 14), 13);
        assert_eq!(u64_at(&b, 16), 0);
        assert_eq!(&b[24..], b"NTLMSSP\0token");
    }

    #[test]
    fn tree_connect_and_empty_bodies() {
        let mut b = Vec::new();
        tree_connect(&mut b, "127.0.0.1", "share");
        assert_eq!(u16_at(&b, 0), 9);
        assert_eq!(u16_at(&b, 4), 72);
        assert_eq!(&b[8..], utf16("\\\\127.0.0.1\\share"));
        assert_eq!(u16_at(&b, 6) as usize, b.len() - 8);
        let mut e = Vec::new();
        empty(&mut e);
        assert_eq!(e, [4, 0, 0, 0]);
    }

    #[test]
    fn create_body() {
        let p = CreateParams {
            desired_access: 0x0012_019F,
            file_attributes: 0x80,
            share_access: 3,
            disposition: 5,
            options: 0x44,
        };
        let mut b = Vec::new();
        create(&mut b, "/dir/F.DOC", &p);
        assert_eq!(u16_at(&b, 0), 57);
        assert_eq!((b[2], b[3]), (0, 0)); // SecurityFlags, oplock none
        assert_eq!(u32_at(&b, 4), 2); // Impersonation
        assert_eq!(u32_at(&b, 24), 0x0012_019F);
        assert_eq!(u32_at(&b, 28), 0x80);
        assert_eq!(u32_at(&b, 32), 3);
        assert_eq!(u32_at(&b, 36), 5);
        assert_eq!(u32_at(&b, 40), 0x44);
        assert_eq!(u16_at(&b, 44), 120); // NameOffset
        assert_eq!(u16_at(&b, 46), 18); // NameLength
        assert_eq!((u32_at(&b, 48), u32_at(&b, 52)), (0, 0));
        assert_eq!(&b[56..], utf16("dir\\F.DOC"));
        let mut root = Vec::new();
        create(&mut root, "/", &p);
        assert_eq!((u16_at(&root, 46), root.len()), (0, 57));
    }

    #[test]
    fn handle_bodies() {
        let mut c = Vec::new();
        close(&mut c, FID);
        assert_eq!((u16_at(&c, 0), u16_at(&c, 2), c.len()), (24, 0, 24));
        assert_eq!(c[8..], FID.0);
        let mut f = Vec::new();
        flush(&mut f, FID);
        assert_eq!((u16_at(&f, 0), f.len()), (24, 24));
        assert_eq!(f[8..], FID.0);
    }

    #[test]
    fn read_body() {
        let mut b = Vec::new();
        read(&mut b, FID, 0x1_0000_0000, 65536);
        assert_eq!(b.len(), 49);
        assert_eq!(u16_at(&b, 0), 49);
        assert_eq!(b[2], 0x50);
        assert_eq!(u32_at(&b, 4), 65536);
        assert_eq!(u64_at(&b, 8), 0x1_0000_0000);
        assert_eq!(b[16..32], FID.0);
        assert_eq!(b[32..49], [0; 17]);
    }

    #[test]
    fn write_body_carries_the_pattern() {
        let mut b = Vec::new();
        write(&mut b, FID, 500, 600);
        assert_eq!(u16_at(&b, 0), 49);
        assert_eq!(u16_at(&b, 2), 112); // DataOffset
        assert_eq!(u32_at(&b, 4), 600);
        assert_eq!(u64_at(&b, 8), 500);
        assert_eq!(b[16..32], FID.0);
        assert_eq!(b[32..48], [0; 16]);
        assert_eq!(b.len(), 48 + 600);
        for (i, &byte) in b[48..].iter().enumerate() {
            assert_eq!(byte, ((500 + i) % 251) as u8);
            assert_eq!(byte, pattern_byte(500 + i as u64));
        }
    }

    #[test]
    fn lock_body() {
        let mut b = Vec::new();
        lock(&mut b, FID, 7, 9, LOCK_EXCLUSIVE | LOCK_FAIL_IMMEDIATELY);
        assert_eq!(b.len(), 48);
        assert_eq!((u16_at(&b, 0), u16_at(&b, 2), u32_at(&b, 4)), (48, 1, 0));
        assert_eq!(b[8..24], FID.0);
        assert_eq!((u64_at(&b, 24), u64_at(&b, 32), u32_at(&b, 40)), (7, 9, 0x12));
    }

    #[test]
    fn query_directory_body() {
        let pattern = utf16("*.DOC");
        let mut b = Vec::new();
        query_directory(&mut b, FID, 3, RESTART_SCANS, &pattern, 65536);
        assert_eq!((u16_at(&b, 0), b[2], b[3], u32_at(&b, 4)), (33, 3, 1, 0));
        assert_eq!(b[8..24], FID.0);
        assert_eq!((u16_at(&b, 24), u16_at(&b, 26), u32_at(&b, 28)), (96, 10, 65536));
        assert_eq!(b[32..], pattern);
    }

    #[test]
    fn query_info_body() {
        let mut b = Vec::new();
        query_info(&mut b, 2, 5, FID, 4096);
        assert_eq!(b.len(), 41);
        assert_eq!((u16_at(&b, 0), b[2], b[3], u32_at(&b, 4)), (41, 2, 5, 4096));
        assert_eq!((u16_at(&b, 8), u32_at(&b, 12), u32_at(&b, 16), u32_at(&b, 20)), (0, 0, 0, 0));
        assert_eq!(b[24..40], FID.0);
    }

    #[test]
    fn set_info_bodies() {
        let mut b = Vec::new();
        set_info(&mut b, 1, 4, FID, |o| basic_info(o, 0, 11, 22, 33));
        assert_eq!((u16_at(&b, 0), b[2], b[3], u32_at(&b, 4), u16_at(&b, 8)), (33, 1, 4, 40, 96));
        assert_eq!(b[16..32], FID.0);
        assert_eq!((u64_at(&b, 32), u64_at(&b, 40), u64_at(&b, 48), u64_at(&b, 56)), (0, 11, 22, 33));
        assert_eq!(u32_at(&b, 64), 0);

        let mut d = Vec::new();
        set_info(&mut d, 1, 13, FID, disposition_info);
        assert_eq!((u32_at(&d, 4), &d[32..]), (1, &[1u8][..]));

        let name = utf16("a\\new");
        let mut r = Vec::new();
        set_info(&mut r, 1, 10, FID, |o| rename_info(o, &name));
        assert_eq!(u32_at(&r, 4) as usize, 20 + name.len());
        assert_eq!(r[32..40], [0; 8]); // ReplaceIfExists + Reserved
        assert_eq!(u64_at(&r, 40), 0);
        assert_eq!(u32_at(&r, 48) as usize, name.len());
        assert_eq!(r[52..], name);
    }
}
