//! Incremental decoder for `Transfer-Encoding: chunked` bodies. It counts
//! data bytes and skips them in bulk; only the size lines and trailers are
//! walked byte by byte, each bounded so a hostile peer cannot grow memory.

/// Longest chunk-size line (digits plus extensions) accepted.
const MAX_SIZE_LINE: usize = 4096;
/// Longest trailer section accepted.
const MAX_TRAILER: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Size,
    /// Whitespace after the size digits: only more of it, `;` or the line end may follow.
    SizeWs,
    SizeExt,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    TrailerStart,
    TrailerLine,
    TrailerLf,
    EndLf,
    Done,
}

/// Why a chunked body is malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ChunkError {
    /// A chunk-size line is not hex or too long.
    #[error("invalid chunk size line")]
    BadSize,
    /// A chunk's data is not followed by CRLF.
    #[error("chunk data not followed by CRLF")]
    BadDelimiter,
    /// The trailer section is malformed or too long.
    #[error("invalid or oversized chunked trailer")]
    BadTrailer,
}

/// State of one chunked body being decoded.
#[derive(Debug, Clone)]
pub struct ChunkedDecoder {
    state: State,
    size: u64,
    remaining: u64,
    line_len: usize,
    trailer_len: usize,
}

impl Default for ChunkedDecoder {
    fn default() -> Self {
        Self { state: State::Size, size: 0, remaining: 0, line_len: 0, trailer_len: 0 }
    }
}

/// Result of feeding bytes to the decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkProgress {
    /// Input bytes consumed; the rest belongs to whatever follows the body.
    pub consumed: usize,
    /// Decoded data bytes among the consumed ones.
    pub data_bytes: u64,
    /// The terminating chunk and trailers have been seen.
    pub done: bool,
}

impl ChunkedDecoder {
    /// Feeds `input`; stops right after the body ends.
    pub fn feed(&mut self, input: &[u8]) -> Result<ChunkProgress, ChunkError> {
        self.feed_with(input, |_| {})
    }

    /// Like `feed`, handing each run of decoded data to `data`.
    pub fn feed_with(&mut self, input: &[u8], mut data: impl FnMut(&[u8])) -> Result<ChunkProgress, ChunkError> {
        let mut i = 0;
        let mut data_bytes = 0u64;
        while i < input.len() && self.state != State::Done {
            if self.state == State::Data {
                let take = self.remaining.min((input.len() - i) as u64);
                data(&input[i..i + take as usize]);
                self.remaining -= take;
                data_bytes += take;
                i += take as usize;
                if self.remaining == 0 {
                    self.state = State::DataCr;
                }
                continue;
            }
            self.step(input[i])?;
            i += 1;
        }
        Ok(ChunkProgress { consumed: i, data_bytes, done: self.state == State::Done })
    }

    fn step(&mut self, b: u8) -> Result<(), ChunkError> {
        match self.state {
            State::Size => self.size_byte(b)?,
            State::SizeWs => match b {
                b' ' | b'\t' => self.bump_line()?,
                b';' => {
                    self.state = State::SizeExt;
                    self.bump_line()?;
                }
                b'\r' => self.state = State::SizeLf,
                b'\n' => self.end_size_line(),
                _ => return Err(ChunkError::BadSize),
            },
            State::SizeExt => match b {
                b'\r' => self.state = State::SizeLf,
                b'\n' => self.end_size_line(),
                _ => self.bump_line()?,
            },
            State::SizeLf => {
                if b != b'\n' {
                    return Err(ChunkError::BadSize);
                }
                self.end_size_line();
            }
            State::DataCr => match b {
                b'\r' => self.state = State::DataLf,
                b'\n' => self.start_size_line(),
                _ => return Err(ChunkError::BadDelimiter),
            },
            State::DataLf => {
                if b != b'\n' {
                    return Err(ChunkError::BadDelimiter);
                }
                self.start_size_line();
            }
            State::TrailerStart => match b {
                b'\r' => self.state = State::EndLf,
                b'\n' => self.state = State::Done,
                _ => {
                    self.state = State::TrailerLine;
                    self.bump_trailer()?;
                }
            },
            State::TrailerLine => {
                self.bump_trailer()?;
                match b {
                    b'\r' => self.state = State::TrailerLf,
                    b'\n' => self.state = State::TrailerStart,
                    _ => {}
                }
            }
            State::TrailerLf => {
                if b != b'\n' {
                    return Err(ChunkError::BadTrailer);
                }
                self.state = State::TrailerStart;
            }
            State::EndLf => {
                if b != b'\n' {
                    return Err(ChunkError::BadTrailer);
                }
                self.state = State::Done;
            }
            State::Data | State::Done => unreachable!("handled by feed"),
        }
        Ok(())
    }

    fn size_byte(&mut self, b: u8) -> Result<(), ChunkError> {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            b';' if self.line_len > 0 => {
                self.state = State::SizeExt;
                return self.bump_line();
            }
            b' ' | b'\t' if self.line_len > 0 => {
                self.state = State::SizeWs;
                return self.bump_line();
            }
            b'\r' if self.line_len > 0 => {
                self.state = State::SizeLf;
                return Ok(());
            }
            b'\n' if self.line_len > 0 => {
                self.end_size_line();
                return Ok(());
            }
            _ => return Err(ChunkError::BadSize),
        };
        // 15 hex digits already exceed any body we would accept.
        if self.line_len >= 15 {
            return Err(ChunkError::BadSize);
        }
        self.size = self.size * 16 + u64::from(digit);
        self.line_len += 1;
        Ok(())
    }

    fn bump_line(&mut self) -> Result<(), ChunkError> {
        self.line_len += 1;
        if self.line_len > MAX_SIZE_LINE {
            return Err(ChunkError::BadSize);
        }
        Ok(())
    }

    fn bump_trailer(&mut self) -> Result<(), ChunkError> {
        self.trailer_len += 1;
        if self.trailer_len > MAX_TRAILER {
            return Err(ChunkError::BadTrailer);
        }
        Ok(())
    }

    fn end_size_line(&mut self) {
        if self.size == 0 {
            self.state = State::TrailerStart;
        } else {
            self.remaining = self.size;
            self.state = State::Data;
        }
    }

    fn start_size_line(&mut self) {
        self.size = 0;
        self.line_len = 0;
        self.state = State::Size;
    }
}
