//! Why crest-fcgi gave up on a connection: the peer broke the FastCGI
//! protocol. Owns only the error type and its messages; what to do about one
//! (close that connection, tell stderr) is the I/O loop's business.

/// A FastCGI protocol violation by the peer; the connection cannot go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("FastCGI version {0} (only version 1 exists): is the peer speaking FastCGI?")]
    Version(u8),
    #[error("FCGI_BEGIN_REQUEST body of {0} bytes (it is 8)")]
    BeginRequestLength(usize),
    #[error("FCGI_BEGIN_REQUEST with request id 0 (reserved for management records)")]
    NullRequestId,
    #[error("a name-value pair runs past the end of its stream")]
    PairTruncated,
    #[error("FCGI_PARAMS over {limit} bytes")]
    ParamsTooLarge { limit: usize },
}
