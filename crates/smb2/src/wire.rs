//! Little-endian field access for parsing replies and patching requests.
//!
//! Owns bounds checking: every read of a reply field goes through [`Fields`],
//! so a short or lying reply becomes a [`ProtocolError`], never a panic. Knows
//! nothing of SMB2 message layouts (that is [`crate::reply`] and
//! [`crate::request`]).

use crate::error::ProtocolError;

/// A reply (or part of one) read field by field; `command` names it in errors.
#[derive(Clone, Copy)]
pub(crate) struct Fields<'a> {
    pub bytes: &'a [u8],
    pub command: &'static str,
}

impl<'a> Fields<'a> {
    pub fn new(bytes: &'a [u8], command: &'static str) -> Self {
        Fields { bytes, command }
    }

    fn short(&self) -> ProtocolError {
        ProtocolError::Truncated { command: self.command, len: self.bytes.len() }
    }

    pub fn slice(&self, at: usize, len: usize) -> Result<&'a [u8], ProtocolError> {
        at.checked_add(len).and_then(|end| self.bytes.get(at..end)).ok_or_else(|| self.short())
    }

    pub fn array<const N: usize>(&self, at: usize) -> Result<[u8; N], ProtocolError> {
        let mut out = [0; N];
        out.copy_from_slice(self.slice(at, N)?);
        Ok(out)
    }

    pub fn u16(&self, at: usize) -> Result<u16, ProtocolError> {
        self.array(at).map(u16::from_le_bytes)
    }

    pub fn u32(&self, at: usize) -> Result<u32, ProtocolError> {
        self.array(at).map(u32::from_le_bytes)
    }

    pub fn u64(&self, at: usize) -> Result<u64, ProtocolError> {
        self.array(at).map(u64::from_le_bytes)
    }
}

/// Overwrites a little-endian `u16` already written at `at`.
pub(crate) fn patch_u16(out: &mut [u8], at: usize, value: u16) {
    out[at..at + 2].copy_from_slice(&value.to_le_bytes());
}

/// Overwrites a little-endian `u32` already written at `at`.
pub(crate) fn patch_u32(out: &mut [u8], at: usize, value: u32) {
    out[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

/// Appends `n` zero bytes.
pub(crate) fn zeros(out: &mut Vec<u8>, n: usize) {
    out.resize(out.len() + n, 0);
}

/// Appends little-endian integers; `put!(out, 1u16, 0u32)`.
macro_rules! put {
    ($out:expr $(, $value:expr)* $(,)?) => {{
        $( $out.extend_from_slice(&$value.to_le_bytes()); )*
    }};
}
pub(crate) use put;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_little_endian_and_bounds_checked() {
        let f = Fields::new(&[1, 2, 3, 4, 5, 6, 7, 8, 9], "TEST");
        assert_eq!(f.u16(0).unwrap(), 0x0201);
        assert_eq!(f.u32(1).unwrap(), 0x0504_0302);
        assert_eq!(f.u64(1).unwrap(), 0x0908_0706_0504_0302);
        assert_eq!(f.u64(2), Err(ProtocolError::Truncated { command: "TEST", len: 9 }));
        assert!(f.slice(usize::MAX, 2).is_err());
    }

    #[test]
    fn put_and_patch() {
        let mut out = Vec::new();
        put!(out, 0x0102u16, 0x0304_0506u32);
        assert_eq!(out, [2, 1, 6, 5, 4, 3]);
        patch_u16(&mut out, 0, 0xAABB);
        patch_u32(&mut out, 2, 0x1122_3344);
        zeros(&mut out, 2);
        assert_eq!(out, [0xBB, 0xAA, 0x44, 0x33, 0x22, 0x11, 0, 0]);
    }
}
