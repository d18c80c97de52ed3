//! HTTP/1.x on bytes only: `encode` builds a request once per run, `decode`
//! frames responses from whatever slices the socket yields. Nothing here
//! touches a socket or a clock, so every case is tested on raw bytes.

pub mod chunked;
pub mod decode;
pub mod encode;

pub use decode::{DecodeError, Response, ResponseDecoder};
pub use encode::{encode_request, RequestSpec};
