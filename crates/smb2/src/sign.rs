//! SMB 2.0.2/2.1 message signing ([MS-SMB2] 3.1.4.1): HMAC-SHA256 keyed with
//! the session key over the whole message with a zeroed signature field, the
//! first 16 bytes of the MAC stored in the header.
//!
//! Owns signing requests. Replies are not verified: the session discards READ
//! data as it streams past (it never holds a whole READ reply), and a load
//! generator on a test network has nobody to defend against.

use crate::header::{FLAGS_AT, FLAG_SIGNED, HEADER_LEN, SIGNATURE_AT};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// A keyed HMAC-SHA256, cloned per message (a copy of its state, no
/// allocation).
#[derive(Clone)]
pub(crate) struct Signer {
    mac: Hmac<Sha256>,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Signer(..)")
    }
}

impl Signer {
    pub fn new(session_key: &[u8; 16]) -> Signer {
        Signer { mac: Hmac::new_from_slice(session_key).expect("invariant: HMAC takes a key of any length") }
    }

    /// The signature `msg` (header first) should carry: the message is read
    /// as if SMB2_FLAGS_SIGNED were set and the signature field were zero.
    pub fn signature(&self, msg: &[u8]) -> [u8; 16] {
        let mut mac = self.mac.clone();
        let mut flags = [0u8; 4];
        flags.copy_from_slice(&msg[FLAGS_AT..FLAGS_AT + 4]);
        let flags = (u32::from_le_bytes(flags) | FLAG_SIGNED).to_le_bytes();
        mac.update(&msg[..FLAGS_AT]);
        mac.update(&flags);
        mac.update(&msg[FLAGS_AT + 4..SIGNATURE_AT]);
        mac.update(&[0; 16]);
        mac.update(&msg[HEADER_LEN..]);
        let full = mac.finalize().into_bytes();
        let mut out = [0; 16];
        out.copy_from_slice(&full[..16]);
        out
    }

    /// Signs `msg` (header first, transport header excluded) in place.
    pub fn sign(&self, msg: &mut [u8]) {
        let signature = self.signature(msg);
        msg[FLAGS_AT] |= FLAG_SIGNED as u8;
        msg[SIGNATURE_AT..HEADER_LEN].copy_from_slice(&signature);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Independent of `Signer`'s streaming: one HMAC over the prepared bytes.
    #[test]
    fn signature_is_truncated_hmac_sha256_over_the_zeroed_message() {
        let key = [7u8; 16];
        let mut msg: Vec<u8> = (0..200u8).collect();
        msg[..4].copy_from_slice(b"\xFESMB");
        Signer::new(&key).sign(&mut msg);

        let mut expect = msg.clone();
        expect[SIGNATURE_AT..HEADER_LEN].fill(0);
        assert_eq!(expect[FLAGS_AT] & 8, 8);
        let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
        mac.update(&expect);
        assert_eq!(msg[SIGNATURE_AT..HEADER_LEN], mac.finalize().into_bytes()[..16]);
        // Signing again gives the same bytes: the old signature is ignored.
        let before = msg.clone();
        Signer::new(&key).sign(&mut msg);
        assert_eq!(msg, before);
    }
}
