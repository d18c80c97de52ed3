"""A suite's requests follow its fileset's published distribution, observed
end to end: the built-in target's access log, after a real `crest run`,
against the manifest's weights. Also: crest's request count equals the
target's own log."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest

from crest.filesets import build_manifest, generate
from crest.runner.table import build_table
from crest.servers import BuiltinServer, ServeSpec
from crest.suite import load_suite
from support import run_cli, static_suite

SUITE = static_suite("distribution", "one long keep-alive mix for counting", [4], length_s=2, ramp_s=0)


def test_table_weights_are_class_share_times_file_weight() -> None:
    suite = load_suite("veritest-ecommerce")
    manifest = build_manifest(suite.workload.fileset or "")
    table = build_table(suite.workload, manifest, "http://a:1", "https://a:2")
    assert math.isclose(sum(e["weight"] for e in table.requests), 1.0, abs_tol=1e-9)
    shares = suite.workload.shares()
    for index, name in enumerate(table.classes):
        got = sum(e["weight"] for e in table.requests if e["class"] == index)
        assert math.isclose(got, shares[name], abs_tol=1e-9), name
    tls = {e["url"].split("/")[2] for e in table.requests if e["url"].startswith("https")}
    assert tls == {"a:2"}


@pytest.mark.integration
def test_observed_requests_follow_the_manifest(tmp_path: Path) -> None:
    docroot = tmp_path / "fileset"
    manifest = generate("webcat-large-filemix", docroot)
    log = tmp_path / "access.log"
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE)
    db = tmp_path / "crest.db"
    with BuiltinServer(ServeSpec(docroot=docroot, access_log=log, threads=1)) as server:
        result = run_cli("run", str(suite), "--target", server.url, "--db", str(db), "-q")
    assert result.returncode == 0, result.stderr
    paths = Counter(
        line.split('"')[1].split(" ")[1].lstrip("/") for line in log.read_text().splitlines() if '"' in line
    )
    total = sum(paths.values())
    runs = json.loads(run_cli("runs", "--db", str(db), "--json").stdout)
    shown = json.loads(run_cli("show", runs[0]["id"], "--db", str(db), "--json").stdout)
    # No ramps: the window is the whole mix, so crest counted what the target logged,
    # less the requests in flight when the mix ended (at most one per connection:
    # the engine sends nothing after the end).
    mix = shown["mixes"][0]
    assert total - 4 <= mix["requests"] <= total, (
        total,
        mix["requests"],
        mix["errors_by_kind"],
        mix["status"],
        mix["timeline"],
    )
    assert total > 2000
    for entry in manifest.files:
        expected = total * entry.weight
        sd = math.sqrt(total * entry.weight * (1 - entry.weight))
        # Five standard deviations: a wrong distribution fails, chance does not.
        assert abs(paths[entry.path] - expected) <= 5 * sd + 1, (entry.path, paths[entry.path], expected)


@pytest.mark.integration
def test_content_check_catches_a_changed_file(tmp_path: Path) -> None:
    docroot = tmp_path / "fileset"
    manifest = generate("webcat-large-filemix", docroot)
    # Same size, different first line: only the content check can tell.
    victim = manifest.files[0]
    data = bytearray((docroot / victim.path).read_bytes())
    data[0:10] = b"tampered!!"
    (docroot / victim.path).write_bytes(bytes(data))
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE)
    db = tmp_path / "crest.db"
    with BuiltinServer(ServeSpec(docroot=docroot, threads=1)) as server:
        plain = run_cli("run", str(suite), "--target", server.url, "--db", str(db), "-q")
        checked = run_cli("run", str(suite), "--target", server.url, "--db", str(db), "-q", "--validate-content")
    assert plain.returncode == 0 and checked.returncode == 0, (plain.stderr, checked.stderr)
    runs = json.loads(run_cli("runs", "--db", str(db), "--json").stdout)
    by_id = {r["id"]: json.loads(run_cli("show", r["id"], "--db", str(db), "--json").stdout) for r in runs}
    errors = sorted(show["mixes"][0]["errors_by_kind"].get("validation", 0) for show in by_id.values())
    assert errors[0] == 0 and errors[1] > 0
