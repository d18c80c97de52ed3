"""Memory that limits the cache (Compaq's memory study, seed 004): sized filesets, pages evicted before a
memory-limited target starts, and the memory_irrelevant verdict when the files fit.

A fileset's table repeated (`fileset_copies`, or as many copies as `fileset_size` needs) keeps its mix of
sizes; a target started with --memory finds the docroot's pages evicted, so its reads are charged to its
own cgroup; the real run shows the mechanism on a small scale: a fileset four times the limit makes the
target read from storage and fall below the same target with room, and the roomy one is told its limit
could not matter.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
from pathlib import Path

import pytest

from crest.errors import ConfigError
from crest.filesets import FilesetError, build_manifest, copies_for, generate
from crest.host import pagecache
from crest.runner.measure import MEMORY_ROOM, MixMeasure
from crest.suite import parse_toml
from support import run_cli, static_suite

# 48 MiB of files (the Large Filemix × 26), one 2-s window per memory size.
MEMORY_SUITE = static_suite("memory-study", "the memory study's mechanism, small", [8], length_s=4).replace(
    'fileset = "webcat-large-filemix"\n', 'fileset = "webcat-large-filemix"\nfileset_size = "48M"\n'
)


def test_copies_repeat_the_table_and_keep_its_mix() -> None:
    one, three = build_manifest("webcat-large-filemix"), build_manifest("webcat-large-filemix", copies=3)
    assert len(three.files) == 3 * len(one.files) and three.total_bytes() == 3 * one.total_bytes()
    assert three.params["copies"] == 3 and "copies" not in one.params
    assert [f.path for f in three.files[: len(one.files)]] == [f.path for f in one.files]  # copy 1 keeps its URLs
    assert three.files[len(one.files)].path == "x2/" + one.files[0].path
    assert three.class_shares() == pytest.approx(one.class_shares())
    assert math.fsum(f.weight for f in three.files) == pytest.approx(1.0)
    # A working-set size: the fewest copies that reach it.
    assert copies_for("webcat-large-filemix", 64 << 20) == math.ceil((64 << 20) / one.total_bytes())
    assert copies_for("webcat-large-filemix", 1) == 1
    with pytest.raises(FilesetError, match="sized by its directories"):
        build_manifest("specweb99", copies=2)
    with pytest.raises(FilesetError, match="invalid copies"):
        build_manifest("sizes", copies=0)


def test_specweb99_lengths_are_the_kits_36_lengths_with_its_class_shares() -> None:
    manifest = build_manifest("specweb99-lengths")
    sizes = sorted(f.size for f in manifest.files)
    assert len(sizes) == 36 and sizes[0] == 102 and sizes[-1] == 921_600
    assert manifest.class_shares() == pytest.approx({"class0": 0.35, "class1": 0.50, "class2": 0.14, "class3": 0.01})


def test_a_suite_sizes_a_table_fileset_one_way() -> None:
    base = MEMORY_SUITE.replace('fileset_size = "48M"\n', "")
    assert base != MEMORY_SUITE
    assert (
        parse_toml(base.replace("[workload]\n", "[workload]\nfileset_copies = 4\n"), "s.toml").workload.fileset_copies
        == 4
    )
    for extra, needle in [
        ('fileset_size = "48M"\nfileset_copies = 2\n', "not both"),
        ('fileset_size = "lots"\n', "invalid fileset_size"),
    ]:
        with pytest.raises(ConfigError, match=needle):
            parse_toml(base.replace("[workload]\n", "[workload]\n" + extra), "s.toml")
    with pytest.raises(ConfigError, match="sizes a table fileset"):
        parse_toml(
            base.replace('"webcat-large-filemix"', '"specweb99"').replace(
                "[workload]\n", "[workload]\nfileset_copies = 2\n"
            ),
            "s.toml",
        )


def test_the_verdict_comes_when_the_limit_holds_the_files_with_room() -> None:
    suite = parse_toml(MEMORY_SUITE, "s.toml")
    files = 10 << 20

    def found(limit: int | None, working_set: int | None) -> list[str]:
        return [v.kind for v in MixMeasure(suite, None, None, limit, working_set).memory_verdicts()]  # type: ignore[arg-type]

    assert found(MEMORY_ROOM * files, files) == ["memory_irrelevant"]
    assert found(MEMORY_ROOM * files - 1, files) == []  # not quite room to spare: the limit may matter
    assert found(None, files) == [] and found(1 << 30, None) == []  # no limit; not a file workload


def test_evicting_a_tree_asks_for_every_file(tmp_path: Path) -> None:
    generate("webcat-webstone", tmp_path / "tree")
    manifest = build_manifest("webcat-webstone")
    manifest_bytes = (tmp_path / "tree" / "crest-manifest.json").stat().st_size
    assert pagecache.evict(tmp_path / "tree") == manifest.total_bytes() + manifest_bytes


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_a_fileset_past_the_limit_is_read_from_storage_and_slower(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("a memory limit needs a writable cgroup tree: run the tests as root")
    suite, db = tmp_path / "memory.toml", tmp_path / "r.db"
    suite.write_text(MEMORY_SUITE)
    # 48 MiB of files: 12M holds a quarter of them, 256M all of them twice over.
    out = run_cli("run", str(suite), "--server", "nginx", "--memory", "12M,256M", "--db", str(db), "-q", timeout_s=100)
    if out.returncode == 2 and "cgroup" in out.stderr:
        pytest.skip(f"no cgroup memory controller here: {out.stderr.strip()}")
    assert out.returncode == 0, out.stderr
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT r.factors_json, r.config_json, m.rps, m.monitor_json, m.verdicts_json FROM runs r JOIN mixes m ON m.run_id = r.id"
        ).fetchall()
    by_memory = {
        json.loads(f)["memory"]: (json.loads(c), rps, json.loads(mon), json.loads(v)) for f, c, rps, mon, v in rows
    }
    small, roomy = by_memory["12M"], by_memory["256M"]
    assert small[1] < roomy[1], f"12M ran at {small[1]:,.0f} req/s, 256M at {roomy[1]:,.0f}"
    small_reads, roomy_reads = (x[2]["target"]["storage_read_bytes"] for x in (small, roomy))
    assert small_reads > 4 * max(roomy_reads, 1 << 20), (small_reads, roomy_reads)
    kinds = {m: [v["kind"] for v in x[3]] for m, x in by_memory.items()}
    assert "memory_irrelevant" in kinds["256M"] and "memory_irrelevant" not in kinds["12M"]
    assert small[0]["server"]["page_cache_evicted_bytes"] >= 48 << 20
