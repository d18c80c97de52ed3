//! The sans-IO layers on raw bytes: records and pairs (`record`), one
//! connection's protocol (`connection`) and the answers (`reply`), fed
//! hand-built bytes, whole and split at every boundary; no sockets.

use crate::support::*;
use crest_dynamic::bytes::Stream;
use crest_dynamic::env_page::{self, PAGE_BYTES};
use crest_fcgi::connection::{Connection, Limits, Progress, Request, MAX_PARAMS_BYTES};
use crest_fcgi::error::ProtocolError;
use crest_fcgi::params::Params;
use crest_fcgi::record::{self, Record};
use crest_fcgi::reply::Reply;

const LIMITS: Limits = Limits { max_conns: 1000 };

/// What a connection did with some input, driven as the I/O loop drives
/// it: every ready request is answered through `Reply` and finished.
#[derive(Debug, Default)]
struct Outcome {
    out: Vec<u8>,
    requests: Vec<Request>,
    closed: bool,
}

fn drive<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Result<Outcome, ProtocolError> {
    let mut conn = Connection::new(LIMITS);
    let mut input = Vec::new();
    let mut outcome = Outcome::default();
    for chunk in chunks {
        input.extend_from_slice(chunk);
        loop {
            let (used, progress) = conn.receive(&input, &mut outcome.out)?;
            input.drain(..used);
            match progress {
                Progress::NeedMore => break,
                Progress::Ready(request) => {
                    let mut reply = Reply::new(&request.params);
                    while reply.write_next(request.id, &mut outcome.out) {}
                    let keep_conn = conn.finish(&mut outcome.out);
                    outcome.requests.push(request);
                    if !keep_conn {
                        outcome.closed = true;
                        return Ok(outcome);
                    }
                }
                Progress::Close => {
                    outcome.closed = true;
                    return Ok(outcome);
                }
            }
        }
    }
    Ok(outcome)
}

fn drive_whole(bytes: &[u8]) -> Outcome {
    drive([bytes]).expect("valid protocol")
}

/// The answers in `out`, per request id, in the order their ends came.
fn answers(out: &[u8]) -> Vec<(u16, Answer)> {
    let mut done: Vec<(u16, Answer)> = Vec::new();
    let mut open: Vec<(u16, Answer)> = Vec::new();
    for rec in parse_records(out) {
        let id = rec.1;
        assert_ne!(id, 0, "management record among answers: {rec:?}");
        let at = open.iter().position(|(i, _)| *i == id).unwrap_or_else(|| {
            open.push((id, Answer::default()));
            open.len() - 1
        });
        open[at].1.add(&rec);
        if open[at].1.end.is_some() {
            done.push(open.remove(at));
        }
    }
    assert!(open.is_empty(), "unfinished answers: {open:?}");
    done
}

fn env_params(query: &str) -> Vec<(&'static str, String)> {
    vec![
        ("GATEWAY_INTERFACE", "CGI/1.1".into()),
        ("REQUEST_METHOD", "GET".into()),
        ("SCRIPT_NAME", "/fcgi/crest-env".into()),
        ("QUERY_STRING", query.into()),
        ("HTTP_USER_AGENT", "codec-test".into()),
    ]
}

fn env_request(id: u16, keep_conn: bool, query: &str) -> Vec<u8> {
    let params = env_params(query);
    let list: Vec<(&str, &str)> = params.iter().map(|(n, v)| (*n, v.as_str())).collect();
    request(id, keep_conn, &list, b"")
}

#[test]
fn a_record_is_parsed_from_its_exact_bytes() {
    let bytes = [1, PARAMS, 0x01, 0x02, 0, 3, 5, 0, b'a', b'b', b'c', 9, 9, 9, 9, 9, 1];
    let (rec, used) = record::decode(&bytes).expect("version 1").expect("whole");
    assert_eq!(rec, Record { kind: PARAMS, request_id: 0x0102, content: b"abc" });
    assert_eq!(used, 16, "header, content and padding; not the next byte");
    for end in 0..16 {
        assert_eq!(record::decode(&bytes[..end]), Ok(None), "{end} bytes");
    }
    assert_eq!(record::decode(&[2, 1, 0, 1, 0, 0, 0, 0]), Err(ProtocolError::Version(2)));
    // An HTTP request sent to a FastCGI port fails at once, not after 64 KiB.
    assert_eq!(record::decode(b"GET / HT"), Err(ProtocolError::Version(b'G')));
}

#[test]
fn encoded_records_are_padded_to_eight_and_read_back() {
    for len in 0..20 {
        let content: Vec<u8> = (0..len).map(|i| i as u8).collect();
        let mut out = Vec::new();
        record::encode_record(&mut out, STDOUT, 7, &content);
        assert_eq!(out.len() % 8, 0, "content of {len}");
        assert_eq!(parse_records(&out), vec![(STDOUT, 7, content)]);
    }
    let mut out = Vec::new();
    record::encode_stream(&mut out, STDOUT, 1, &vec![b'x'; 200_000]);
    let records = parse_records(&out);
    assert_eq!(records.len(), 4);
    assert!(records.iter().all(|r| r.2.len() <= 65535));
    assert_eq!(records.iter().map(|r| r.2.len()).sum::<usize>(), 200_000);
    let mut end = Vec::new();
    record::encode_end_request(&mut end, 0x0203, 0x0A0B_0C0D, 1);
    assert_eq!(end, [1, END_REQUEST, 2, 3, 0, 8, 0, 0, 0x0A, 0x0B, 0x0C, 0x0D, 1, 0, 0, 0]);
}

#[test]
fn params_with_one_and_four_byte_lengths() {
    let long_name = "N".repeat(200);
    let long_value = "v".repeat(70_000);
    let mut bytes = pair(b"A", b"1");
    bytes.extend(pair(&[b'n'; 127], &[b'v'; 127]));
    bytes.extend(pair(long_name.as_bytes(), b"short"));
    bytes.extend(pair(b"BIG", long_value.as_bytes()));
    // The four-byte form is allowed for short lengths too.
    bytes.extend(length(5, true));
    bytes.extend(length(2, true));
    bytes.extend_from_slice(b"SHORTok");
    let pairs: Vec<(&[u8], &[u8])> = record::decode_pairs(&bytes).collect::<Result<_, _>>().expect("well-formed");
    assert_eq!(pairs.len(), 5);
    assert_eq!(pairs[1], (&[b'n'; 127][..], &[b'v'; 127][..]));
    assert_eq!(pairs[2], (long_name.as_bytes(), &b"short"[..]));
    assert_eq!(pairs[3].1.len(), 70_000);
    assert_eq!(pairs[4], (&b"SHORT"[..], &b"ok"[..]));

    let mut ours = Vec::new();
    record::encode_pair(&mut ours, &[b'n'; 127], &[b'v'; 128]);
    assert_eq!(&ours[..5], [127, 0x80, 0, 0, 128]);

    // Over the wire: 70 KB of params span two PARAMS records.
    let params = [("SCRIPT_NAME", "/crest-env"), ("BIG", long_value.as_str())];
    let outcome = drive_whole(&request(1, false, &params, b""));
    assert_eq!(outcome.requests.len(), 1);
    let got = &outcome.requests[0].params;
    assert_eq!(got.get("BIG").map(<[u8]>::len), Some(70_000));
    assert_eq!(got.get("SCRIPT_NAME"), Some(&b"/crest-env"[..]));

    for truncated in [&[5u8][..], &[0x80, 0, 0], &[3, 1, b'a', b'b']] {
        assert_eq!(record::decode_pairs(truncated).last(), Some(Err(ProtocolError::PairTruncated)), "{truncated:?}");
    }
}

#[test]
fn padding_in_input_is_skipped() {
    for padding in [0u8, 1, 7, 255] {
        let mut bytes = record(BEGIN_REQUEST, 1, &[0, 1, 0, 0, 0, 0, 0, 0], padding);
        bytes.extend(record(PARAMS, 1, &pair(b"SCRIPT_NAME", b"/x/crest-env"), padding));
        bytes.extend(record(PARAMS, 1, &[], padding));
        bytes.extend(record(STDIN, 1, b"body", padding));
        bytes.extend(record(STDIN, 1, &[], padding));
        let outcome = drive_whole(&bytes);
        assert_eq!(outcome.requests.len(), 1, "padding {padding}");
        assert_eq!((outcome.requests[0].stdin.as_slice(), outcome.requests[0].stdin_len), (&b"body"[..], 4));
        assert!(outcome.closed);
        assert_eq!(answers(&outcome.out).len(), 1);
    }
}

#[test]
fn the_start_of_a_body_is_kept_and_its_whole_length_counted() {
    let body: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    let mut bytes = begin(1, RESPONDER, 0);
    bytes.extend(stream(PARAMS, 1, &pair(b"SCRIPT_NAME", b"/specweb99/dynamic"), 100));
    bytes.extend(stream(STDIN, 1, &body, 999));
    let outcome = drive_whole(&bytes);
    let request = &outcome.requests[0];
    assert_eq!(request.stdin, body[..crest_fcgi::connection::MAX_STDIN_KEPT]);
    assert_eq!(request.stdin_len, 10_000);
}

/// A conversation that exercises every path: management records, a kept
/// connection with three requests (one with a body, one aborted), unknown
/// records in between.
fn conversation() -> Vec<u8> {
    let mut bytes = record(GET_VALUES, 0, &pair(b"FCGI_MPXS_CONNS", b""), 3);
    bytes.extend(env_request(1, true, "a=1"));
    bytes.extend(record(42, 0, b"??", 6));
    let mut post = begin(2, RESPONDER, KEEP_CONN);
    post.extend(stream(PARAMS, 2, &pairs(&[("DOCUMENT_URI", "/b/crest-bytes"), ("QUERY_STRING", "size=70000")]), 5));
    post.extend(stream(STDIN, 2, &[b'p'; 3000], 1000));
    bytes.extend(post);
    bytes.extend(begin(3, RESPONDER, KEEP_CONN));
    bytes.extend(record(PARAMS, 3, &pair(b"A", b"B"), 0));
    bytes.extend(record(ABORT_REQUEST, 3, &[], 0));
    bytes.extend(env_request(1, false, "last"));
    bytes
}

#[test]
fn records_split_at_every_byte_boundary_give_the_same_answers() {
    let bytes = conversation();
    let whole = drive_whole(&bytes);
    assert_eq!(whole.requests.len(), 3);
    assert!(whole.closed);
    for cut in 0..=bytes.len() {
        let (a, b) = bytes.split_at(cut);
        let split = drive([a, b]).expect("valid protocol");
        assert_eq!(split.out, whole.out, "cut at byte {cut}");
        assert_eq!(split.requests, whole.requests, "cut at byte {cut}");
        assert!(split.closed);
    }
    let one_by_one = drive(bytes.chunks(1)).expect("valid protocol");
    assert_eq!(one_by_one.out, whole.out);
}

#[test]
fn several_requests_on_one_kept_connection() {
    let mut bytes = Vec::new();
    for (id, query) in [(1, "first"), (1, "second"), (9, "third")] {
        bytes.extend(env_request(id, true, query));
    }
    let outcome = drive_whole(&bytes);
    assert!(!outcome.closed, "every request asked to keep the connection");
    let done = answers(&outcome.out);
    assert_eq!(done.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [1, 1, 9]);
    for ((_, answer), query) in done.iter().zip(["first", "second", "third"]) {
        assert_eq!(answer.end, Some((0, REQUEST_COMPLETE)));
        assert!(answer.stdout_ended);
        let (head, body) = answer.head_and_body();
        assert_eq!(head, "Status: 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1024");
        assert_eq!(body.len(), PAGE_BYTES);
        let row = format!("<th>QUERY_STRING</th><td>{query}</td>");
        assert!(String::from_utf8_lossy(body).contains(&row), "{query}");
    }

    // Without FCGI_KEEP_CONN the connection closes after its request, and
    // anything sent after it is not read.
    let mut bytes = env_request(1, false, "x");
    bytes.extend(env_request(2, true, "y"));
    let outcome = drive_whole(&bytes);
    assert!(outcome.closed);
    assert_eq!(outcome.requests.len(), 1);
}

#[test]
fn the_page_is_crest_envs_page_for_the_same_variables() {
    let params = env_params("x=1&y=<2>");
    let list: Vec<(&str, &str)> = params.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let outcome = drive_whole(&request(5, false, &list, b"ignored body"));
    let done = answers(&outcome.out);
    let (_, body) = done[0].1.head_and_body();
    let expected = env_page::render_vars(|name| params.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_bytes()));
    assert_eq!(body, expected);
    let text = String::from_utf8_lossy(body);
    assert!(text.contains("<th>REQUEST_METHOD</th><td>GET</td>"));
    assert!(text.contains("<th>QUERY_STRING</th><td>x=1&amp;y=&lt;2&gt;</td>"));
}

#[test]
fn crest_bytes_body_in_records_of_at_most_64k() {
    let size = 200_001;
    let query = format!("size={size}");
    let outcome =
        drive_whole(&request(4, false, &[("SCRIPT_NAME", "/cgi/crest-bytes"), ("QUERY_STRING", &query)], b""));
    assert!(parse_records(&outcome.out).iter().all(|r| r.2.len() <= 65535));
    let done = answers(&outcome.out);
    let (head, body) = done[0].1.head_and_body();
    assert_eq!(head, format!("Status: 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {size}"));
    let mut expected = vec![0; size];
    Stream::new(size as u64).fill(&mut expected);
    assert_eq!(body, expected);

    for (query, status) in [("size=nope", "400 Bad Request"), ("size=0", "200 OK")] {
        let outcome =
            drive_whole(&request(1, false, &[("REQUEST_URI", "/x/crest-bytes"), ("QUERY_STRING", query)], b""));
        let (head, _) = answers(&outcome.out)[0].1.head_and_body();
        assert!(head.starts_with(&format!("Status: {status}\r\n")), "{query}: {head}");
    }
}

#[test]
fn other_paths_are_404() {
    let outcome = drive_whole(&request(1, false, &[("SCRIPT_NAME", "/index.php")], b""));
    let done = answers(&outcome.out);
    let (head, body) = done[0].1.head_and_body();
    assert!(head.starts_with("Status: 404 Not Found\r\nContent-Type: text/plain\r\n"));
    assert!(head.ends_with(&format!("Content-Length: {}", body.len())));
    assert_eq!(done[0].1.end, Some((0, REQUEST_COMPLETE)));
}

#[test]
fn get_values_answers_what_was_asked_once() {
    let mut query = pair(b"FCGI_MAX_CONNS", b"");
    query.extend(pair(b"FCGI_UNHEARD_OF", b""));
    query.extend(pair(b"FCGI_MPXS_CONNS", b""));
    query.extend(pair(b"FCGI_MAX_REQS", b""));
    query.extend(pair(b"FCGI_MPXS_CONNS", b""));
    let outcome = drive_whole(&record(GET_VALUES, 0, &query, 0));
    let records = parse_records(&outcome.out);
    assert_eq!(records.len(), 1);
    let (kind, id, content) = &records[0];
    assert_eq!((*kind, *id), (GET_VALUES_RESULT, 0));
    assert_eq!(
        parse_pairs(content),
        [
            ("FCGI_MAX_CONNS".to_owned(), "1000".to_owned()),
            ("FCGI_MPXS_CONNS".to_owned(), "0".to_owned()),
            ("FCGI_MAX_REQS".to_owned(), "1000".to_owned()),
        ]
    );
    assert!(!outcome.closed);
}

#[test]
fn unknown_types_get_unknown_type_and_the_connection_goes_on() {
    let mut bytes = record(0, 0, &[], 0);
    bytes.extend(record(12, 0, b"future", 2));
    bytes.extend(record(200, 7, &[], 0));
    // Types a responder does not expect are ignored, not rejected.
    bytes.extend(record(DATA, 1, b"d", 0));
    bytes.extend(record(STDOUT, 1, b"o", 0));
    bytes.extend(env_request(1, false, ""));
    let outcome = drive_whole(&bytes);
    let records = parse_records(&outcome.out);
    let unknown: Vec<_> = records.iter().filter(|r| r.0 == UNKNOWN_TYPE).map(|r| (r.1, r.2.clone())).collect();
    assert_eq!(
        unknown,
        [(0, vec![0, 0, 0, 0, 0, 0, 0, 0]), (0, vec![12, 0, 0, 0, 0, 0, 0, 0]), (0, vec![200, 0, 0, 0, 0, 0, 0, 0]),]
    );
    assert_eq!(outcome.requests.len(), 1);
}

#[test]
fn abort_ends_the_request_and_honours_keep_conn() {
    // Kept connection: the aborted request ends, the next one is served.
    let mut bytes = begin(1, RESPONDER, KEEP_CONN);
    bytes.extend(record(PARAMS, 1, &pair(b"SCRIPT_NAME", b"/crest-env"), 0));
    bytes.extend(record(ABORT_REQUEST, 2, &[], 0)); // not in flight: ignored
    bytes.extend(record(ABORT_REQUEST, 1, &[], 0));
    bytes.extend(record(STDIN, 1, &[], 0)); // after the abort: ignored
    bytes.extend(env_request(2, true, ""));
    let outcome = drive_whole(&bytes);
    assert!(!outcome.closed);
    let done = answers(&outcome.out);
    assert_eq!(done.len(), 2);
    assert_eq!(done[0].0, 1);
    assert_eq!(done[0].1.end, Some((0, REQUEST_COMPLETE)));
    assert!(done[0].1.stdout.is_empty());
    assert_eq!(outcome.requests.iter().map(|r| r.id).collect::<Vec<_>>(), [2]);

    // Without FCGI_KEEP_CONN the abort closes the connection.
    let mut bytes = begin(1, RESPONDER, 0);
    bytes.extend(record(ABORT_REQUEST, 1, &[], 0));
    let outcome = drive_whole(&bytes);
    assert!(outcome.closed);
    assert_eq!(answers(&outcome.out)[0].1.end, Some((0, REQUEST_COMPLETE)));
}

#[test]
fn unknown_roles_are_refused() {
    let mut bytes = begin(1, AUTHORIZER, KEEP_CONN);
    bytes.extend(stream(PARAMS, 1, &pair(b"SCRIPT_NAME", b"/crest-env"), 100));
    bytes.extend(stream(STDIN, 1, b"", 100));
    bytes.extend(begin(2, 3, KEEP_CONN)); // FILTER
    bytes.extend(env_request(3, true, ""));
    let outcome = drive_whole(&bytes);
    let done = answers(&outcome.out);
    assert_eq!((done[0].0, done[0].1.end), (1, Some((0, UNKNOWN_ROLE))));
    assert!(done[0].1.stdout.is_empty() && !done[0].1.stdout_ended);
    assert_eq!((done[1].0, done[1].1.end), (2, Some((0, UNKNOWN_ROLE))));
    assert_eq!(done[2].1.end, Some((0, REQUEST_COMPLETE)));
    assert_eq!(outcome.requests.iter().map(|r| r.id).collect::<Vec<_>>(), [3]);

    let outcome = drive_whole(&begin(1, AUTHORIZER, 0));
    assert!(outcome.closed, "no FCGI_KEEP_CONN: close after refusing");
}

#[test]
fn a_second_request_in_flight_gets_cant_mpx_conn() {
    let mut bytes = begin(1, RESPONDER, KEEP_CONN);
    bytes.extend(begin(2, RESPONDER, KEEP_CONN));
    bytes.extend(stream(PARAMS, 2, &pair(b"SCRIPT_NAME", b"/crest-env"), 100));
    bytes.extend(stream(PARAMS, 1, &pair(b"SCRIPT_NAME", b"/crest-env"), 100));
    bytes.extend(stream(STDIN, 1, b"", 100));
    let outcome = drive_whole(&bytes);
    let done = answers(&outcome.out);
    assert_eq!((done[0].0, done[0].1.end), (2, Some((0, CANT_MPX_CONN))));
    assert_eq!((done[1].0, done[1].1.end), (1, Some((0, REQUEST_COMPLETE))));
}

#[test]
fn protocol_errors_end_the_connection() {
    let bad_begin = record(BEGIN_REQUEST, 1, &[0, 1, 0], 0);
    assert_eq!(drive([&bad_begin[..]]).map(|_| ()), Err(ProtocolError::BeginRequestLength(3)));
    let null_id = begin(0, RESPONDER, 0);
    assert_eq!(drive([&null_id[..]]).map(|_| ()), Err(ProtocolError::NullRequestId));
    let mut truncated = begin(1, RESPONDER, 0);
    truncated.extend(stream(PARAMS, 1, &[10, 0, b'x'], 100));
    truncated.extend(stream(STDIN, 1, b"", 100));
    assert_eq!(drive([&truncated[..]]).map(|_| ()), Err(ProtocolError::PairTruncated));
    let mut huge = begin(1, RESPONDER, 0);
    let chunk = vec![0u8; 65535];
    for _ in 0..=(MAX_PARAMS_BYTES / chunk.len()) {
        huge.extend(record(PARAMS, 1, &chunk, 0));
    }
    assert_eq!(drive([&huge[..]]).map(|_| ()), Err(ProtocolError::ParamsTooLarge { limit: MAX_PARAMS_BYTES }));
}

#[test]
fn params_lookup_by_name() {
    let params = Params::new(pairs(&[("A", "1"), ("A", "2")])).expect("well-formed");
    assert_eq!(params.get("A"), Some(&b"2"[..]));
}
