//! HTTP on bytes only (HTTP/2 in `h2`, HTTP/3 in `h3`). HTTP/1.x: `encode` builds a request once per run, `decode`
//! frames responses from whatever slices the socket yields. Nothing here
//! touches a socket or a clock, so every case is tested on raw bytes.

pub mod chunked;
pub mod decode;
pub mod encode;
pub mod h2;
pub mod h3;

pub use decode::{DecodeError, Response, ResponseDecoder};
pub use encode::{encode_request, RequestSpec};
