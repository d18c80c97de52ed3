//! What a session takes from its surroundings: the wall clock (as a Windows
//! FILETIME) and unpredictable bytes (NTLM client challenges, the client
//! GUID). The only module that reads either, so the rest stays deterministic
//! and tests pass these values in explicitly.
//!
//! The bytes need only differ between sessions and runs, not resist an
//! attacker: a load generator's NTLM client challenge guards nothing secret.

use md5::{Digest, Md5};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// 100 ns intervals from 1601-01-01 (FILETIME's epoch) to 1970-01-01.
const UNIX_EPOCH_AS_FILETIME: u64 = 116_444_736_000_000_000;

/// Now, as a FILETIME: 100 ns intervals since 1601-01-01 UTC.
pub(crate) fn filetime_now() -> u64 {
    let since_unix = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    UNIX_EPOCH_AS_FILETIME + since_unix.as_secs() * 10_000_000 + u64::from(since_unix.subsec_nanos() / 100)
}

/// 16 bytes that differ on every call in this process and across processes:
/// MD5 over the time, a counter, the process id and a stack address.
pub(crate) fn unique_bytes() -> [u8; 16] {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos();
    let local = 0u8;
    let mut h = Md5::new();
    h.update(nanos.to_le_bytes());
    h.update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    h.update((std::ptr::addr_of!(local) as usize).to_le_bytes());
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filetime_is_after_2020() {
        // 2020-01-01 as FILETIME.
        assert!(filetime_now() > 132_223_104_000_000_000);
    }

    #[test]
    fn unique_bytes_differ() {
        assert_ne!(unique_bytes(), unique_bytes());
    }
}
