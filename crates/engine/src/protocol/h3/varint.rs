//! QUIC variable-length integers (RFC 9000 §16): the two high bits of the
//! first byte give the length (1, 2, 4 or 8 bytes), the rest the value.

/// The largest value a varint holds (2^62 - 1).
pub const MAX: u64 = (1 << 62) - 1;

/// Bytes a varint takes, from its first byte.
pub fn len_of(first: u8) -> usize {
    1 << (first >> 6)
}

/// Appends `v` (at most `MAX`) in its shortest form.
pub fn encode(out: &mut Vec<u8>, v: u64) {
    debug_assert!(v <= MAX);
    if v < 1 << 6 {
        out.push(v as u8);
    } else if v < 1 << 14 {
        out.extend_from_slice(&((v as u16) | 0x4000).to_be_bytes());
    } else if v < 1 << 30 {
        out.extend_from_slice(&((v as u32) | 0x8000_0000).to_be_bytes());
    } else {
        out.extend_from_slice(&(v | 0xc000_0000_0000_0000).to_be_bytes());
    }
}

/// Reads a varint at `*pos`; `None` (and `*pos` unchanged) when `buf` ends inside it.
pub fn decode(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let first = *buf.get(*pos)?;
    let len = len_of(first);
    let bytes = buf.get(*pos..*pos + len)?;
    let mut v = u64::from(first & 0x3f);
    for &b in &bytes[1..] {
        v = (v << 8) | u64::from(b);
    }
    *pos += len;
    Some(v)
}
