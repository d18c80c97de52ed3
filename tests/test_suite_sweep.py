"""Content-length sweep ladders: one mix per size, validation in one line per problem, stored dumps still load."""

from __future__ import annotations

from typing import Any

import pytest

from crest.filesets import build_manifest
from crest.runner.table import WEBSTONE_CGI_PATH, build_table
from crest.suite import Suite, SuiteError, parse_suite


def _suite(ladder: dict[str, Any], classes: list[dict[str, Any]] | None = None, fileset: str | None = "sizes") -> Suite:
    workload: dict[str, Any] = {"classes": classes or [{"name": "static", "kind": "static", "weight": 1}]}
    if fileset is not None:
        workload["fileset"] = fileset
    return parse_suite({
        "name": "t", "description": "d", "source": "s", "workload": workload, "ladder": ladder,
        "timing": {"length_s": 2, "ramp_up_s": 1, "ramp_down_s": 0},
    }, "t.toml")  # fmt: skip


def test_sizes_bytes_gives_one_mix_per_size_and_client_count() -> None:
    suite = _suite({"clients": [1, 2], "sizes_bytes": [10, 1000]})
    assert [(m.index, m.size_bytes, m.clients) for m in suite.mixes()] == [
        (1, 10, 1), (2, 10, 2), (3, 1000, 1), (4, 1000, 2),
    ]  # fmt: skip


def test_sizes_fileset_means_every_size_of_the_fileset() -> None:
    suite = _suite({"clients": [1], "sizes": "fileset"})
    expected = sorted({f.size for f in build_manifest("sizes").files})
    assert suite.sweep_sizes() == expected
    assert [m.size_bytes for m in suite.mixes("quick")] == expected


def test_ordinary_ladders_have_no_size() -> None:
    suite = _suite({"clients": [1, 4]})
    assert suite.sweep_sizes() is None
    assert [m.size_bytes for m in suite.mixes()] == [None, None]


@pytest.mark.parametrize(
    ("ladder", "classes", "fileset", "message"),
    [
        (
            {"clients": [1], "sizes_bytes": [1, 300]},
            None,
            "sizes",
            "t.toml: ladder.sizes_bytes[1]: no file of fileset 'sizes' is 300 bytes (its sizes: 1, 2, 5, 10,",
        ),
        (
            {"clients": [1], "sizes_bytes": [5, 2]},
            None,
            "sizes",
            "t.toml: ladder.sizes_bytes[1]: must be greater than the entry before it (got 2 after 5)",
        ),
        ({"clients": [1], "sizes_bytes": []}, None, "sizes", "t.toml: ladder.sizes_bytes: must list at least 1"),
        ({"clients": [1], "sizes": "all"}, None, "sizes", "t.toml: ladder.sizes: must be 'fileset' (got 'all')"),
        (
            {"clients": [1], "sizes": "fileset", "sizes_bytes": [1]},
            None,
            "sizes",
            "t.toml: ladder: define at most one of sizes_bytes or sizes",
        ),
        (
            {"clients": [1], "sizes": "fileset"},
            [{"name": "w", "kind": "webstone-cgi", "weight": 1}],
            None,
            "t.toml: ladder.sizes: 'fileset' needs a static class",
        ),
        (
            {"clients": [1], "sizes_bytes": [100]},
            [{"name": "c", "kind": "cgi", "weight": 1}],
            None,
            "t.toml: ladder.sizes_bytes: a content-length sweep restricts static, specweb99-get and webstone-cgi classes only;"
            " class 'c' (kind 'cgi')",
        ),
    ],
)
def test_bad_sweeps_are_one_line_each(
    ladder: dict[str, Any], classes: list[dict[str, Any]] | None, fileset: str | None, message: str
) -> None:
    with pytest.raises(SuiteError) as info:
        _suite(ladder, classes, fileset)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_stored_dumps_load_with_and_without_the_new_keys() -> None:
    suite = _suite({"clients": [1], "sizes_bytes": [10, 100]})
    assert Suite.model_validate(suite.model_dump(mode="json")) == suite
    old = _suite({"clients": [1]}).model_dump(mode="json")
    del old["ladder"]["sizes_bytes"], old["ladder"]["sizes"]  # a run stored before sweeps existed
    assert Suite.model_validate(old).sweep_sizes() is None


def test_request_table_of_a_size_has_only_that_size() -> None:
    suite = _suite({"clients": [1], "sizes_bytes": [10, 1000]})
    manifest = build_manifest("sizes")
    table = build_table(suite.workload, manifest, "http://h", None, size_bytes=1000)
    assert [(e["url"], e["expect_body_bytes"], e["weight"]) for e in table.requests] == [
        ("http://h/sizes/1000.html", 1000, pytest.approx(1.0)),
    ]
    whole = build_table(suite.workload, manifest, "http://h", None)
    assert len(whole.requests) == len(manifest.files)


def test_request_table_sizes_webstone_cgi() -> None:
    suite = _suite({"clients": [1], "sizes_bytes": [345]}, [{"name": "w", "kind": "webstone-cgi", "weight": 1}], None)
    table = build_table(suite.workload, None, "http://h", None, size_bytes=345)
    assert [(e["url"], e["expect_body_bytes"]) for e in table.requests] == [
        (f"http://h{WEBSTONE_CGI_PATH}?size=345", 345)
    ]
