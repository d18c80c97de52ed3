//! Scripted sessions end to end: against the built-in target's in-process
//! page (which echoes the query string), a step extracts a value that the
//! next step sends back and whose response shows it, each virtual user with
//! its own CSV row, and a step whose extraction misses fails as a validation
//! error in its own class; against a fixture, a POST body from the CSV, a
//! JSON pointer into the response and the cookie jar; and the gate's
//! refusals, one line each.

use crest_engine::RunConfig;
use serde_json::json;

use crate::support::{logging_target, run, Fixture};

fn config(value: serde_json::Value) -> RunConfig {
    serde_json::from_value(value).expect("a valid RunConfig")
}

#[test]
fn a_value_extracted_from_one_step_is_sent_by_the_next_and_a_miss_fails_its_step() {
    let (server, _dir, log) = logging_target(&[]);
    let url = server.urls()[0].clone();
    let (report, _) = run(config(json!({
        "url": url, "connections": 2, "max_requests": 18, "timeout_s": 5.0,
        "script": {
            "variables": ["user", "pass"], "users": [["alice", "a1"], ["bob", "b2"]],
            "steps": [
                {"name": "login", "path": "/dyn/env?user={{user}}&token=t{{pass}}",
                 "extract": [{"name": "token", "regex": "token=(t[a-z0-9]+)"}]},
                {"name": "use", "path": "/dyn/env?again={{token}}", "expect_status": 200,
                 "extract": [{"name": "again", "regex": "again=(t[a-z0-9]+)"}]},
                {"name": "miss", "path": "/dyn/env?x={{again}}",
                 "extract": [{"name": "nothing", "json": "/id"}]}
            ]
        }
    })));
    server.stop();
    let served = std::fs::read_to_string(&log).unwrap();
    // Each user sent its own row's token back, as the previous response showed it.
    assert!(served.contains("/dyn/env?again=ta1 "), "{served}");
    assert!(served.contains("/dyn/env?again=tb2 "), "{served}");
    assert!(served.contains("/dyn/env?x=ta1 ") && served.contains("/dyn/env?x=tb2 "), "{served}");
    assert!(!served.contains("again= "), "a step was sent without its value: {served}");
    // 18 requests over two users, each playing login, use, miss in order (the quota may cut a pass short).
    let class = |name: &str| &report.classes[name];
    let (login, used, missed) = (class("login").requests, class("use").requests, class("miss").errors);
    assert_eq!(login + used + missed, 18, "{:?}", report.classes);
    assert!(login >= used && used >= missed && login - missed <= 2 && missed >= 4, "{:?}", report.classes);
    assert_eq!((class("login").errors, class("use").errors, class("miss").requests), (0, 0, 0));
    assert_eq!(report.errors.get("validation"), Some(&missed));
    assert!(report.error_notes.iter().any(|n| n.contains("extract nothing: no match")), "{:?}", report.error_notes);
}

#[test]
fn a_login_post_a_json_pointer_and_the_cookie_jar() {
    let fixture = Fixture::start(|mut conn| {
        let mut n = 0;
        while let Some(request) = conn.read_request() {
            n += 1;
            let text = String::from_utf8_lossy(&request).into_owned();
            let response = if text.starts_with("POST /login ") {
                let body = format!(r#"{{"data": {{"id": {}, "name": "x"}}}}"#, 40 + conn.index);
                format!(
                    "HTTP/1.1 200 OK\r\nSet-Cookie: sid=s{}-{n}; Path=/; HttpOnly\r\nSet-Cookie: lang=en\r\n\
                     Content-Length: {}\r\n\r\n{body}",
                    conn.index,
                    body.len()
                )
            } else if text.contains("\r\nCookie: sid=s") {
                "HTTP/1.1 200 OK\r\nSet-Cookie: lang=; Max-Age=0\r\nContent-Length: 2\r\n\r\nok".to_string()
            } else {
                "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n".to_string()
            };
            if !conn.send(response.as_bytes()) {
                return;
            }
        }
    });
    let (report, _) = run(config(json!({
        "url": fixture.url("/"), "connections": 1, "max_requests": 4, "timeout_s": 5.0,
        "script": {
            "variables": ["user"], "users": [["alice"]],
            "steps": [
                {"name": "login", "method": "POST", "path": "/login", "body": "u={{user}}",
                 "headers": [["Content-Type", "application/x-www-form-urlencoded"]],
                 "extract": [{"name": "id", "json": "/data/id"}]},
                {"name": "me", "path": "/me/{{id}}", "expect_status": 200}
            ]
        }
    })));
    let log: Vec<String> =
        fixture.log.lock().unwrap().iter().map(|r| String::from_utf8_lossy(r).into_owned()).collect();
    assert_eq!(log.len(), 4, "{log:?}");
    assert!(log[0].starts_with("POST /login HTTP/1.1\r\n") && log[0].ends_with("\r\n\r\nu=alice"), "{}", log[0]);
    assert!(log[0].contains("Content-Length: 7\r\n") && !log[0].contains("Cookie:"), "{}", log[0]);
    assert!(log[1].starts_with("GET /me/40 HTTP/1.1\r\n"), "{}", log[1]);
    assert!(log[1].contains("\r\nCookie: sid=s0-1; lang=en\r\n"), "{}", log[1]);
    // The script starts again: a new pass has an empty jar.
    assert!(log[2].starts_with("POST /login ") && !log[2].contains("Cookie:"), "{}", log[2]);
    assert!(log[3].contains("\r\nCookie: sid=s0-3; lang=en\r\n"), "{}", log[3]);
    assert_eq!(report.classes["login"].requests, 2);
    assert_eq!(report.classes["me"].requests, 2);
    assert!(report.errors.values().all(|&n| n == 0), "{:?}", report.error_notes);
}

#[test]
fn what_a_script_cannot_be_is_one_line_each() {
    let script = json!({"steps": [{"name": "a", "path": "/"}]});
    let refused = |extra: serde_json::Value| {
        let mut value = json!({"url": "http://127.0.0.1:1/", "max_requests": 1, "script": script});
        for (k, v) in extra.as_object().unwrap() {
            value[k] = v.clone();
        }
        let err = crest_engine::validate(&config(value)).expect_err("refused");
        let text = err.to_string();
        assert!(!text.contains('\n'), "{text}");
        text
    };
    let cases = [
        (json!({"requests": [{"url": "http://127.0.0.1:1/", "weight": 1.0}]}), "script writes its own requests"),
        (json!({"http_version": "2"}), "script is sent over HTTP/1.x"),
        (json!({"pipeline": 2}), "pipeline"),
        (json!({"selection": "once"}), "selection"),
        (
            json!({"script": {"steps": [{"name": "a", "path": "/{{who}}"}]}}),
            "step 1 (a) path: 'who' is no CSV column and no value an earlier step extracts",
        ),
        (
            json!({"script": {"steps": [{"name": "a", "path": "/", "extract": [{"name": "t", "regex": "(x"}]}]}}),
            "step 1 (a) extract t: bad regular expression",
        ),
        (
            json!({"script": {"steps": [{"name": "a", "path": "/", "extract": [{"name": "t", "json": "x"}]}]}}),
            "step 1 (a) extract t: bad JSON pointer",
        ),
    ];
    for (extra, want) in cases {
        let text = refused(extra.clone());
        assert!(text.contains(want), "{extra}: {text}");
    }
}
