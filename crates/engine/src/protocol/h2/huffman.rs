//! HPACK's static Huffman code (RFC 7541 Appendix B). The code is
//! canonical: codes of one length are consecutive and ordered by symbol,
//! lengths ascending. So the table is kept as each symbol's bit length only,
//! and both directions are derived from it at compile time: encoding reads a
//! (code, length) per byte; decoding walks the lengths from shortest, which
//! for header text (5–8 bit symbols) is a handful of comparisons a symbol.
//! Decoding writes into the caller's buffer and never allocates.

/// Bit length of each symbol's code: bytes 0–255, then EOS (256).
#[rustfmt::skip]
const LENGTHS: [u8; 257] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, //   0
    28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, //  16
     6, 10, 10, 12, 13,  6,  8, 11, 10, 10,  8, 11,  8,  6,  6,  6, //  32 ' '
     5,  5,  5,  6,  6,  6,  6,  6,  6,  6,  7,  8, 15,  6, 12, 10, //  48 '0'
    13,  6,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7, //  64 '@'
     7,  7,  7,  7,  7,  7,  7,  7,  8,  7,  8, 13, 19, 13, 14,  6, //  80 'P'
    15,  5,  6,  5,  6,  5,  6,  6,  6,  5,  7,  7,  6,  6,  6,  5, //  96 '`'
     6,  7,  6,  5,  5,  6,  7,  7,  7,  7,  7, 15, 11, 14, 13, 28, // 112 'p'
    20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, // 128
    24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, // 144
    22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, // 160
    21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, // 176
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, // 192
    19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, // 208
    20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, // 224
    26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, // 240
    30,                                                             // EOS
];

const MAX_BITS: usize = 30;
const EOS: u16 = 256;

/// The canonical code tables: per symbol its code; per length the first
/// code, the index of its first symbol in `ORDER`, and how many there are.
struct Canonical {
    codes: [u32; 257],
    first_code: [u32; MAX_BITS + 1],
    first_index: [u16; MAX_BITS + 1],
    count: [u16; MAX_BITS + 1],
    /// Symbols sorted by (length, symbol).
    order: [u16; 257],
}

const fn canonical() -> Canonical {
    let mut count = [0u16; MAX_BITS + 1];
    let mut s = 0;
    while s < 257 {
        count[LENGTHS[s] as usize] += 1;
        s += 1;
    }
    let mut first_code = [0u32; MAX_BITS + 1];
    let mut first_index = [0u16; MAX_BITS + 1];
    let mut code = 0u32;
    let mut index = 0u16;
    let mut len = 1;
    while len <= MAX_BITS {
        code <<= 1;
        first_code[len] = code;
        first_index[len] = index;
        code += count[len] as u32;
        index += count[len];
        len += 1;
    }
    let mut codes = [0u32; 257];
    let mut order = [0u16; 257];
    let mut next = first_code;
    let mut slot = first_index;
    let mut s = 0;
    while s < 257 {
        let len = LENGTHS[s] as usize;
        codes[s] = next[len];
        next[len] += 1;
        order[slot[len] as usize] = s as u16;
        slot[len] += 1;
        s += 1;
    }
    Canonical { codes, first_code, first_index, count, order }
}

static TABLE: Canonical = canonical();

/// The code and bit length of byte `b`.
pub fn code_of(symbol: u16) -> (u32, u8) {
    (TABLE.codes[symbol as usize], LENGTHS[symbol as usize])
}

/// Bytes the Huffman encoding of `s` takes.
pub fn encoded_len(s: &[u8]) -> usize {
    let bits: usize = s.iter().map(|&b| usize::from(LENGTHS[usize::from(b)])).sum();
    bits.div_ceil(8)
}

/// Appends the Huffman encoding of `s`, padded with the EOS prefix (ones).
pub fn encode(s: &[u8], out: &mut Vec<u8>) {
    let mut acc: u64 = 0;
    let mut bits = 0u32;
    for &b in s {
        let (code, len) = code_of(u16::from(b));
        acc = (acc << len) | u64::from(code);
        bits += u32::from(len);
        while bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    if bits > 0 {
        let pad = 8 - bits;
        out.push(((acc << pad) | ((1 << pad) - 1)) as u8);
    }
}

/// Why a Huffman string cannot be decoded (RFC 7541 §5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HuffmanError {
    /// The EOS symbol inside the string.
    #[error("EOS symbol inside a Huffman string")]
    Eos,
    /// Padding longer than 7 bits or not all ones.
    #[error("bad Huffman padding")]
    Padding,
}

/// Symbols of at most 8 bits by the next 8 bits of input: (symbol, length);
/// length 0 where the next code is longer.
const fn fast_table() -> [(u8, u8); 256] {
    let t = canonical();
    let mut lut = [(0u8, 0u8); 256];
    let mut s = 0;
    while s < 256 {
        let len = LENGTHS[s] as u32;
        if len <= 8 {
            let first = (t.codes[s] << (8 - len)) as usize;
            let mut i = 0;
            while i < (1 << (8 - len)) {
                lut[first + i] = (s as u8, len as u8);
                i += 1;
            }
        }
        s += 1;
    }
    lut
}

static FAST: [(u8, u8); 256] = fast_table();

/// Appends the decoding of `input` to `out` (which the caller sized: no
/// allocation while it has room for `input.len() * 8 / 5` bytes). Header
/// text is almost all 5–8 bit symbols, found by one lookup of the next 8
/// bits; longer codes are found length by length.
pub fn decode(input: &[u8], out: &mut Vec<u8>) -> Result<(), HuffmanError> {
    let t = &TABLE;
    // `acc` holds `avail` unread bits, most significant first, in its low bits.
    let mut acc: u64 = 0;
    let mut avail: u32 = 0;
    let mut next = 0;
    loop {
        while avail <= 56 && next < input.len() {
            acc = (acc << 8) | u64::from(input[next]);
            avail += 8;
            next += 1;
        }
        if avail == 0 {
            return Ok(());
        }
        if avail >= 8 {
            let (symbol, len) = FAST[((acc >> (avail - 8)) & 0xff) as usize];
            if len > 0 {
                out.push(symbol);
                avail -= u32::from(len);
                continue;
            }
        }
        let mut found = false;
        // With 8 bits at hand the lookup has ruled out every length up to 8.
        let mut len = if avail >= 8 { 9 } else { 5 };
        while len <= MAX_BITS as u32 && len <= avail {
            let code = ((acc >> (avail - len)) & ((1 << len) - 1)) as u32;
            let offset = code.wrapping_sub(t.first_code[len as usize]);
            if offset < u32::from(t.count[len as usize]) {
                let symbol = t.order[usize::from(t.first_index[len as usize]) + offset as usize];
                if symbol == EOS {
                    return Err(HuffmanError::Eos);
                }
                out.push(symbol as u8);
                avail -= len;
                found = true;
                break;
            }
            len += 1;
        }
        if found {
            continue;
        }
        if next < input.len() || avail > 7 {
            // Input left but no code: only EOS's 30 ones can get here.
            return Err(if avail >= MAX_BITS as u32 { HuffmanError::Eos } else { HuffmanError::Padding });
        }
        // The rest must be a prefix of EOS: at most 7 one bits.
        let rest = acc & ((1 << avail) - 1);
        return if rest == (1 << avail) - 1 { Ok(()) } else { Err(HuffmanError::Padding) };
    }
}
