"""The results store on a real SQLite file: schema, round trips, ids, lookups and every error message."""

from __future__ import annotations

import math
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

import crest.store.schema
import crest.store.sqlite
from crest import verdicts
from crest.errors import ConfigError
from crest.store import (
    DEFAULT_PATH,
    SCHEMA_VERSION,
    STATUSES,
    MixRecord,
    RunMeta,
    Store,
    StoreError,
    StoreFileError,
    mix_from_report,
)

RUN_ID = re.compile(r"\d{8}-\d{4}-[0-9a-f]{4}")


def make_meta(**changes: Any) -> RunMeta:
    """A run meta as the runner would hand it over."""
    fields: dict[str, Any] = {
        "suite": "webbench-static",
        "target": "http://127.0.0.1:8080/",
        "profile": "quick",
        "repeat_index": 0,
        "config": {"suite": {"name": "webbench-static", "mixes": [1, 4, 8]}, "timeout_s": 10.0},
        "factors": {"server": "builtin", "cpus": 2},
        "host": {"hostname": "lab1", "kernel": "6.1.0", "cpu_model": "Xeon", "cpus": 8,
                 "python": "3.11.7", "crest_version": "0.1.0", "engine_version": "0.1.0"},
    }  # fmt: skip
    return RunMeta(**{**fields, **changes})


def make_mix(index: int, **changes: Any) -> MixRecord:
    """A finished mix with every field filled; load and rate grow with the index like a ladder."""
    clients = 1 + 4 * index
    start = 1_795_000_000.0 + 40.0 * index
    fields: dict[str, Any] = {
        "index": index, "clients": clients, "threads_per_client": 2, "connections": 2 * clients,
        "started_at": start, "ended_at": start + 30.0, "window_s": 20.0,
        "requests": 1000 * clients, "responses": 1000 * clients + 3, "bytes": 1_200_000 * clients,
        "body_bytes": 1_024_000 * clients, "rps": 50.0 * clients, "throughput_Bps": 60_000.0 * clients,
        "errors": {"connect": 0, "timeout": index, "status": 2},
        "latency_us": {"p50": 800.0 + index, "p90": 1500.0, "p99": 4000.0, "p999": 9000.0,
                       "max": 12000.0, "mean": 900.5, "min": 120.0, "stdev": 300.25},
        "status": {"200": 1000 * clients, "404": 2},
        "classes": {"static": {"requests": 1000 * clients, "bytes": 1_200_000 * clients, "errors": 2,
                               "rps": 50.0 * clients, "throughput_Bps": 60_000.0 * clients,
                               "latency_us": {"p50": 800.0, "p99": 4000.0}}},
        "client_scores": [{"client": i, "requests": 1000, "bytes": 1_200_000, "errors": 0, "rps": 50.0,
                           "throughput_Bps": 60_000.0} for i in range(clients)],
        "timeline": [{"second": s, "requests": 50 * clients, "errors": 0, "bytes": 60_000 * clients} for s in range(20)],
        "histogram_b64": "HISTFAAAACx4nJNpmSzMwMDAxAABzFCaEUzOmNZg/wEiAPoSLg==",
        "monitor": {},
        "verdicts": [] if index else [verdicts.client_bound(97.0, 1), verdicts.cut_short()],
        "size_bytes": None if index else 5000, "client_cpu_s": 2.5 + index, "connections_opened": 10 * clients,
        "access_log_requests": None if index else 1000, "naps": 0 if index else 31_020,
    }  # fmt: skip
    return MixRecord(**{**fields, **changes})


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "results" / "crest.db"


@pytest.fixture
def store(db: Path) -> Any:
    with Store(db) as opened:
        yield opened


def raw(path: Path) -> sqlite3.Connection:
    """A plain sqlite3 connection, to look at the file the way any other program would."""
    return sqlite3.connect(str(path), isolation_level=None)


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


# -- schema ---------------------------------------------------------------------------


def test_opening_creates_the_directory_schema_and_version(db: Path) -> None:
    with Store(db) as store:
        assert store.journal_mode == "wal"
    assert db.is_file()
    conn = raw(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 9
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # WAL is a property of the file
        assert columns(conn, "runs") == [
            "id", "suite", "target", "profile", "repeat_index", "status", "reason", "started_at", "ended_at",
            "config_json", "factors_json", "host_json", "owner_json",
        ]  # fmt: skip
        assert columns(conn, "mixes") == [
            "run_id", "idx", "clients", "threads_per_client", "connections", "started_at", "ended_at", "window_s",
            "requests", "responses", "bytes", "body_bytes", "rps", "throughput_Bps", "errors_json",
            "latency_us_json", "status_json", "classes_json", "clients_json", "timeline_json", "histogram_b64",
            "monitor_json", "verdicts_json", "size_bytes", "client_cpu_s", "connections_opened",
            "access_log_requests",
            "cluster_json", "rate_rps", "specweb99_json", "lab_json", "tls_json", "network_json",
            "h2_json", "naps",
        ]  # fmt: skip
        mix_pk = [row[1] for row in sorted(conn.execute("PRAGMA table_info(mixes)"), key=lambda r: r[5]) if row[5]]
        assert mix_pk == ["run_id", "idx"]
        assert [(r[2], r[3], r[4]) for r in conn.execute("PRAGMA foreign_key_list(mixes)")] == [
            ("runs", "run_id", "id")
        ]
    finally:
        conn.close()


def test_reopening_keeps_the_data(db: Path) -> None:
    with Store(db) as store:
        run_id = store.create_run(make_meta())
        store.add_mix(run_id, make_mix(0))
    with Store(db) as store:
        assert store.run(run_id).mixes == [make_mix(0)]


def test_default_path_is_relative_to_the_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with Store() as store:
        assert store.path == DEFAULT_PATH == Path("crest-results/crest.db")
    assert (tmp_path / "crest-results" / "crest.db").is_file()


def test_a_newer_schema_is_refused(db: Path) -> None:
    Store(db).close()
    conn = raw(db)
    conn.execute("PRAGMA user_version = 10")
    conn.close()
    with pytest.raises(
        StoreError, match=r"was written by a newer crest \(store schema 10, this crest reads 9\): upgrade crest"
    ):
        Store(db)


def test_an_older_schema_is_refused(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Store(db).close()
    monkeypatch.setattr(crest.store.schema, "SCHEMA_VERSION", 10)  # as if this crest were one schema ahead
    with pytest.raises(
        StoreError, match=r"uses store schema 9, which this crest cannot upgrade to 10: move the file aside"
    ):
        Store(db)
    conn = raw(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 9  # the failed upgrade left it as it was
    finally:
        conn.close()


def test_another_programs_database_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = raw(path)
    conn.execute("CREATE TABLE notes (text TEXT)")
    conn.close()
    with pytest.raises(
        StoreError, match=r"other\.db is an SQLite file of another program, not a crest results file: pass --db"
    ):
        Store(path)
    conn = raw(path)
    try:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["notes"]
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # not switched to WAL either
    finally:
        conn.close()


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are not the tables you are looking for\n" * 100)
    # Exit 1, not 2: garbage where a results file should be is a damaged file, whatever made it.
    with pytest.raises(StoreFileError) as caught:
        Store(path)
    assert str(caught.value) == (
        f"{path} is damaged or not an SQLite file (file is not a database):"
        " move it aside (crest then starts a new one), or pass --db with another file"
    )


def test_an_impossible_directory_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(
        StoreError, match=r"cannot create the directory .*file/sub: .*: pass --db with a writable place"
    ):
        Store(tmp_path / "file" / "sub" / "crest.db")


def test_store_error_is_a_config_error() -> None:
    assert issubclass(StoreError, ConfigError)  # the CLI prints it in one line with exit code 2


# -- runs and mixes ---------------------------------------------------------------------


def test_create_run_starts_running_with_a_readable_sortable_id(store: Store) -> None:
    before = time.time()
    run_id = store.create_run(make_meta())
    after = time.time()
    assert RUN_ID.fullmatch(run_id)
    assert run_id[:13] in {time.strftime("%Y%m%d-%H%M", time.gmtime(t)) for t in (before, after)}
    detail = store.run(run_id)
    assert detail.id == run_id
    assert (detail.status, detail.reason, detail.ended_at, detail.mixes) == ("running", None, None, [])
    assert before <= detail.started_at <= after
    assert detail.meta == make_meta()


def test_ids_are_unique(store: Store) -> None:
    ids = [store.create_run(make_meta(repeat_index=i)) for i in range(50)]
    assert len(set(ids)) == 50


def test_a_taken_id_is_drawn_again(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = iter(["20261122-0712-aaaa", "20261122-0712-aaaa", "20261122-0712-bbbb"])
    monkeypatch.setattr(crest.store.sqlite, "new_run_id", lambda at: next(drawn))
    assert store.create_run(make_meta()) == "20261122-0712-aaaa"
    assert store.create_run(make_meta()) == "20261122-0712-bbbb"


def test_round_trip_keeps_every_field_in_ladder_order(store: Store) -> None:
    run_id = store.create_run(make_meta())
    for index in (2, 0, 1):  # stored out of order (a resumed run), read back in ladder order
        store.add_mix(run_id, make_mix(index))
    store.finish_run(run_id, "complete")
    detail = store.run(run_id)
    assert detail.mixes == [make_mix(0), make_mix(1), make_mix(2)]
    assert [m.index for m in detail.mixes] == [0, 1, 2]
    assert detail.meta == make_meta()
    assert detail.status == "complete" and detail.reason is None
    assert detail.ended_at is not None and detail.ended_at >= detail.started_at


def test_values_json_cannot_hold_are_kept_as_text_or_nan(store: Store) -> None:
    run_id = store.create_run(make_meta(config={"docroot": Path("/srv/www")}))
    store.add_mix(run_id, make_mix(0, rps=math.nan))
    detail = store.run(run_id)
    assert detail.meta.config == {"docroot": "/srv/www"}
    assert math.isnan(detail.mixes[0].rps)


H2 = {
    "streams_opened": 74068, "streams_in_use_sum": 696139, "streams_in_use_max": 10,
    "response_header_block_bytes": 8004306, "response_header_raw_bytes": 15421140,
    "request_header_block_bytes": 2518312, "request_header_raw_bytes": 7406800,
    "goaways": 72, "resets": 0, "refused": 594,
}  # fmt: skip


def test_an_http2_mix_keeps_its_counters_and_http1_has_none(store: Store, db: Path) -> None:
    run_id = store.create_run(make_meta())
    store.add_mix(run_id, make_mix(0, h2=H2))
    store.add_mix(run_id, make_mix(1))
    assert [m.h2 for m in store.run(run_id).mixes] == [H2, None]
    conn = raw(db)
    try:
        assert [r[0] for r in conn.execute("SELECT h2_json FROM mixes ORDER BY idx")][1] is None  # NULL, not "null"
    finally:
        conn.close()


def as_written_by_schema(db: Path, version: int, *later_columns: str) -> str:
    """A file with one run of one mix (nothing in `later_columns`), as crest of store schema `version` wrote
    it: the same tables without the mix columns later schemas added. Returns the run's id."""
    with Store(db) as store:
        run_id = store.create_run(make_meta())
        store.add_mix(run_id, make_mix(0, naps=None))
    conn = raw(db)
    for column in later_columns:
        conn.execute(f"ALTER TABLE mixes DROP COLUMN {column}")
    if version < 9:
        conn.execute("ALTER TABLE runs DROP COLUMN owner_json")
    conn.execute(f"PRAGMA user_version = {version}")
    conn.close()
    return run_id


def test_a_schema_6_file_gains_h2_json_and_naps_and_keeps_its_mixes(db: Path) -> None:
    run_id = as_written_by_schema(db, 6, "naps", "h2_json")
    with Store(db) as store:
        # h2 None: every earlier mix spoke HTTP/1.x; naps None: its engine counted none.
        assert store.run(run_id).mixes == [make_mix(0, naps=None)]
        store.add_mix(run_id, make_mix(1, h2=H2))
        assert store.run(run_id).mixes[1].h2 == H2
    conn = raw(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert columns(conn, "mixes")[-2:] == ["h2_json", "naps"]
    finally:
        conn.close()


def test_a_schema_7_file_gains_naps_not_recorded_for_its_mixes(db: Path) -> None:
    run_id = as_written_by_schema(db, 7, "naps")
    with Store(db) as store:
        assert store.run(run_id).mixes == [make_mix(0, naps=None)]
        store.add_mix(run_id, make_mix(1))
        assert [m.naps for m in store.run(run_id).mixes] == [None, 0]  # not recorded, then none taken
    conn = raw(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert [r[0] for r in conn.execute("SELECT naps FROM mixes ORDER BY idx")] == [None, 0]
    finally:
        conn.close()


def test_a_schema_8_file_gains_owners_and_its_running_runs_stay_running(db: Path) -> None:
    run_id = as_written_by_schema(db, 8)
    with Store(db) as store:
        # No owner recorded: nothing tells whether its crest is gone, so it reads as it was stored.
        assert store.run(run_id).status == "running"
        assert [s.status for s in store.runs()] == ["running"]
    conn = raw(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("SELECT owner_json FROM runs").fetchall() == [(None,)]
    finally:
        conn.close()


def test_the_engine_report_s_h2_counters_are_stored_as_given() -> None:
    class Planned:
        index, clients, threads_per_client, connections, size_bytes, rate_rps = 0, 1, 1, 4, None, None

    mix = make_mix(0)
    report: dict[str, Any] = {
        "window_s": mix.window_s, "requests": mix.requests, "responses": mix.responses, "bytes": mix.bytes,
        "body_bytes": mix.body_bytes, "rps": mix.rps, "throughput_Bps": mix.throughput_Bps,
        "errors": {"reset": 0}, "latency_us": mix.latency_us, "status": mix.status, "classes": {}, "clients": [],
        "timeline": [], "histogram_b64": "", "client_cpu_s": 1.0, "connections_opened": 4,
    }  # fmt: skip
    assert mix_from_report(Planned(), report, 0.0, 1.0).h2 is None  # HTTP/1.x: the engine leaves the key out
    assert mix_from_report(Planned(), {**report, "h2": H2}, 0.0, 1.0).h2 == H2
    assert mix_from_report(Planned(), report, 0.0, 1.0).naps == 0  # no key: none taken
    assert mix_from_report(Planned(), {**report, "naps": 31_020}, 0.0, 1.0).naps == 31_020


@pytest.mark.parametrize("status", ["complete", "interrupted", "failed"])
def test_finish_run_records_status_and_reason(store: Store, status: str) -> None:
    run_id = store.create_run(make_meta())
    store.finish_run(run_id, status, reason=None if status == "complete" else "target died at mix 3")
    detail = store.run(run_id)
    assert detail.status == status
    assert detail.reason == (None if status == "complete" else "target died at mix 3")
    assert status in STATUSES


@pytest.mark.parametrize("status", ["running", "done", ""])
def test_finish_run_rejects_other_statuses(store: Store, status: str) -> None:
    run_id = store.create_run(make_meta())
    with pytest.raises(ValueError, match="a run ends as one of complete, interrupted, failed"):
        store.finish_run(run_id, status)
    assert store.run(run_id).status == "running"


def test_reopen_run_for_resume(store: Store) -> None:
    run_id = store.create_run(make_meta())
    store.add_mix(run_id, make_mix(0))
    started_at = store.run(run_id).started_at
    store.finish_run(run_id, "interrupted", "Ctrl-C")
    store.reopen_run(run_id)
    detail = store.run(run_id)
    assert (detail.status, detail.reason, detail.ended_at, detail.started_at) == ("running", None, None, started_at)
    assert [m.index for m in detail.mixes] == [0]  # the stored mixes stay
    store.add_mix(run_id, make_mix(store.next_mix_index(run_id)))
    store.finish_run(run_id, "complete")
    assert store.run(run_id).status == "complete"
    with pytest.raises(StoreError, match="no run 'nope'"):
        store.reopen_run("nope")


def test_runs_lists_newest_first_with_counts_and_rates(store: Store, db: Path) -> None:
    old = store.create_run(make_meta(suite="old"))
    new = store.create_run(make_meta(suite="new", factors={}))
    empty = store.create_run(make_meta(suite="empty"))
    conn = raw(db)  # pin the start times so the order does not depend on the clock's resolution
    for started_at, run_id in ((100.0, old), (300.0, new), (200.0, empty)):
        conn.execute("UPDATE runs SET started_at = ? WHERE id = ?", (started_at, run_id))
    conn.close()
    for index in range(3):
        store.add_mix(old, make_mix(index))
    store.add_mix(new, make_mix(0, rps=123.5))
    store.finish_run(old, "interrupted", "Ctrl-C")
    summaries = store.runs()
    assert [s.id for s in summaries] == [new, empty, old]
    by_suite = {s.suite: s for s in summaries}
    assert (by_suite["old"].mixes, by_suite["old"].mix_rps) == (3, [make_mix(i).rps for i in range(3)])
    assert (by_suite["old"].status, by_suite["old"].reason) == ("interrupted", "Ctrl-C")
    assert by_suite["old"].ended_at is not None
    assert (by_suite["new"].mixes, by_suite["new"].mix_rps, by_suite["new"].factors) == (1, [123.5], {})
    assert (by_suite["empty"].mixes, by_suite["empty"].mix_rps, by_suite["empty"].status) == (0, [], "running")
    assert by_suite["old"].factors == {"server": "builtin", "cpus": 2}
    assert (by_suite["old"].target, by_suite["old"].profile, by_suite["old"].repeat_index) == (
        "http://127.0.0.1:8080/", "quick", 0)  # fmt: skip


def test_runs_of_an_empty_store(store: Store) -> None:
    assert store.runs() == []


def test_next_mix_index(store: Store) -> None:
    run_id = store.create_run(make_meta())
    assert store.next_mix_index(run_id) == 0
    for index in range(3):
        store.add_mix(run_id, make_mix(index))
    assert store.next_mix_index(run_id) == 3
    store.add_mix(run_id, make_mix(7))
    assert store.next_mix_index(run_id) == 8  # 1 + the last index, not the count


def test_a_mix_stored_twice_is_refused(store: Store, db: Path) -> None:
    run_id = store.create_run(make_meta())
    store.add_mix(run_id, make_mix(0))
    store.add_mix(run_id, make_mix(1))
    with pytest.raises(
        StoreError, match=rf"^mix 0 of run {run_id} is already in {re.escape(str(db))}: resume from mix 2$"
    ):
        store.add_mix(run_id, make_mix(0, rps=1.0))
    assert store.run(run_id).mixes[0] == make_mix(0)  # the first one stands


def test_a_mix_for_an_unknown_run_is_refused(store: Store, db: Path) -> None:
    with pytest.raises(
        StoreError, match=rf"^no run 'nope' in {re.escape(str(db))}: see `crest runs --db {re.escape(str(db))}`$"
    ):
        store.add_mix("nope", make_mix(0))
    assert store.runs() == []


def test_unknown_run_ids_are_refused_everywhere(store: Store) -> None:
    with pytest.raises(StoreError, match="no run 'nope'"):
        store.finish_run("nope", "complete")
    with pytest.raises(StoreError, match="no run 'nope'"):
        store.next_mix_index("nope")
    with pytest.raises(StoreError, match="no run 'nope'"):
        store.run("nope")


def test_unknown_id_message_names_the_default_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with Store() as store:
        with pytest.raises(StoreError) as caught:
            store.run("x")
    assert str(caught.value) == "no run 'x' in crest-results/crest.db: see `crest runs`"


def test_a_unique_prefix_names_a_run(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = iter(["20261122-0712-a3f9", "20261122-0712-a401", "20261122-0815-0000"])
    monkeypatch.setattr(crest.store.sqlite, "new_run_id", lambda at: next(drawn))
    first, second, third = (store.create_run(make_meta(repeat_index=i)) for i in range(3))
    assert store.run("20261122-0712-a3").id == first
    assert store.run("20261122-08").id == third
    assert store.run(second).id == second
    assert store.resolve("20261122-0712-a4") == second
    with pytest.raises(StoreError, match=(
        r"^run id '20261122-0712-a' is ambiguous in .*crest\.db: it starts 20261122-0712-a3f9, 20261122-0712-a401:"
        r" give more of the id$"
    )):  # fmt: skip
        store.run("20261122-0712-a")
    with pytest.raises(StoreError, match="no run ''"):
        store.run("")  # the empty prefix would match every run
    with pytest.raises(StoreError, match="no run '20261122-0712-a3f9-extra'"):
        store.run("20261122-0712-a3f9-extra")


def test_a_prefix_is_text_not_a_pattern(store: Store) -> None:
    store.create_run(make_meta())
    for pattern in ("%", "_", "2026%"):
        with pytest.raises(StoreError, match="no run"):
            store.run(pattern)


def test_close_twice_is_fine(db: Path) -> None:
    store = Store(db)
    store.close()
    store.close()
