//! Reply bodies ([MS-SMB2] 2.2.4 to 2.2.38): the few fields this client uses,
//! read from a whole message (buffer offsets count from the SMB2 header).
//!
//! Owns reply layouts and their bounds checks; borrows from the message and
//! never allocates. What a reply means for the session is decided elsewhere.

use crate::error::ProtocolError;
use crate::header::HEADER_LEN;
use crate::wire::Fields;
use crate::FileId;

const B: usize = HEADER_LEN;

/// The parts of a NEGOTIATE reply (2.2.4) the session keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Negotiated {
    pub security_mode: u16,
    pub dialect: u16,
    pub capabilities: u32,
    pub max_transact: u32,
    pub max_read: u32,
    pub max_write: u32,
}

pub(crate) fn negotiate(msg: &[u8]) -> Result<Negotiated, ProtocolError> {
    let f = Fields::new(msg, "NEGOTIATE");
    Ok(Negotiated {
        security_mode: f.u16(B + 2)?,
        dialect: f.u16(B + 4)?,
        capabilities: f.u32(B + 24)?,
        max_transact: f.u32(B + 28)?,
        max_read: f.u32(B + 32)?,
        max_write: f.u32(B + 36)?,
    })
}

/// SessionFlags bits of a SESSION_SETUP reply.
pub(crate) const SESSION_IS_GUEST: u16 = 0x1;
pub(crate) const SESSION_IS_NULL: u16 = 0x2;
pub(crate) const SESSION_ENCRYPT_DATA: u16 = 0x4;

/// SESSION_SETUP reply (2.2.6): SessionFlags and the security token.
pub(crate) fn session_setup(msg: &[u8]) -> Result<(u16, &[u8]), ProtocolError> {
    let f = Fields::new(msg, "SESSION_SETUP");
    let flags = f.u16(B + 2)?;
    let token = f.slice(f.u16(B + 4)? as usize, f.u16(B + 6)? as usize)?;
    Ok((flags, token))
}

/// TREE_CONNECT reply (2.2.10): ShareFlags.
pub(crate) const SHARE_ENCRYPT_DATA: u32 = 0x8000;

pub(crate) fn tree_connect(msg: &[u8]) -> Result<u32, ProtocolError> {
    Fields::new(msg, "TREE_CONNECT").u32(B + 4)
}

/// CREATE reply (2.2.14): the handle.
pub(crate) fn create(msg: &[u8]) -> Result<FileId, ProtocolError> {
    Fields::new(msg, "CREATE").array(B + 64).map(FileId)
}

/// READ reply (2.2.20): DataLength. Works on the reply's first 80 bytes,
/// which is all the session keeps of a large READ reply.
pub(crate) fn read(msg: &[u8]) -> Result<u32, ProtocolError> {
    Fields::new(msg, "READ").u32(B + 4)
}

/// WRITE reply (2.2.22): Count.
pub(crate) fn write(msg: &[u8]) -> Result<u32, ProtocolError> {
    Fields::new(msg, "WRITE").u32(B + 4)
}

/// QUERY_DIRECTORY (2.2.34) and QUERY_INFO (2.2.38) replies share this
/// shape: OutputBufferOffset (u16) and OutputBufferLength (u32).
pub(crate) fn output_buffer<'a>(msg: &'a [u8], command: &'static str) -> Result<&'a [u8], ProtocolError> {
    let f = Fields::new(msg, command);
    f.slice(f.u16(B + 2)? as usize, f.u32(B + 4)? as usize)
}

/// One FileBothDirectoryInformation entry ([MS-FSCC] 2.4.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DirEntry<'a> {
    pub attributes: u32,
    /// The name in UTF-16LE.
    pub name: &'a [u8],
}

impl DirEntry<'_> {
    pub fn is_dot_or_dotdot(&self) -> bool {
        self.name == [b'.', 0] || self.name == [b'.', 0, b'.', 0]
    }

    pub fn name_string(&self) -> String {
        let units: Vec<u16> = self.name.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        String::from_utf16_lossy(&units)
    }
}

/// Where FileBothDirectoryInformation puts its fields.
const ENTRY_ATTRIBUTES_AT: usize = 56;
const ENTRY_NAME_LEN_AT: usize = 60;
const ENTRY_NAME_AT: usize = 94;

/// The entries of a QUERY_DIRECTORY output buffer (FileBothDirectoryInformation),
/// following NextEntryOffset; yields an error and stops on a malformed chain.
pub(crate) fn dir_entries(buffer: &[u8]) -> impl Iterator<Item = Result<DirEntry<'_>, ProtocolError>> {
    let mut rest = Some(buffer);
    std::iter::from_fn(move || {
        let entry = rest.take().filter(|b| !b.is_empty())?;
        let f = Fields::new(entry, "QUERY_DIRECTORY entry");
        let parsed = (|| {
            let next = f.u32(0)? as usize;
            let name_len = f.u32(ENTRY_NAME_LEN_AT)? as usize;
            let item = DirEntry { attributes: f.u32(ENTRY_ATTRIBUTES_AT)?, name: f.slice(ENTRY_NAME_AT, name_len)? };
            if next != 0 {
                // A next offset inside the current entry would loop forever.
                if next < ENTRY_NAME_AT || next > entry.len() {
                    return Err(ProtocolError::Truncated { command: "QUERY_DIRECTORY entry", len: entry.len() });
                }
                rest = Some(&entry[next..]);
            }
            Ok(item)
        })();
        Some(parsed)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, attributes: u32, last: bool) -> Vec<u8> {
        let name: Vec<u8> = name.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let mut e = vec![0u8; ENTRY_NAME_AT];
        e.extend_from_slice(&name);
        while e.len() % 8 != 0 {
            e.push(0);
        }
        let next = if last { 0 } else { e.len() as u32 };
        e[0..4].copy_from_slice(&next.to_le_bytes());
        e[56..60].copy_from_slice(&attributes.to_le_bytes());
        e[60..64].copy_from_slice(&(name.len() as u32).to_le_bytes());
        e
    }

    #[test]
    fn directory_entries_follow_next_entry_offset() {
        let mut buf = entry(".", 0x10, false);
        buf.extend(entry("..", 0x10, false));
        buf.extend(entry("CHAP10.DOC", 0x20, true));
        let entries: Vec<_> = dir_entries(&buf).collect::<Result<_, _>>().unwrap();
        assert_eq!(entries.len(), 3);
        assert!(entries[0].is_dot_or_dotdot() && entries[1].is_dot_or_dotdot());
        assert_eq!(entries[2].name_string(), "CHAP10.DOC");
        assert_eq!(entries[2].attributes, 0x20);
        assert_eq!(dir_entries(&[]).count(), 0);
    }

    #[test]
    fn malformed_entries_are_errors_not_loops() {
        let mut e = entry("x", 0, true);
        e[0..4].copy_from_slice(&4u32.to_le_bytes());
        let got: Vec<_> = dir_entries(&e).collect();
        assert_eq!(got.len(), 1);
        assert!(got[0].is_err());
        assert!(dir_entries(&e[..50]).next().unwrap().is_err());
    }

    #[test]
    fn output_buffer_is_bounds_checked() {
        let mut msg = vec![0u8; 72];
        msg[66..68].copy_from_slice(&72u16.to_le_bytes());
        msg[68..72].copy_from_slice(&1u32.to_le_bytes());
        assert!(output_buffer(&msg, "QUERY_INFO").is_err());
        msg.push(7);
        assert_eq!(output_buffer(&msg, "QUERY_INFO").unwrap(), [7]);
    }
}
