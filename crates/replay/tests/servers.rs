//! Logs written by real servers (Debian's packages), each sent the same requests
//! with curl and a raw socket: a file, a quote in the path and in the agent, a
//! 404 with a query, a POST, a HEAD, a TLS hello to the plain port, an
//! absolute-form target and a space in the path. Each reads with `auto`; the
//! garbage requests are skipped and counted, never an error.

use crest_replay::{Options, Table};

/// nginx 1.22.1, log_format combined.
const NGINX_COMBINED: &str = r#"127.0.0.1 - - [27/Nov/2026:21:16:58 +0000] "GET /index.html HTTP/1.1" 200 6 "-" "curl/7.88.1"
127.0.0.1 - - [27/Nov/2026:21:17:03 +0000] "GET /big.bin HTTP/1.1" 200 20000 "http://ref.example/" "Mozilla/5.0 \x22quoted\x22 \x5C agent"
127.0.0.1 - - [27/Nov/2026:21:17:03 +0000] "GET /missing?q=1&r=%22x%22 HTTP/1.1" 404 153 "-" "curl/7.88.1"
127.0.0.1 - - [27/Nov/2026:21:17:03 +0000] "GET /a\x22b HTTP/1.1" 404 153 "-" "curl/7.88.1"
127.0.0.1 - - [27/Nov/2026:21:17:03 +0000] "POST /index.html HTTP/1.1" 405 157 "-" "curl/7.88.1"
127.0.0.1 - - [27/Nov/2026:21:17:03 +0000] "HEAD /index.html HTTP/1.1" 200 0 "-" "curl/7.88.1"
127.0.0.1 - - [27/Nov/2026:21:17:08 +0000] "\x16\x03\x01\x00\xA5\x01\x00\x00\xA1\x03\x03garbage" 400 157 "-" "-"
127.0.0.1 - - [27/Nov/2026:21:17:08 +0000] "GET http://127.0.0.1/index.html HTTP/1.1" 200 6 "-" "-"
127.0.0.1 - - [27/Nov/2026:21:17:08 +0000] "GET /sp ace HTTP/1.1" 400 157 "-" "-"
"#;

/// nginx 1.22.1, crest's log_format (nginx.conf.j2).
const NGINX_CREST: &str = r#"127.0.0.1 [1795814218.074] "GET /index.html HTTP/1.1" 200 240 0.000
127.0.0.1 [1795814223.785] "GET /big.bin HTTP/1.1" 200 20242 0.000
127.0.0.1 [1795814223.797] "GET /missing?q=1&r=%22x%22 HTTP/1.1" 404 308 0.000
127.0.0.1 [1795814223.817] "GET /a\x22b HTTP/1.1" 404 308 0.000
127.0.0.1 [1795814223.830] "POST /index.html HTTP/1.1" 405 314 0.000
127.0.0.1 [1795814223.841] "HEAD /index.html HTTP/1.1" 200 234 0.000
127.0.0.1 [1795814228.922] "\x16\x03\x01\x00\xA5\x01\x00\x00\xA1\x03\x03garbage" 400 309 0.001
127.0.0.1 [1795814228.922] "GET http://127.0.0.1/index.html HTTP/1.1" 200 235 0.000
127.0.0.1 [1795814228.922] "GET /sp ace HTTP/1.1" 400 309 0.000
"#;

/// Apache 2.4.71, the combined LogFormat.
const APACHE_COMBINED: &str = r#"127.0.0.1 - - [27/Nov/2026:21:17:01 +0000] "GET /index.html HTTP/1.1" 200 6 "-" "curl/7.88.1"
127.0.0.1 - - [27/Nov/2026:21:17:04 +0000] "GET /big.bin HTTP/1.1" 200 20000 "http://ref.example/" "Mozilla/5.0 \"quoted\" \\ agent"
127.0.0.1 - - [27/Nov/2026:21:17:04 +0000] "GET /missing?q=1&r=%22x%22 HTTP/1.1" 404 236 "-" "curl/7.88.1"
127.0.0.1 - - [27/Nov/2026:21:17:04 +0000] "GET /a\"b HTTP/1.1" 404 236 "-" "curl/7.88.1"
127.0.0.1 - - [27/Nov/2026:21:17:04 +0000] "POST /index.html HTTP/1.1" 200 6 "-" "curl/7.88.1"
127.0.0.1 - - [27/Nov/2026:21:17:04 +0000] "HEAD /index.html HTTP/1.1" 200 - "-" "curl/7.88.1"
127.0.0.1 - - [27/Nov/2026:21:17:08 +0000] "\x16\x03\x01" 400 266 "-" "-"
127.0.0.1 - - [27/Nov/2026:21:17:08 +0000] "GET http://127.0.0.1/index.html HTTP/1.1" 200 6 "-" "-"
127.0.0.1 - - [27/Nov/2026:21:17:08 +0000] "GET /sp ace" 400 266 "-" "-"
"#;

/// Apache 2.4.71, crest's LogFormat (apache.py).
const APACHE_CREST: &str = r#"127.0.0.1 [1795814221466] "GET /index.html HTTP/1.1" 200 6 1128
127.0.0.1 [1795814224048] "GET /big.bin HTTP/1.1" 200 20000 308
127.0.0.1 [1795814224056] "GET /missing?q=1&r=%22x%22 HTTP/1.1" 404 236 88
127.0.0.1 [1795814224064] "GET /a\"b HTTP/1.1" 404 236 76
127.0.0.1 [1795814224072] "POST /index.html HTTP/1.1" 200 6 222
127.0.0.1 [1795814224089] "HEAD /index.html HTTP/1.1" 200 0 179
127.0.0.1 [1795814228925] "\x16\x03\x01" 400 266 42
127.0.0.1 [1795814228926] "GET http://127.0.0.1/index.html HTTP/1.1" 200 6 138
127.0.0.1 [1795814228926] "GET /sp ace" 400 266 17
"#;

/// H2O 2.2.5, its default access-log format.
const H2O_DEFAULT: &str = r#"127.0.0.1 - - [27/Nov/2026:21:16:58 +0000] "GET /index.html HTTP/1.1" 200 6 "-" "curl/7.88.1"
127.0.0.1 - - [27/Nov/2026:21:17:04 +0000] "GET /big.bin HTTP/1.1" 200 20000 "http://ref.example/" "Mozilla/5.0 \x22quoted\x22 \ agent"
127.0.0.1 - - [27/Nov/2026:21:17:04 +0000] "GET /missing?q=1&r=%22x%22 HTTP/1.1" 404 9 "-" "curl/7.88.1"
127.0.0.1 - - [27/Nov/2026:21:17:04 +0000] "GET /a\x22b HTTP/1.1" 404 9 "-" "curl/7.88.1"
127.0.0.1 - - [27/Nov/2026:21:17:04 +0000] "POST /index.html HTTP/1.1" 405 18 "-" "curl/7.88.1"
127.0.0.1 - - [27/Nov/2026:21:17:04 +0000] "HEAD /index.html HTTP/1.1" 200 0 "-" "curl/7.88.1"
127.0.0.1 - - [27/Nov/2026:21:17:08 +0000] "GET http://127.0.0.1/index.html HTTP/1.1" 404 9 "-" "-"
"#;

/// H2O 2.2.5, crest's format (h2o.conf.j2).
const H2O_CREST: &str = r#"127.0.0.1 [1795814218112] "GET /index.html HTTP/1.1" 200 6
127.0.0.1 [1795814224006] "GET /big.bin HTTP/1.1" 200 20000
127.0.0.1 [1795814224013] "GET /missing?q=1&r=%22x%22 HTTP/1.1" 404 9
127.0.0.1 [1795814224020] "GET /a\x22b HTTP/1.1" 404 9
127.0.0.1 [1795814224028] "POST /index.html HTTP/1.1" 405 18
127.0.0.1 [1795814224036] "HEAD /index.html HTTP/1.1" 200 0
127.0.0.1 [1795814228925] "GET http://127.0.0.1/index.html HTTP/1.1" 404 9
"#;

/// lighttpd 1.4.69, crest's accesslog.format (lighttpd.conf.j2).
const LIGHTTPD_CREST: &str = r#"127.0.0.1 [1795814218102] "GET /index.html HTTP/1.1" 200 6
127.0.0.1 [1795814223955] "GET /big.bin HTTP/1.1" 200 20000
127.0.0.1 [1795814223967] "GET /missing?q=1&r=%22x%22 HTTP/1.1" 404 341
127.0.0.1 [1795814223977] "GET /a\"b HTTP/1.1" 404 341
127.0.0.1 [1795814223987] "POST /index.html HTTP/1.1" 200 6
127.0.0.1 [1795814223995] "HEAD /index.html HTTP/1.1" 200 0
127.0.0.1 [1795814228925] "  " 400 345
127.0.0.1 [1795814228925] "GET /index.html HTTP/1.1" 400 345
127.0.0.1 [1795814228926] "GET /sp ace HTTP/1.1" 404 341
"#;

/// Caddy 2.6.2, format json.
const CADDY: &str = r#"{"level":"info","ts":1795814218.087832,"logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"127.0.0.1","remote_port":"49880","proto":"HTTP/1.1","method":"GET","host":"127.0.0.1:18482","uri":"/index.html","headers":{"User-Agent":["curl/7.88.1"],"Accept":["*/*"]}},"user_id":"","duration":0.003120441,"size":6,"status":200,"resp_headers":{"Server":["Caddy"],"Etag":["\"tp6j476\""],"Content-Type":["text/html; charset=utf-8"],"Last-Modified":["Fri, 27 Nov 2026 21:16:55 GMT"],"Accept-Ranges":["bytes"],"Content-Length":["6"]}}
{"level":"info","ts":1795814223.8799007,"logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"127.0.0.1","remote_port":"39284","proto":"HTTP/1.1","method":"GET","host":"127.0.0.1:18482","uri":"/big.bin","headers":{"User-Agent":["Mozilla/5.0 \"quoted\" \\ agent"],"Accept":["*/*"],"Referer":["http://ref.example/"],"Cookie":[]}},"user_id":"","duration":0.000230523,"size":20000,"status":200,"resp_headers":{"Last-Modified":["Fri, 27 Nov 2026 21:16:55 GMT"],"Accept-Ranges":["bytes"],"Content-Length":["20000"],"Server":["Caddy"],"Etag":["\"tp6j47ffk\""],"Content-Type":[]}}
{"level":"error","ts":1795814223.8931699,"logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"127.0.0.1","remote_port":"39294","proto":"HTTP/1.1","method":"GET","host":"127.0.0.1:18482","uri":"/missing?q=1&r=%22x%22","headers":{"User-Agent":["curl/7.88.1"],"Accept":["*/*"]}},"user_id":"","duration":0.000132376,"size":0,"status":404,"resp_headers":{"Server":["Caddy"]}}
{"level":"error","ts":1795814223.9065728,"logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"127.0.0.1","remote_port":"39298","proto":"HTTP/1.1","method":"GET","host":"127.0.0.1:18482","uri":"/a\"b","headers":{"User-Agent":["curl/7.88.1"],"Accept":["*/*"]}},"user_id":"","duration":0.000065837,"size":0,"status":404,"resp_headers":{"Server":["Caddy"]}}
{"level":"info","ts":1795814223.9266725,"logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"127.0.0.1","remote_port":"39302","proto":"HTTP/1.1","method":"POST","host":"127.0.0.1:18482","uri":"/index.html","headers":{"User-Agent":["curl/7.88.1"],"Accept":["*/*"],"Content-Length":["3"],"Content-Type":["application/x-www-form-urlencoded"]}},"user_id":"","duration":0.000097094,"size":6,"status":200,"resp_headers":{"Server":["Caddy"],"Etag":["\"tp6j476\""],"Content-Type":["text/html; charset=utf-8"],"Last-Modified":["Fri, 27 Nov 2026 21:16:55 GMT"],"Accept-Ranges":["bytes"],"Content-Length":["6"]}}
{"level":"info","ts":1795814223.9381046,"logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"127.0.0.1","remote_port":"39314","proto":"HTTP/1.1","method":"HEAD","host":"127.0.0.1:18482","uri":"/index.html","headers":{"User-Agent":["curl/7.88.1"],"Accept":["*/*"]}},"user_id":"","duration":0.000169972,"size":0,"status":200,"resp_headers":{"Server":["Caddy"],"Etag":["\"tp6j476\""],"Content-Type":["text/html; charset=utf-8"],"Last-Modified":["Fri, 27 Nov 2026 21:16:55 GMT"],"Accept-Ranges":["bytes"],"Content-Length":["6"]}}
"#;

#[test]
fn each_servers_own_log_reads() {
    let cases: &[(&str, &str, usize, u64)] = &[
        (NGINX_COMBINED, "combined", 7, 2),
        (NGINX_CREST, "crest", 7, 2),
        (APACHE_COMBINED, "combined", 7, 2),
        (APACHE_CREST, "crest", 7, 2),
        (H2O_DEFAULT, "combined", 7, 0),
        (H2O_CREST, "crest", 7, 0),
        (LIGHTTPD_CREST, "crest", 7, 2),
        (CADDY, "caddy", 6, 0),
    ];
    for &(log, format, requests, skipped) in cases {
        let table = Table::read(log.as_bytes(), "access.log", &Options::default()).unwrap();
        assert_eq!((table.format.name.as_str(), table.len(), table.skipped), (format, requests, skipped), "{log}");
        let targets: Vec<&str> = table.entries.iter().map(|e| e.target.as_str()).collect();
        assert!(targets.contains(&"/a%22b") && targets.contains(&"/missing?q=1&r=%22x%22"), "{targets:?}");
        let big = table.entries.iter().find(|e| e.target == "/big.bin").unwrap();
        // nginx's crest format logs $bytes_sent (headers too); every other line the body.
        let body = if log == NGINX_CREST { 20242 } else { 20000 };
        assert_eq!((big.status, big.body_bytes), (200, body));
    }
}
