//! The request body every route takes: hyper's stream (HTTP/1.x, HTTP/2) or
//! a body read whole (HTTP/3, whose requests come from h3, not hyper), so
//! one `Handler` serves every protocol. It must not read or buffer anything.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body, Frame, Incoming, SizeHint};

pub(crate) enum ReqBody {
    Stream(Incoming),
    Whole(Full<Bytes>),
}

impl Body for ReqBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        match self.get_mut() {
            ReqBody::Stream(body) => Pin::new(body).poll_frame(cx),
            ReqBody::Whole(body) => Pin::new(body).poll_frame(cx).map(|f| f.map(|r| r.map_err(never))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ReqBody::Stream(body) => body.is_end_stream(),
            ReqBody::Whole(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ReqBody::Stream(body) => body.size_hint(),
            ReqBody::Whole(body) => body.size_hint(),
        }
    }
}

fn never(e: Infallible) -> hyper::Error {
    match e {}
}
