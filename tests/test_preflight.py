"""Tests of crest.load.preflight: URL parsing (pure) and reachability against real loopback sockets."""

from __future__ import annotations

import pytest

from crest.errors import ConfigError, TargetError
from crest.load.preflight import check_reachable, check_source_addrs, parse_url
from support import SilentListener


@pytest.mark.parametrize(
    ("url", "host", "port", "tls"),
    [
        ("http://127.0.0.1:8080/1k.html", "127.0.0.1", 8080, False),
        ("http://localhost/", "localhost", 80, False),
        ("https://example.test/a?b=c", "example.test", 443, True),
        ("http://[::1]:9000/", "::1", 9000, False),
        ("http://127.0.0.1:65535", "127.0.0.1", 65535, False),
    ],
)
def test_parse_url_accepts(url: str, host: str, port: int, tls: bool) -> None:
    target = parse_url(url)
    assert (target.host, target.port, target.tls) == (host, port, tls)


def test_authority_brackets_ipv6() -> None:
    assert parse_url("http://[::1]:9000/").authority == "[::1]:9000"
    assert parse_url("http://127.0.0.1:9000/").authority == "127.0.0.1:9000"


@pytest.mark.parametrize(
    "url",
    [
        "foo",
        "",
        "ftp://x/",
        "http://",
        "http:///path",
        "http://x:0/",
        "http://x:65536/",
        "http://x:8o/",
        "http://[::1/",
        "http://a b/",
    ],
)
def test_parse_url_rejects(url: str) -> None:
    with pytest.raises(
        ConfigError, match=r"invalid URL .*(expected http://host\[:port\]/path or https://|port must be in 1-65535)"
    ):
        parse_url(url)


def test_parse_url_rejects_credentials() -> None:
    with pytest.raises(ConfigError, match=r"credentials in the URL are not supported; send them with -H"):
        parse_url("http://user:pw@127.0.0.1/")


def test_check_reachable_refused(closed_port: int) -> None:
    message = (
        rf"cannot connect to 127\.0\.0\.1:{closed_port} \(connection refused\): is the target running\? check the URL"
    )
    with pytest.raises(TargetError, match=message):
        check_reachable(parse_url(f"http://127.0.0.1:{closed_port}/"))


@pytest.mark.integration
def test_check_reachable_connects_once(silent_listener: SilentListener) -> None:
    check_reachable(parse_url(silent_listener.url))
    assert silent_listener.connections() == 1


def test_check_source_addrs() -> None:
    target = parse_url("http://127.0.0.1:8080/")
    check_source_addrs(("127.0.0.2", "127.0.0.3"), target)
    with pytest.raises(ConfigError, match=r"source address ::1 is IPv6 but the target 127\.0\.0\.1 is IPv4"):
        check_source_addrs(("::1",), target)
    with pytest.raises(ConfigError, match=r"source address 192\.0\.2\.7 cannot be used \(.*\): use addresses assigned"):
        check_source_addrs(("192.0.2.7",), target)
