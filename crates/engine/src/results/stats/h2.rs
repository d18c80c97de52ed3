//! HTTP/2's per-run figures: how many streams a connection carried at once,
//! what HPACK saved, and what the servers ended (GOAWAY, RST_STREAM). Plain
//! counters, so merging is exact; never windowed (like the connection counts,
//! they describe the connections, not the measured interval).

use serde::{Deserialize, Serialize};

/// HTTP/2 counters of one worker, or of several merged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct H2Counters {
    /// Streams opened (requests sent).
    pub streams_opened: u64,
    /// Sum over opens of the streams then open on that connection, the new one included:
    /// `/ streams_opened` is the mean number of streams in use when a request goes out.
    pub streams_in_use_sum: u64,
    /// The most streams open at once on one connection.
    pub streams_in_use_max: u64,
    /// Response header blocks as received (HPACK-compressed bytes).
    pub response_header_block_bytes: u64,
    /// The same response fields as HTTP/1.1 text would carry them.
    pub response_header_raw_bytes: u64,
    /// Request header blocks as sent.
    pub request_header_block_bytes: u64,
    /// The same request fields as HTTP/1.1 text.
    pub request_header_raw_bytes: u64,
    /// GOAWAY frames received.
    pub goaways: u64,
    /// RST_STREAM frames received for crest's streams (each is also a `reset` error).
    pub resets: u64,
    /// Streams the server refused (above a graceful GOAWAY's last stream, or REFUSED_STREAM), sent again.
    pub refused: u64,
}

impl H2Counters {
    /// A stream opened on a connection that now has `open` streams, with a request block of `block`/`raw` bytes.
    pub fn record_open(&mut self, open: u32, block: usize, raw: usize) {
        self.streams_opened += 1;
        self.streams_in_use_sum += u64::from(open);
        self.streams_in_use_max = self.streams_in_use_max.max(u64::from(open));
        self.request_header_block_bytes += block as u64;
        self.request_header_raw_bytes += raw as u64;
    }

    /// Adds `other`'s counts.
    pub fn merge(&mut self, other: &H2Counters) {
        self.streams_opened += other.streams_opened;
        self.streams_in_use_sum += other.streams_in_use_sum;
        self.streams_in_use_max = self.streams_in_use_max.max(other.streams_in_use_max);
        self.response_header_block_bytes += other.response_header_block_bytes;
        self.response_header_raw_bytes += other.response_header_raw_bytes;
        self.request_header_block_bytes += other.request_header_block_bytes;
        self.request_header_raw_bytes += other.request_header_raw_bytes;
        self.goaways += other.goaways;
        self.resets += other.resets;
        self.refused += other.refused;
    }

    /// Whether nothing was counted (an HTTP/1.x run).
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}
