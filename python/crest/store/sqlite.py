"""Store: reads and writes runs and mixes in one SQLite file (WAL, a transaction per mix); never prints.

One writer (the runner) and any number of readers (`crest runs`, `crest show`,
reports) may use the same file at once, from threads or processes: WAL lets
readers see the last committed mix without blocking the writer.

Each run records the crest process that writes it (owner.py), so a reader sees a
"running" run whose crest is gone as interrupted; each writer keeps a small
reserve file beside the store, given up on a full disk to write a run's end.
A damaged or locked file is a StoreFileError (exit 1), never a traceback.
`Store(path, read_only=True)` (the results browser) opens an existing file that it never writes: no
schema, no WAL switch, no reserve, and SQLite itself refuses a write.
"""

from __future__ import annotations

import errno
import json
import math
import os
import secrets
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from crest.errors import DiskFullError
from crest.store import owner
from crest.store.errors import StoreError, StoreFileError
from crest.store.records import FINAL_STATUSES, MixRecord, RunDetail, RunMeta, RunSummary
from crest.store.schema import APPLICATION_ID, SCHEMA_VERSION, ensure_schema
from crest.verdicts import Verdict

DEFAULT_PATH = Path("crest-results/crest.db")  # relative to the current directory

# How long a statement waits for another connection's lock before failing. Writes
# are one small transaction per mix, so any real wait is a stuck process.
BUSY_TIMEOUT_S = 30.0
# A new id collides only if two runs start in the same minute with the same 16-bit
# suffix; a few retries make that practically impossible.
_ID_ATTEMPTS = 8
# How many candidates an ambiguous prefix error lists.
_AMBIGUOUS_SHOWN = 5
# Less free space than this on the store's disk when SQLite fails to write: the disk is full,
# whatever SQLite called it (a full disk during a WAL write often reads "disk I/O error").
_FULL_BELOW_BYTES = 1 << 20
# A file of this size beside the store, kept by every writer (its name: the store's plus "-reserve"): when
# the disk fills mid-run, removing it makes room to write the run's end ("failed"), a few WAL pages.
RESERVE_BYTES = 256 << 10
# SQLite's names for a file that is not (or no longer) an SQLite database, and for a lock held past the timeout.
_DAMAGED = ("SQLITE_NOTADB", "SQLITE_CORRUPT")
_LOCKED = ("SQLITE_BUSY", "SQLITE_LOCKED")

_MIX_COLUMNS = (
    "idx", "clients", "threads_per_client", "connections", "started_at", "ended_at", "window_s",
    "requests", "responses", "bytes", "body_bytes", "rps", "throughput_Bps",
    "errors_json", "latency_us_json", "status_json", "classes_json", "clients_json", "timeline_json",
    "histogram_b64", "monitor_json", "verdicts_json",
    "size_bytes", "client_cpu_s", "connections_opened", "access_log_requests", "cluster_json",
    "rate_rps", "specweb99_json", "lab_json", "tls_json", "network_json", "h2_json", "naps",
)  # fmt: skip
_RUN_COLUMNS = (
    "id", "suite", "target", "profile", "repeat_index", "status", "reason", "started_at", "ended_at",
    "config_json", "factors_json", "host_json",
)  # fmt: skip


class Store:
    """The results database of one lab; opening it creates the file and its schema if needed.

    Raises StoreError (one line, names the file and the fix) for an unusable file,
    an unknown run or a mix stored twice. Safe to share between threads.
    """

    def __init__(self, path: Path = DEFAULT_PATH, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.reserve = self.path.with_name(self.path.name + "-reserve")
        if read_only:
            self._conn = _open_read_only(self.path)
            self.journal_mode = str(self._conn.execute("PRAGMA journal_mode").fetchone()[0])
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise DiskFullError(f"create the directory {self.path.parent}", self._full()) from exc
            raise StoreError(
                f"cannot create the directory {self.path.parent}: {exc.strerror}: pass --db with a writable place"
            ) from exc
        try:
            # isolation_level=None: transactions are explicit (BEGIN IMMEDIATE per write), never implicit.
            self._conn = sqlite3.connect(
                str(self.path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            if self._disk_full(exc):
                raise DiskFullError(f"open {self.path}", self._full()) from exc
            raise StoreError(f"cannot open {self.path}: {exc}: pass --db with a writable file") from exc
        try:
            self._conn.execute("PRAGMA foreign_keys = ON")
            ensure_schema(self._conn, self.path)  # before WAL: never switch another program's file to WAL
            # WAL: readers see the last commit and never block the writer, nor it them.
            self.journal_mode = str(self._conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
            # FULL, not NORMAL: with WAL both survive a crash of the process (the commit is in
            # the OS's page cache), but only FULL fsyncs at each commit, so a mix also survives
            # power loss or a kernel panic. A mix lasts minutes and costs one fsync: cheap.
            self._conn.execute("PRAGMA synchronous = FULL")
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            if self._disk_full(exc):
                # Not the file's fault: SQLite could not write the schema or switch to WAL.
                raise DiskFullError(f"open {self.path}", self._full()) from exc
            if _named(exc, _DAMAGED + _LOCKED):
                raise self._file_error(None, exc) from exc
            raise StoreError(
                f"{self.path} is not a usable crest results file ({exc}): pass --db with another file"
            ) from exc
        except BaseException:
            self._conn.close()
            raise

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the file; safe to call twice."""
        with self._lock:
            self._conn.close()

    # -- writing (the runner) -------------------------------------------------------

    def create_run(self, meta: RunMeta) -> str:
        """Record a new run with status "running", started now; returns its id, e.g. "20261122-0712-a3f9"."""
        started_at = time.time()
        self._keep_reserve()
        row = (
            meta.suite, meta.target, meta.profile, int(meta.repeat_index), "running", None, started_at, None,
            _dump(meta.config), _dump(meta.factors), _dump(meta.host), _dump(owner.current()),
        )  # fmt: skip
        columns = (*_RUN_COLUMNS, "owner_json")
        sql = f"INSERT INTO runs ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        for _ in range(_ID_ATTEMPTS):
            run_id = new_run_id(started_at)
            try:
                with self._write("create a run") as conn:
                    conn.execute(sql, (run_id, *row))
                return run_id
            except sqlite3.IntegrityError as exc:
                if "runs.id" not in str(exc):
                    raise ValueError(f"the run meta lacks a value: {exc}") from exc
                continue  # the id is taken: draw another suffix
        raise StoreError(f"cannot find a free run id in {self.path} after {_ID_ATTEMPTS} tries: start the run again")

    def add_mix(self, run_id: str, mix: MixRecord) -> None:
        """Store one finished mix in one transaction; when this returns the mix is on disk."""
        row = (
            run_id, mix.index, mix.clients, mix.threads_per_client, mix.connections, mix.started_at, mix.ended_at,
            mix.window_s, mix.requests, mix.responses, mix.bytes, mix.body_bytes, mix.rps, mix.throughput_Bps,
            _dump(mix.errors), _dump(mix.latency_us), _dump(mix.status), _dump(mix.classes),
            _dump(mix.client_scores), _dump(mix.timeline), mix.histogram_b64, _dump(mix.monitor),
            _dump([v.to_json() for v in mix.verdicts]),
            mix.size_bytes, mix.client_cpu_s, mix.connections_opened, mix.access_log_requests,
            None if mix.cluster is None else _dump(mix.cluster),
            mix.rate_rps, None if mix.specweb99 is None else _dump(mix.specweb99),
            None if mix.lab is None else _dump(mix.lab),
            None if mix.tls is None else _dump(mix.tls),
            None if mix.network is None else _dump(mix.network),
            None if mix.h2 is None else _dump(mix.h2),
            mix.naps,
        )  # fmt: skip
        sql = f"INSERT INTO mixes (run_id, {', '.join(_MIX_COLUMNS)}) VALUES ({', '.join('?' * len(row))})"
        try:
            with self._write(f"store mix {mix.index} of run {run_id}") as conn:
                conn.execute(sql, row)
        except sqlite3.IntegrityError as exc:
            if "FOREIGN KEY" in str(exc):
                raise self._unknown(run_id) from exc
            if "UNIQUE" in str(exc):
                resume_at = self.next_mix_index(run_id)
                raise StoreError(
                    f"mix {mix.index} of run {run_id} is already in {self.path}: resume from mix {resume_at}"
                ) from exc
            raise ValueError(f"mix {mix.index} of run {run_id} lacks a value: {exc}") from exc

    def finish_run(self, run_id: str, status: str, reason: str | None = None) -> None:
        """Mark a run complete, interrupted or failed (with a reason), ended now."""
        if status not in FINAL_STATUSES:
            raise ValueError(f"a run ends as one of {', '.join(FINAL_STATUSES)}, not {status!r}")
        sql, values = (
            "UPDATE runs SET status = ?, reason = ?, ended_at = ? WHERE id = ?",
            (status, reason, time.time(), run_id),
        )
        try:
            with self._write(f"finish run {run_id}") as conn:
                updated = conn.execute(sql, values).rowcount
        except DiskFullError:
            # The disk filled: give up the reserve so that the run's end is written, then try once more.
            if not self._use_reserve():
                raise
            with self._write(f"finish run {run_id}") as conn:
                updated = conn.execute(sql, values).rowcount
        if updated == 0:
            raise self._unknown(run_id)

    def reopen_run(self, run_id: str) -> None:
        """Mark a stopped run "running" again for resume: reason and end time cleared, start time kept."""
        self._keep_reserve()
        with self._write(f"reopen run {run_id}") as conn:
            updated = conn.execute(
                "UPDATE runs SET status = 'running', reason = NULL, ended_at = NULL, owner_json = ? WHERE id = ?",
                (_dump(owner.current()), run_id),
            ).rowcount
        if updated == 0:
            raise self._unknown(run_id)

    # -- reading (crest runs, crest show, reports, resume) --------------------------

    def runs(self) -> list[RunSummary]:
        """Every run, newest first, with its config, how many mixes are stored and each one's req/s and
        throughput in ladder order (the peak among them is crest.analysis's to find)."""
        with self._read("list the runs") as conn:
            rows = conn.execute(
                "SELECT r.id, r.suite, r.target, r.profile, r.repeat_index, r.status, r.reason,"
                " r.started_at, r.ended_at, COUNT(m.idx), r.factors_json, r.config_json,"
                " COUNT(m.specweb99_json), COUNT(m.size_bytes), r.owner_json"
                " FROM runs r LEFT JOIN mixes m ON m.run_id = r.id"
                " GROUP BY r.id ORDER BY r.started_at DESC, r.id DESC"
            ).fetchall()
            mix_rps: dict[str, list[float]] = {}
            mix_throughput: dict[str, list[float]] = {}
            for run_id, rps, throughput in conn.execute(
                "SELECT run_id, rps, throughput_Bps FROM mixes ORDER BY run_id, idx"
            ):
                mix_rps.setdefault(run_id, []).append(_real(rps))
                mix_throughput.setdefault(run_id, []).append(_real(throughput))
        states = [_state(row[5], row[6], row[14]) for row in rows]
        return [
            RunSummary(
                id=row[0], suite=row[1], target=row[2], profile=row[3], repeat_index=row[4], status=state[0],
                reason=state[1], started_at=row[7], ended_at=row[8], mixes=row[9], mix_rps=mix_rps.get(row[0], []),
                factors=json.loads(row[10]), config=json.loads(row[11]),
                mix_throughput_Bps=mix_throughput.get(row[0], []), specweb99_mixes=row[12], sized_mixes=row[13],
            )
            for row, state in zip(rows, states, strict=True)
        ]  # fmt: skip

    def run(self, run_id: str) -> RunDetail:
        """One run with all its stored mixes in ladder order; `run_id` may be a unique prefix of the id."""
        with self._read(f"read run {run_id}") as conn:
            full_id = self._resolve(conn, run_id)
            row = conn.execute(
                f"SELECT {', '.join(_RUN_COLUMNS)}, owner_json FROM runs WHERE id = ?", (full_id,)
            ).fetchone()
            mix_rows = conn.execute(
                f"SELECT {', '.join(_MIX_COLUMNS)} FROM mixes WHERE run_id = ? ORDER BY idx", (full_id,)
            ).fetchall()
        (id_, suite, target, profile, repeat_index, status, reason, started_at, ended_at,
         config_json, factors_json, host_json, owner_json) = row  # fmt: skip
        status, reason = _state(status, reason, owner_json)
        meta = RunMeta(suite, target, profile, repeat_index, json.loads(config_json), json.loads(factors_json),
                       json.loads(host_json))  # fmt: skip
        return RunDetail(id_, meta, status, reason, started_at, ended_at, [_mix(r) for r in mix_rows])

    def select(self, names: list[str]) -> list[RunDetail]:
        """The runs that `names` name, in the order given, each once.

        A name is a run id (or a unique prefix of one) or an experiment id: the
        id that one `crest run` invocation gives every run it starts (stored in
        the run's config as "experiment"), which names all of those runs.
        """
        chosen: dict[str, None] = {}
        for name in names:
            with self._read(f"look up {name}") as conn:
                members = [r[0] for r in conn.execute(
                    "SELECT id FROM runs WHERE json_extract(config_json, '$.experiment') = ?"
                    " ORDER BY started_at, id",
                    (name,),
                )]  # fmt: skip
                if not members:
                    members = [self._resolve(conn, name)]
            chosen.update(dict.fromkeys(members))
        return [self.run(run_id) for run_id in chosen]

    def resolve(self, run_id: str) -> str:
        """The full id of the run that `run_id` names exactly or as a unique prefix."""
        with self._read(f"look up run {run_id}") as conn:
            return self._resolve(conn, run_id)

    def live_owner(self, run_id: str) -> int | None:
        """The pid of the crest process on this machine that is still writing run `run_id`; None when no
        such process is known (the run ended, its crest is gone, or it ran elsewhere)."""
        with self._read(f"read run {run_id}") as conn:
            row = conn.execute("SELECT status, owner_json FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise self._unknown(run_id)
        stored: dict[str, Any] = {} if row[1] is None else json.loads(row[1])
        return int(stored["pid"]) if row[0] == "running" and owner.alive(stored) else None

    def next_mix_index(self, run_id: str) -> int:
        """Where a resumed run continues: 1 + the last stored mix index, 0 when none is stored."""
        with self._read(f"read run {run_id}") as conn:
            if conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
                raise self._unknown(run_id)
            last = conn.execute("SELECT MAX(idx) FROM mixes WHERE run_id = ?", (run_id,)).fetchone()[0]
        return 0 if last is None else int(last) + 1

    # -- internals ----------------------------------------------------------------------

    @contextmanager
    def _write(self, action: str) -> Iterator[sqlite3.Connection]:
        """One write transaction; IMMEDIATE takes the write lock up front so it waits at BEGIN, not midway."""
        with self._lock, self._sqlite_errors(action):
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    @contextmanager
    def _read(self, action: str) -> Iterator[sqlite3.Connection]:
        """One read transaction: every SELECT inside sees the same snapshot, even while a run writes."""
        with self._lock, self._sqlite_errors(action):
            self._conn.execute("BEGIN")
            try:
                yield self._conn
            finally:
                if self._conn.in_transaction:
                    self._conn.execute("COMMIT")

    @contextmanager
    def _sqlite_errors(self, action: str) -> Iterator[None]:
        # IntegrityError is left to the caller, which knows what the constraint means.
        try:
            yield
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            if self._disk_full(exc):
                raise DiskFullError(action, self._full()) from exc
            if _named(exc, _DAMAGED + _LOCKED):
                raise self._file_error(action, exc) from exc
            raise StoreError(
                f"cannot {action} in {self.path}: {exc}: check the disk has space and no other program locks the file"
            ) from exc

    def _file_error(self, action: str | None, exc: sqlite3.Error) -> StoreFileError:
        """The file itself failed: damaged, or locked past the busy timeout; `action` what crest was doing."""
        cannot = "" if action is None else f"cannot {action}: "
        if _named(exc, _LOCKED):
            return StoreFileError(
                f"{cannot}{self.path} is locked ({exc}): another crest process is writing it:"
                " wait for it to end, or pass --db with another file"
            )
        return StoreFileError(
            f"{cannot}{self.path} is damaged or not an SQLite file ({exc}):"
            " move it aside (crest then starts a new one), or pass --db with another file"
        )

    def _keep_reserve(self) -> None:
        """Make the reserve file if it is missing; a disk too full for it is left to fail at the next write."""
        try:
            if self.reserve.stat().st_size >= RESERVE_BYTES:
                return
        except OSError:
            pass
        try:
            with open(self.reserve, "wb") as f:
                f.write(b"\0" * RESERVE_BYTES)
                f.flush()
                os.fsync(f.fileno())
        except OSError:
            self.reserve.unlink(missing_ok=True)

    def _use_reserve(self) -> bool:
        """Remove the reserve file to make room; whether there was one."""
        try:
            self.reserve.unlink()
        except OSError:
            return False
        return True

    def _full(self) -> str:
        return f"the disk holding {self.path} is full ({os.strerror(errno.ENOSPC)})"

    def _disk_full(self, exc: sqlite3.Error) -> bool:
        """Whether SQLite failed because the store's disk is full (SQLITE_FULL, or an I/O error with no room left)."""
        name = str(getattr(exc, "sqlite_errorname", ""))
        if name == "SQLITE_FULL":
            return True
        if not name.startswith(("SQLITE_IOERR", "SQLITE_CANTOPEN")):
            return False
        try:
            st = os.statvfs(self.path.parent)
        except OSError:
            return False
        return st.f_bavail * st.f_frsize < _FULL_BELOW_BYTES

    def _resolve(self, conn: sqlite3.Connection, run_id: str) -> str:
        if conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is not None:
            return run_id
        if not run_id:
            raise self._unknown(run_id)  # the empty prefix would match every run
        matches = [r[0] for r in conn.execute(
            "SELECT id FROM runs WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT ?",
            (len(run_id), run_id, _AMBIGUOUS_SHOWN + 1),
        )]  # fmt: skip
        if len(matches) == 1:
            return str(matches[0])
        if not matches:
            raise self._unknown(run_id)
        shown = ", ".join(matches[:_AMBIGUOUS_SHOWN]) + (", …" if len(matches) > _AMBIGUOUS_SHOWN else "")
        raise StoreError(f"run id {run_id!r} is ambiguous in {self.path}: it starts {shown}: give more of the id")

    def _unknown(self, run_id: str) -> StoreError:
        return no_run_error(self.path, run_id)


def _open_read_only(path: Path) -> sqlite3.Connection:
    """A connection that can only read `path` (SQLite's mode=ro): the file must exist and be a crest file of
    this schema version; an older one is upgraded only by a writer (any crest command that writes)."""
    if not path.is_file():
        raise StoreError(f"no results file {path}: pass --db with the file `crest run` wrote")
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {path} to read: {exc}: pass --db with a readable file") from exc
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreFileError(f"{path} is damaged or not an SQLite file ({exc}): pass --db with another file") from exc
    problem = None
    if app_id != APPLICATION_ID:
        problem = f"{path} is not a crest results file: pass --db with another file"
    elif version > SCHEMA_VERSION:
        problem = f"{path} was written by a newer crest (store schema {version}): upgrade crest"
    elif version < SCHEMA_VERSION:
        problem = (
            f"{path} uses the older store schema {version}: upgrade it once with `crest runs --db {path}`,"
            " then open it again"
        )
    if problem is not None:
        conn.close()
        raise StoreError(problem)
    return conn


def no_run_error(path: Path, run_id: str) -> StoreError:
    """The error for a run id that names no run in the file at `path` (or when there is no file)."""
    hint = "crest runs" if Path(path) == DEFAULT_PATH else f"crest runs --db {path}"
    return StoreError(f"no run {run_id!r} in {path}: see `{hint}`")


def new_run_id(at: float) -> str:
    """A short id that sorts by start minute: UTC date-time plus 16 random bits, e.g. "20261122-0712-a3f9".

    UTC, so ids from different time zones, or either side of a DST change, still sort by time.
    """
    return time.strftime("%Y%m%d-%H%M", time.gmtime(at)) + "-" + secrets.token_hex(2)


def _named(exc: sqlite3.Error, names: tuple[str, ...]) -> bool:
    """Whether SQLite's error name (e.g. SQLITE_BUSY, or an extended SQLITE_BUSY_SNAPSHOT) is one of `names`."""
    name = str(getattr(exc, "sqlite_errorname", ""))
    return any(name == n or name.startswith(n + "_") for n in names)


def _state(status: str, reason: str | None, owner_json: str | None) -> tuple[str, str | None]:
    """A run's status and reason as a reader should see them: "running" whose crest is gone is interrupted."""
    if status != "running" or owner_json is None:
        return status, reason
    stored = json.loads(owner_json)
    if not owner.gone(stored):
        return status, reason
    return "interrupted", f"its crest (pid {stored.get('pid')}) ended without finishing it"


def _dump(value: Any) -> str:
    # default=str: a resolved config may hold Paths or enums; their text is what a reader needs.
    return json.dumps(value, separators=(",", ":"), default=str)


def _mix(row: tuple[Any, ...]) -> MixRecord:
    (idx, clients, threads, connections, started_at, ended_at, window_s, requests, responses, nbytes,
     body_bytes, rps, throughput, *json_columns, histogram_b64, monitor_json, verdicts_json,
     size_bytes, client_cpu_s, connections_opened, access_log_requests, cluster_json, rate_rps,
     specweb99_json, lab_json, tls_json, network_json, h2_json, naps) = row  # fmt: skip
    errors, latency_us, status, classes, client_scores, timeline = (json.loads(c) for c in json_columns)
    return MixRecord(
        index=idx, clients=clients, threads_per_client=threads, connections=connections,
        started_at=started_at, ended_at=ended_at, window_s=window_s, requests=requests, responses=responses,
        bytes=nbytes, body_bytes=body_bytes, rps=_real(rps), throughput_Bps=_real(throughput),
        errors=errors, latency_us=latency_us, status=status, classes=classes, client_scores=client_scores,
        timeline=timeline, histogram_b64=histogram_b64, monitor=json.loads(monitor_json),
        verdicts=[Verdict.from_json(v) for v in json.loads(verdicts_json)],
        size_bytes=size_bytes, client_cpu_s=client_cpu_s, connections_opened=connections_opened,
        access_log_requests=access_log_requests,
        cluster=None if cluster_json is None else json.loads(cluster_json),
        rate_rps=rate_rps, specweb99=None if specweb99_json is None else json.loads(specweb99_json),
        lab=None if lab_json is None else json.loads(lab_json),
        tls=None if tls_json is None else json.loads(tls_json),
        network=None if network_json is None else json.loads(network_json),
        h2=None if h2_json is None else json.loads(h2_json),
        naps=naps,
    )  # fmt: skip


def _real(value: float | None) -> float:
    # SQLite stores a NaN as NULL; read it back as the NaN it was.
    return math.nan if value is None else float(value)
