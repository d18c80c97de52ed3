"""Access logs as workloads, without a server: [workload.replay] suites and their refusals, a bare log as a
suite, the site a log makes (plan and files, through `crest fileset from-log`), the mix table, the fan-out's
part of a log, hashing, and bad logs as one line naming the line (exit 2)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from crest.errors import ConfigError
from crest.load.fanout import Share, share_specs
from crest.load.runspec import RunSpec
from crest.replay import CLASSES, LogEntry, LogSummary, scan
from crest.replay.privacy import hash_text
from crest.replay.site import SITE_MANIFEST, load_site, plan_site
from crest.runner.request import RunRequest, check_request
from crest.runner.table import replay_table
from crest.suite import SuiteError, load_file, load_suite, parse_suite
from crest.suite.loader import looks_like_log
from support import run_cli_in_process

# Four seconds of a small site in crest's format (nginx's, as crest's adapter configures it):
# address, [Unix seconds], "request line", status, body bytes, seconds taken.
LOG = """\
127.0.0.1 [1700000000.100] "GET / HTTP/1.1" 200 612 0.001
127.0.0.1 [1700000000.200] "GET /img/logo.png HTTP/1.1" 200 20480 0.001
10.0.0.2 [1700000001.000] "GET /docs/ HTTP/1.1" 200 3000 0.002
10.0.0.2 [1700000001.500] "GET /docs/a%20b.html HTTP/1.1" 200 150000 0.003
10.0.0.2 [1700000002.000] "GET /search?q=web HTTP/1.1" 200 5120 0.010
10.0.0.2 [1700000002.100] "POST /login HTTP/1.1" 302 0 0.004
10.0.0.3 [1700000003.000] "GET /missing.html HTTP/1.1" 404 153 0.000
10.0.0.3 [1700000004.000] "GET /img/logo.png HTTP/1.1" 200 20480 0.001
"""


def write_log(tmp_path: Path, text: str = LOG, name: str = "access.log") -> Path:
    log = tmp_path / name
    log.write_text(text)
    return log


def suite_text(replay: str, extra: str = "") -> str:
    return (f'name = "r"\ndescription = "d"\nsource = "s"\n[workload]\n{extra}[workload.replay]\n{replay}\n'
            '[ladder]\nclients = [4]\n[timing]\nlength_s = 10\n')  # fmt: skip


def summary(*entries: LogEntry) -> LogSummary:
    return LogSummary(
        path="/logs/access.log", format="combined", lines=len(entries), requests=sum(e.count for e in entries),
        skipped=0, distinct=len(entries), sessions=1, first_unix_s=0.0, duration_s=4.0, peak_concurrency=None,
        class_requests=(0,) * len(CLASSES), classes=CLASSES, table_bytes=0, entries=entries,
    )  # fmt: skip


def entry(method: str, target: str, status: int, size: int, cls: str, count: int = 1) -> LogEntry:
    return LogEntry(method, target, status, size, count, CLASSES.index(cls))


# -- suites


def test_a_replay_suite_resolves_its_log_and_site_against_its_own_directory(tmp_path: Path) -> None:
    write_log(tmp_path)
    (tmp_path / "suite.toml").write_text(suite_text('log = "access.log"\nsite = "site"\nspeed = 10'))
    suite = load_file(tmp_path / "suite.toml")
    replay = suite.workload.replay
    assert replay is not None
    assert (replay.log, replay.site, replay.speed, replay.mode) == (
        str(tmp_path / "access.log"),
        str(tmp_path / "site"),
        10.0,
        "timed",
    )
    # A timed replay lasts as long as its log: no profile cuts it short.
    assert suite.mixes("quick")[0].timing.length_s == 10
    assert suite.workload.classes == []


def test_a_missing_log_is_one_line_before_anything_starts(tmp_path: Path) -> None:
    (tmp_path / "suite.toml").write_text(suite_text('log = "gone.log"'))
    with pytest.raises(SuiteError) as caught:
        load_file(tmp_path / "suite.toml")
    assert str(caught.value) == (f"{tmp_path / 'suite.toml'}: workload.replay.log: no file {tmp_path / 'gone.log'}:"
                                 " give the path of an access log (relative to the suite file)")  # fmt: skip


@pytest.mark.parametrize(
    ("workload", "replay", "fragment"),
    [
        ({"classes": [{"name": "static", "kind": "static", "weight": 1}], "fileset": "webbench"}, {},
         "workload.classes: a replay workload's classes are the log's"),
        ({"fileset": "webbench"}, {}, "workload.fileset: must be omitted: a replay workload requests the log's paths"),
        ({"selection": "once"}, {}, "workload.selection: must be omitted"),
        ({}, {"mode": "replay"}, "workload.replay.mode"),
        ({}, {"speed": 0}, "workload.replay.speed"),
        ({}, {"session_key": {"header": "x"}}, "workload.replay.session_key"),
        ({"http_version": "1.1", "streams": 4}, {}, "workload.streams: needs HTTP/2 or HTTP/3"),
    ],
)  # fmt: skip
def test_what_a_replay_workload_cannot_have(
    workload: dict[str, object], replay: dict[str, object], fragment: str
) -> None:
    data = {"name": "r", "description": "d", "source": "s", "ladder": {"clients": [1]}, "timing": {"length_s": 4},
            "workload": {**workload, "replay": {"log": "/logs/access.log", **replay}}}  # fmt: skip
    with pytest.raises(SuiteError) as caught:
        parse_suite(data, "r.toml")
    assert fragment in str(caught.value)


def test_a_workload_needs_classes_or_a_log() -> None:
    data = {"name": "r", "description": "d", "source": "s", "ladder": {"clients": [1]}, "timing": {"length_s": 4},
            "workload": {}}  # fmt: skip
    with pytest.raises(SuiteError, match=r"workload\.classes: must list at least 1 request class \(or give a"):
        parse_suite(data, "r.toml")


def test_a_timed_replay_takes_no_warmup_and_no_sweep() -> None:
    base = {"name": "r", "description": "d", "source": "s", "timing": {"length_s": 4},
            "workload": {"replay": {"log": "/logs/access.log"}}}  # fmt: skip
    with pytest.raises(SuiteError, match=r"ladder\.warmup: a timed replay sends the log as logged"):
        parse_suite({**base, "ladder": {"clients": [1], "warmup": "first"}})
    with pytest.raises(SuiteError, match=r"ladder\.sizes_bytes: a replay's response sizes are the log's"):
        parse_suite({**base, "ladder": {"clients": [1], "sizes_bytes": [1024]}})
    mix = {**base, "workload": {"replay": {"log": "/logs/access.log", "mode": "mix"}}}
    assert parse_suite({**mix, "ladder": {"clients": [1], "warmup": "first"}}).ladder.warmup == "first"


def test_a_replay_goes_to_one_target_not_a_role_map_and_serves_no_fileset() -> None:
    suite = parse_suite({"name": "r", "description": "d", "source": "s", "ladder": {"clients": [1]},
                         "timing": {"length_s": 4}, "workload": {"replay": {"log": "/logs/access.log"}}})  # fmt: skip
    request = RunRequest(suite=suite, target=None, server="static=nginx,dynamic=apache-event")
    with pytest.raises(ConfigError, match="replays an access log, whose requests go to one target"):
        check_request(request, suite.mixes())
    fileset = RunRequest(suite=suite, target=None, server="nginx", fileset_dir=Path("/srv/www"))
    with pytest.raises(ConfigError, match="the target serves the log's site, not a fileset: drop --fileset"):
        check_request(fileset, suite.mixes())


def test_a_log_is_told_from_a_suite_file(tmp_path: Path) -> None:
    log = write_log(tmp_path)
    toml = tmp_path / "suite"
    toml.write_text(suite_text('log = "access.log"'))
    assert looks_like_log(str(log))
    assert not looks_like_log(str(toml))  # no .toml, but TOML
    assert not looks_like_log(str(tmp_path / "x.toml"))
    assert not looks_like_log(str(tmp_path / "nothing-here"))


# -- the mix table and the fan-out


def test_a_logs_mix_weights_each_request_by_its_count_with_its_method_and_status() -> None:
    log = summary(
        entry("GET", "/a.html", 200, 100, "static-1k", count=3),
        entry("POST", "/login", 302, 0, "dynamic"),
        entry("GET", "/gone", 404, 153, "client-error"),
        entry("GET", "/cached.css", 304, 0, "redirect"),
        entry("GET", "/old", 301, 0, "redirect"),
        entry("GET", "http://example.org/proxied?x=1", 200, 10, "dynamic"),
    )
    plain = replay_table(log, "http://127.0.0.1:8080/", None)
    assert plain.classes == CLASSES
    assert plain.requests == (
        {"weight": 3 / 8, "class": 0, "url": "http://127.0.0.1:8080/a.html", "method": "GET", "expect_status": 200},
        {"weight": 1 / 8, "class": 4, "url": "http://127.0.0.1:8080/login", "method": "POST", "expect_status": 302},
        {"weight": 1 / 8, "class": 6, "url": "http://127.0.0.1:8080/gone", "method": "GET", "expect_status": 404},
        {"weight": 1 / 8, "class": 5, "url": "http://127.0.0.1:8080/cached.css", "method": "GET"},
        {"weight": 1 / 8, "class": 5, "url": "http://127.0.0.1:8080/old", "method": "GET", "expect_status": 301},
        {"weight": 1 / 8, "class": 4, "url": "http://127.0.0.1:8080/proxied?x=1", "method": "GET",
         "expect_status": 200},
    )  # fmt: skip
    # On a site from the log: dynamic requests go to crest's dynamic page, static 200s have their size.
    site = replay_table(log, "http://127.0.0.1:8080", "http://127.0.0.1:8080/cgi-bin/crest-bytes")
    assert site.requests[0]["expect_body_bytes"] == 100
    assert site.requests[2]["expect_status"] == 404  # not on the site either
    # A site has no redirects: crest's dynamic page answers them too.
    assert site.requests[4]["url"] == "http://127.0.0.1:8080/cgi-bin/crest-bytes?size=0"
    assert site.requests[1] == {"weight": 1 / 8, "class": 4, "expect_status": 200, "expect_body_bytes": 0,
                                "url": "http://127.0.0.1:8080/cgi-bin/crest-bytes?size=0"}  # fmt: skip


def test_each_share_of_a_fan_out_takes_its_residue_of_the_log_also_when_split_again() -> None:
    spec = RunSpec(url="http://127.0.0.1:1", connections=6, replay={"log": "/l", "mode": "timed"})
    shares = [Share(0, 0, 3), Share(1, 3, 3)]
    parts = [s.replay["part"] for s in share_specs(spec, shares, "load nodes", "fewer --nodes") if s.replay]
    assert parts == [[0, 2], [1, 2]]
    # Node 1's share over two subnets: requests i with i mod 2 = 1 split into i mod 4 = 1 and i mod 4 = 3.
    node = share_specs(spec, shares, "load nodes", "fewer --nodes")[1]
    again = share_specs(node, [Share(0, 0, 2), Share(1, 2, 1)], "subnets", "fewer subnets")
    assert [s.replay["part"] for s in again if s.replay] == [[1, 4], [3, 4]]


# -- the site of a log


def test_a_site_has_every_logged_200_at_its_path_with_its_size_and_lists_the_rest() -> None:
    site = plan_site(summary(
        entry("GET", "/", 200, 612, "static-1k"),
        entry("GET", "/docs", 200, 10, "static-1k"),  # also a directory below: skipped
        entry("GET", "/docs/", 200, 3000, "static-10k"),
        entry("HEAD", "/docs/a%20b.html", 200, 0, "static-1k"),
        entry("GET", "/docs/a%20b.html", 200, 150000, "static-big"),
        entry("GET", "/search?q=web", 200, 5120, "dynamic"),
        entry("GET", "/missing.html", 404, 153, "client-error"),
        entry("GET", "/../etc/passwd", 200, 10, "static-1k"),
        entry("GET", "/old", 301, 0, "redirect"),
    ))  # fmt: skip
    assert [(f.url_path, f.file, f.size) for f in site.files] == [
        ("/docs/a%20b.html", "docs/a b.html", 150000),
        ("/docs/", "docs/index.html", 3000),
        ("/", "index.html", 612),
    ]
    assert site.dynamic == ({"method": "GET", "target": "/search?q=web", "size": 5120, "status": 200},)
    assert site.not_found == 1
    assert sorted(s["target"] for s in site.skipped) == ["/../etc/passwd", "/docs", "/old"]


def test_from_log_writes_each_path_with_its_size_and_a_manifest_crest_verifies(tmp_path: Path) -> None:
    log, root = write_log(tmp_path), tmp_path / "site"
    result = run_cli_in_process("fileset", "from-log", str(log), str(root))
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        f"{log}: 4 files, 174.1 KB (174,092 bytes) in {root}; 1 dynamic (crest's dynamic page at replay),"
        f" 1 logged 4xx not written, 1 skipped; manifest {root / SITE_MANIFEST}\n"
    )
    sizes = {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}
    assert sizes.pop(SITE_MANIFEST) > 0
    assert sizes == {"index.html": 612, "img/logo.png": 20480, "docs/index.html": 3000, "docs/a b.html": 150000}
    assert (root / "index.html").read_bytes().startswith(b"crest-file size=612 path=/index.html\n")
    site = load_site(root)
    assert site.dynamic[0]["target"] == "/search?q=web"
    assert run_cli_in_process("fileset", "verify", str(root)).stdout.startswith("ok: 4 files of the site of")
    (root / "img" / "logo.png").write_bytes(b"x")
    damaged = run_cli_in_process("fileset", "verify", str(root))
    assert damaged.returncode == 1
    assert damaged.stdout.splitlines()[0] == "img/logo.png: size 1, expected 20480"
    # An earlier site is rewritten in place; anything else is refused.
    assert run_cli_in_process("fileset", "from-log", str(log), str(root)).returncode == 0
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.txt").write_text("mine")
    assert_one_error_line(run_cli_in_process("fileset", "from-log", str(log), str(tmp_path / "other")),
                          "is not empty and holds no site crest wrote")  # fmt: skip


def assert_one_error_line(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert result.returncode == 2, result
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith("crest: error: ") and fragment in lines[0], lines[0]


@pytest.mark.parametrize(
    ("text", "args", "fragment"),
    [
        (LOG + "this is not a log line\n", [], "access.log line 9: "),
        (LOG, ["--format", "apache-xml"], 'unknown log format "apache-xml"'),
        ("", [], "has no request to replay"),
    ],
)
def test_a_bad_log_is_one_line_naming_its_line_exit_2(
    tmp_path: Path, text: str, args: list[str], fragment: str
) -> None:
    log = write_log(tmp_path, text)
    assert_one_error_line(run_cli_in_process("fileset", "from-log", str(log), str(tmp_path / "site"), *args), fragment)
    if text.endswith("line\n"):  # the same words where a run reads the log
        assert_one_error_line(run_cli_in_process("run", str(log), "--target", "http://127.0.0.1:1"), fragment)


def test_a_bad_lines_fix_names_the_setting_where_it_is_given(tmp_path: Path) -> None:
    """A flag on the command line, a key in a suite; a bare log has neither, so it says to write a suite."""
    log = write_log(tmp_path, LOG + "this is not a log line\n")
    cli = run_cli_in_process("fileset", "from-log", str(log), str(tmp_path / "site"))
    assert_one_error_line(cli, "format string as --format, or let bad lines be skipped with --max-bad-lines")
    skipped = run_cli_in_process("fileset", "from-log", str(log), str(tmp_path / "site"), "--max-bad-lines", "1")
    assert skipped.returncode == 0, skipped.stderr
    bare = run_cli_in_process("run", str(log), "--target", "http://127.0.0.1:1")
    assert_one_error_line(bare, "as workload.replay.format in a suite (a bare log is read with format auto")
    suite = tmp_path / "replay.toml"
    suite.write_text(f'name = "r"\ndescription = "d"\nsource = "s"\n[workload.replay]\nlog = "{log}"\n')
    in_suite = run_cli_in_process("run", str(suite), "--target", "http://127.0.0.1:1")
    assert_one_error_line(
        in_suite, "as workload.replay.format, or let bad lines be skipped with workload.replay.max_bad"
    )


def test_a_bare_log_is_a_suite_of_its_request_mix(tmp_path: Path) -> None:
    log = write_log(tmp_path)
    suite = load_suite(str(log))
    replay = suite.workload.replay
    assert replay is not None and (replay.mode, replay.log) == ("mix", str(log))
    assert suite.ladder.client_counts() == [8]
    assert scan(log).requests == 8


# -- what is stored


def test_hashing_hides_queries_and_client_addresses_but_not_crests_own_target() -> None:
    text = "status 500 from http://127.0.0.1:8080/search?q=secret (client 10.0.0.2, fe80::1) at 13:55:38"
    hashed = hash_text(text)
    assert "secret" not in hashed and "10.0.0.2" not in hashed and "fe80::1" not in hashed
    assert hashed.startswith("status 500 from http://127.0.0.1:8080/search?h:") and hashed.endswith(" at 13:55:38")
    assert hash_text(text) == hashed
    assert json.dumps(hashed)
