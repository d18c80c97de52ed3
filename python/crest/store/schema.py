"""The SQLite schema of a crest results file, its version check and upgrade; owns DDL, never reads or writes records."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from crest.store.errors import StoreError
from crest.store.migrate import MIGRATIONS

# Bump on any change to the tables below, and add a migration from the previous version (migrate.py).
# 2: typed verdicts (verdicts_json) instead of warning texts; size_bytes, client_cpu_s,
#    connections_opened and access_log_requests as columns instead of inside monitor_json.
# 3: cluster_json, a cluster mix's per-node breakdown and clock offsets (NULL for a mix run on one machine).
# 4: rate_rps, an open-loop mix's total request rate (a capacity search's load on the rate axis), and
#    specweb99_json, a SPECweb99 iteration's harness figures (conformance, POST-log check, validity).
# 5: lab_json, what the lab did and saw around a mix beside its load (a target restart before it, a
#    warm-up pass, per-role access-log counts of per-class targets); NULL when nothing.
#    tls_json, what a mix's TLS handshakes negotiated (count, resumed, protocol and cipher suite pairs).
# 6: network_json, a mix's client-network figures (--network: each link's bytes, utilisation, drops,
#    TCP's counters of the target and the clients); NULL for a mix sent over loopback.
# 7: h2_json, an HTTP/2 mix's counters (streams in use, header block and raw bytes, GOAWAYs, resets,
#    refused streams); NULL for HTTP/1.x.
# 8: naps, how often the engine's threads napped instead of blocking on their sockets (crest run --no-nap:
#    none); NULL for a mix stored before crest napped, whose engine always blocked.
# 9: owner_json, the crest process writing a run (host, boot id, pid, start time): a "running" run whose
#    owner is gone reads as interrupted; NULL for a run stored before crest recorded it (never judged).
SCHEMA_VERSION = 9
# "CRST": marks the file as crest's, so a foreign SQLite file is refused instead of written into.
APPLICATION_ID = 0x43525354

# Times are unix seconds (REAL); *_s are seconds, *_us microseconds, *_Bps bytes per second.
# Nested values are JSON text: they are read back whole, never queried piecewise.
_TABLES = (
    """
    CREATE TABLE runs (
        id            TEXT PRIMARY KEY,
        suite         TEXT NOT NULL,
        target        TEXT NOT NULL,
        profile       TEXT NOT NULL,
        repeat_index  INTEGER NOT NULL,
        status        TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
        reason        TEXT,
        started_at    REAL NOT NULL,
        ended_at      REAL,
        config_json   TEXT NOT NULL,
        factors_json  TEXT NOT NULL,
        host_json     TEXT NOT NULL,
        owner_json    TEXT             -- the crest process writing it (store/owner.py); NULL: not recorded
    )
    """,
    "CREATE INDEX runs_started_at ON runs (started_at)",
    """
    CREATE TABLE mixes (
        run_id              TEXT NOT NULL REFERENCES runs (id),
        idx                 INTEGER NOT NULL,
        clients             INTEGER NOT NULL,
        threads_per_client  INTEGER NOT NULL,
        connections         INTEGER NOT NULL,
        started_at          REAL NOT NULL,
        ended_at            REAL NOT NULL,
        window_s            REAL NOT NULL,
        requests            INTEGER NOT NULL,
        responses           INTEGER NOT NULL,
        bytes               INTEGER NOT NULL,
        body_bytes          INTEGER NOT NULL,
        rps                 REAL,
        throughput_Bps      REAL,
        errors_json         TEXT NOT NULL,
        latency_us_json     TEXT NOT NULL,
        status_json         TEXT NOT NULL,
        classes_json        TEXT NOT NULL,
        clients_json        TEXT NOT NULL,
        timeline_json       TEXT NOT NULL,
        histogram_b64       TEXT NOT NULL,
        monitor_json        TEXT NOT NULL,
        verdicts_json       TEXT NOT NULL,  -- [{"kind", "message", ...figures}], see crest.verdicts
        size_bytes          INTEGER,        -- a sweep's content length; NULL for other mixes
        client_cpu_s        REAL,
        connections_opened  INTEGER,
        access_log_requests INTEGER,        -- NULL unless the target logged requests
        cluster_json        TEXT,           -- a cluster mix's nodes (clients, requests, clock offset); NULL locally
        rate_rps            REAL,           -- an open-loop mix's total rate; NULL for a closed loop
        specweb99_json      TEXT,           -- a SPECweb99 iteration's harness figures; NULL for other mixes
        lab_json            TEXT,           -- restart, warm-up, per-role access-log counts; NULL when none
        tls_json            TEXT,           -- TLS handshakes and what they negotiated; NULL without TLS
        network_json        TEXT,           -- the client network's links and TCP in the window; NULL without --network
        h2_json             TEXT,           -- HTTP/2's counters (streams, HPACK bytes, GOAWAYs, resets); NULL for HTTP/1.x
        naps                INTEGER,        -- the engine's naps instead of blocking; NULL: stored before crest napped
        PRIMARY KEY (run_id, idx)
    )
    """,
)


def ensure_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Create the tables in a new file, or check that an existing file is a crest file of this version,
    upgrading it in place when an older crest wrote it (migrate.py).

    `conn` must be in autocommit mode (isolation_level=None).

    Raises:
        StoreError: the file belongs to another program, to a newer crest, or to an older one without a migration.
    """
    version = _version(conn)
    if version == 0:
        version = _create(conn, path)
    if int(conn.execute("PRAGMA application_id").fetchone()[0]) != APPLICATION_ID:
        raise _foreign(path)
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} was written by a newer crest (store schema {version}, this crest reads {SCHEMA_VERSION}):"
            " upgrade crest, or pass --db with another file"
        )
    if version < SCHEMA_VERSION:
        _migrate(conn, path)


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Upgrade an older file in place, one version at a time, all in one IMMEDIATE transaction: a
    reader sees the old file or the new one, and a second process opening it at once waits, then
    finds it upgraded."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = _version(conn)  # again, under the write lock
        while version < SCHEMA_VERSION:
            step = MIGRATIONS.get(version)
            if step is None:
                raise StoreError(
                    f"{path} uses store schema {version}, which this crest cannot upgrade to {SCHEMA_VERSION}:"
                    " move the file aside, or pass --db with another file"
                )
            step(conn)
            version += 1
            conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _create(conn: sqlite3.Connection, path: Path) -> int:
    """Create the tables in an empty file; returns the schema version the file has afterwards.

    The check and the creation share one IMMEDIATE transaction, so two processes
    opening a new file at once cannot both create it.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = _version(conn)  # again, under the write lock: another process may have just created it
        if version == 0:
            # Only an empty file is ours to fill: never add tables to another program's database.
            foreign_id = int(conn.execute("PRAGMA application_id").fetchone()[0]) not in (0, APPLICATION_ID)
            if foreign_id or conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None:
                raise _foreign(path)
            for statement in _TABLES:
                conn.execute(statement)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            version = SCHEMA_VERSION
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return version


def _version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _foreign(path: Path) -> StoreError:
    return StoreError(
        f"{path} is an SQLite file of another program, not a crest results file: pass --db with another file"
    )
