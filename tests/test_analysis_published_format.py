"""crest.analysis.published and csvdata: the published-table format, its errors, and storing it as runs."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from crest.analysis import (
    load_published,
    load_published_runs,
    parse_factors,
    points_from_run,
    read_csv,
    store_published,
)
from crest.errors import ConfigError
from crest.store import Store


def table(tmp_path: Path, text: str, name: str = "t.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_comments_blank_lines_and_spaces(tmp_path: Path) -> None:
    t = read_csv(table(tmp_path, "# source: somewhere\n\nclients, rps\n  # indented comment\n1, 10\n2,20\n"))
    assert t.columns == ["clients", "rps"]
    assert t.rows == [{"clients": "1", "rps": "10"}, {"clients": "2", "rps": "20"}]
    assert t.where(1) == f"{tmp_path / 't.csv'}:6"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# only a comment\n", "holds no table"),
        ("clients,rps\n", "has a header but no rows"),
        ("clients,rps\n1,2,3\n", r"t.csv:2: 3 fields but the header has 2"),
        ("clients,clients\n1,2\n", "the header has column 'clients' twice"),
        ("clients,,rps\n1,2,3\n", "the header has an empty column name"),
    ],
)
def test_bad_tables(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        read_csv(table(tmp_path, text))


def test_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no file .*missing.csv: check the path"):
        read_csv(tmp_path / "missing.csv")
    (tmp_path / "bin.csv").write_bytes(b"\xff\xfe\x00a")
    with pytest.raises(ConfigError, match="is not UTF-8 text"):
        read_csv(tmp_path / "bin.csv")


def test_one_curve(tmp_path: Path) -> None:
    path = table(tmp_path, "clients,rps,throughput_Bps\n8,80,8000\n1,10,1000\n4,40,\n")
    detail = load_published(path, "lab-2024", {"server": "nginx", "cpus": "2"})
    assert (detail.meta.suite, detail.meta.profile, detail.meta.target) == ("published", "published", "published:t.csv")
    assert detail.meta.factors == {"dataset": "lab-2024", "server": "nginx", "cpus": 2}
    assert detail.meta.config["load_axis"] == "clients"
    assert [(m.index, m.clients, m.threads_per_client, m.connections) for m in detail.mixes] == [
        (0, 1, 1, 1), (1, 4, 1, 4), (2, 8, 1, 8),
    ]  # fmt: skip
    assert [m.rps for m in detail.mixes] == [10.0, 40.0, 80.0]
    assert detail.mixes[0].throughput_Bps == 1000.0 and math.isnan(detail.mixes[1].throughput_Bps)
    assert [p.load for p in points_from_run(detail)] == [1.0, 4.0, 8.0]


def test_clients_and_threads(tmp_path: Path) -> None:
    path = table(tmp_path, "clients,threads,requests_per_s,throughput_MBps\n1,2,25,0.1\n16,32,493,3.0\n")
    detail = load_published(path, "m")
    assert detail.meta.config["load_axis"] == "threads"
    assert [(m.clients, m.threads_per_client, m.connections) for m in detail.mixes] == [(1, 2, 2), (16, 2, 32)]
    assert [m.throughput_Bps for m in detail.mixes] == [pytest.approx(0.1e6), pytest.approx(3.0e6)]
    assert load_published(path, "m", load_axis="clients").meta.config["load_axis"] == "clients"
    with pytest.raises(ConfigError, match="threads do not split evenly over"):
        load_published(table(tmp_path, "clients,threads,rps\n3,4,1\n"), "m")


def test_generic_load_and_megabits(tmp_path: Path) -> None:
    path = table(tmp_path, "load,rps,throughput_mbps\n10,100,8\n")
    (mix,) = load_published(path, "x", load_axis="threads").mixes
    assert (mix.clients, mix.connections, mix.throughput_Bps) == (10, 10, 1e6)
    assert load_published(path, "x").meta.config["load_axis"] == "clients"


def test_optional_columns(tmp_path: Path) -> None:
    path = table(tmp_path, 'clients,rps,window_s,errors,throughput_Bps\n2,"1,000",30,5,2000\n')
    (mix,) = load_published(path, "x").mixes
    assert (mix.rps, mix.window_s, mix.requests, mix.errors, mix.bytes) == (
        1000.0,
        30.0,
        30_000,
        {"reported": 5},
        60_000,
    )


def test_factor_columns_and_trials_make_several_runs(tmp_path: Path) -> None:
    path = table(tmp_path, "server,trial,clients,rps\na,0,1,10\na,1,1,11\nb,0,1,5\na,0,2,20\n")
    runs = load_published_runs(path, "x")
    assert [(r.meta.factors["server"], r.meta.repeat_index, len(r.mixes)) for r in runs] == [
        ("a", 0, 2),
        ("a", 1, 1),
        ("b", 0, 1),
    ]
    assert [r.id for r in runs] == ["published:x#1", "published:x#2", "published:x#3"]
    with pytest.raises(ConfigError, match="holds 3 runs"):
        load_published(path, "x")


def test_peak_table_without_a_load_column(tmp_path: Path) -> None:
    runs = load_published_runs(table(tmp_path, "server,cpus,rps\na,1,10\na,2,18\n"), "x")
    assert [(r.mixes[0].clients, [v.to_json() for v in r.mixes[0].verdicts]) for r in runs] == [
        (0, [{"kind": "peak_only", "message": "published peak only: the report gives no load for this point"}]),
    ] * 2
    with pytest.raises(ConfigError, match="a second row for one configuration but the table has no load column"):
        load_published_runs(table(tmp_path, "server,rps\na,10\na,18\n"), "x")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("clients,speed\n1,2\n", "has neither a req/s nor a throughput column: name one rps or requests_per_s"),
        ("clients,rps\n1,\n", r"t.csv:2: no rps value: fill it in"),
        ("clients,rps\n1,N/A\n", r"t.csv:2: rps is 'N/A', not a number ≥ 0"),
        ("clients,rps\n1,-5\n", "not a number ≥ 0"),
        ("clients,rps\n1.5,5\n", r"t.csv:2: clients is '1.5': give a whole number"),
        ("clients,rps\n0,5\n", "at least 1 for a load"),
        ("clients,rps\n1,5\n1,6\n", r"t.csv:3: load 1 appears twice in one configuration"),
        ("clients,load,rps\n1,1,5\n", "has a load column beside clients"),
    ],
)
def test_bad_rows(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_published_runs(table(tmp_path, text), "x")


def test_bad_names_axes_and_factors(tmp_path: Path) -> None:
    path = table(tmp_path, "server,clients,rps\na,1,5\n")
    with pytest.raises(ConfigError, match="invalid name 'two words'"):
        load_published(path, "two words")
    with pytest.raises(ConfigError, match="invalid load axis 'users'"):
        load_published(path, "x", load_axis="users")
    with pytest.raises(ConfigError, match="--load-axis threads: .* has no threads column"):
        load_published(path, "x", load_axis="threads")
    with pytest.raises(ConfigError, match="factor 'server' is set twice"):
        load_published(path, "x", {"server": "b"})
    with pytest.raises(ConfigError, match="factor 'dataset' is set twice"):
        load_published(path, "x", {"dataset": "y"})


def test_parse_factors() -> None:
    assert parse_factors(["server=nginx", "cpus=2", "memory=1.5", "tag= a b "]) == {
        "server": "nginx", "cpus": 2, "memory": 1.5, "tag": "a b",
    }  # fmt: skip
    for bad in (["server"], ["=x"], ["x="]):
        with pytest.raises(ConfigError, match="invalid --factor .*: expected NAME=VALUE"):
            parse_factors(bad)
    with pytest.raises(ConfigError, match="--factor a is given twice"):
        parse_factors(["a=1", "a=2"])


def test_store_published(tmp_path: Path) -> None:
    runs = load_published_runs(table(tmp_path, "server,clients,rps\na,1,5\na,2,9\nb,1,4\n"), "lab")
    with Store(tmp_path / "crest.db") as store:
        ids = store_published(store, runs)
        assert [d.id for d in store.select(["lab"])] == ids
        stored = store.run(ids[0])
    assert (stored.status, stored.meta.config["experiment"], stored.meta.factors) == (
        "complete", "lab", {"dataset": "lab", "server": "a"},
    )  # fmt: skip
    assert [(m.clients, m.rps) for m in stored.mixes] == [(1, 5.0), (2, 9.0)]
    assert math.isnan(stored.mixes[0].throughput_Bps)
