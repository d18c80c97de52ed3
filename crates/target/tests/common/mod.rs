//! Test helpers: a docroot fixture with a running server, and a tiny
//! blocking HTTP/1.x client over raw `TcpStream` (loopback only), so tests
//! see exactly the bytes the server sends.

#![allow(dead_code)]

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use crest_target::{ServeConfig, Server};

pub const HELLO: &str = "hello, crest\n";
pub const IO_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub server: Option<Server>,
    pub addr: SocketAddr,
}

impl Fixture {
    /// A docroot with a few files and CGI scripts, served on a free port.
    pub fn start() -> Fixture {
        Fixture::start_with(|_| {})
    }

    pub fn start_with(tweak: impl FnOnce(&mut ServeConfig)) -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        populate(dir.path());
        let mut config = ServeConfig { docroot: dir.path().to_owned(), threads: 2, ..ServeConfig::default() };
        tweak(&mut config);
        let server = Server::start(config).expect("server starts");
        let addr = server.local_addrs()[0];
        Fixture { dir, server: Some(server), addr }
    }

    pub fn get(&self, target: &str) -> Reply {
        request(self.addr, format!("GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").as_bytes())
    }
}

fn populate(root: &Path) {
    fs::write(root.join("hello.txt"), HELLO).unwrap();
    fs::write(root.join("index.html"), "<h1>root index</h1>\n").unwrap();
    fs::create_dir(root.join("sub")).unwrap();
    fs::write(root.join("sub/index.html"), "<h1>sub index</h1>\n").unwrap();
    fs::create_dir(root.join("empty")).unwrap();
    fs::create_dir(root.join("cgi-bin")).unwrap();
    script(
        root,
        "echo.sh",
        "printf 'Content-Type: text/plain\\n\\n'\necho \"$QUERY_STRING $REQUEST_METHOD $GATEWAY_INTERFACE\"\n",
    );
    script(root, "env.sh", "printf 'Content-Type: text/plain\\r\\n\\r\\n'\nenv\n");
    script(root, "fail.sh", "exit 1\n");
    script(root, "garbage.sh", "echo 'this is not a CGI response'\n");
    script(root, "cat.sh", "printf 'Content-Type: application/octet-stream\\nStatus: 201 Created\\nX-Len: %s\\n\\n' \"$CONTENT_LENGTH\"\ncat\n");
    script(root, "redirect.sh", "printf 'Location: /hello.txt\\n\\n'\n");
    script(root, "sleepy.sh", "sleep 30 &\necho $! > sleepy.pid\nwait\n");
    fs::write(root.join("cgi-bin/noexec.sh"), "#!/bin/sh\necho hi\n").unwrap();
}

fn script(root: &Path, name: &str, body: &str) {
    let path = root.join("cgi-bin").join(name);
    fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
}

#[derive(Debug)]
pub struct Reply {
    pub version: String,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

pub fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT).expect("connect");
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    stream.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
    stream
}

/// Sends one raw request on a fresh connection and reads one response.
pub fn request(addr: SocketAddr, raw: &[u8]) -> Reply {
    let mut stream = connect(addr);
    stream.write_all(raw).unwrap();
    let head = raw.starts_with(b"HEAD ");
    read_reply(&mut BufReader::new(stream), head)
}

/// Reads one response: head, then a Content-Length body (none for HEAD),
/// or everything up to EOF when no length is given.
pub fn read_reply<R: Read>(reader: &mut BufReader<R>, head: bool) -> Reply {
    let mut status_line = String::new();
    reader.read_line(&mut status_line).expect("status line");
    let mut parts = status_line.trim_end().splitn(3, ' ');
    let version = parts.next().unwrap_or("").to_owned();
    let status = parts.next().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header line");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').expect("header colon");
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let mut reply = Reply { version, status, headers, body: Vec::new() };
    let length = reply.header("content-length").map(|v| v.parse::<usize>().expect("numeric length"));
    if head {
        return reply;
    }
    match length {
        Some(n) => {
            reply.body.resize(n, 0);
            reader.read_exact(&mut reply.body).expect("body");
        }
        None => {
            reader.read_to_end(&mut reply.body).expect("body to eof");
        }
    }
    reply
}

/// True if the peer closes the connection (EOF) within the I/O timeout.
pub fn closes<R: Read>(reader: &mut BufReader<R>) -> bool {
    let mut rest = Vec::new();
    reader.read_to_end(&mut rest).is_ok() && rest.is_empty()
}
