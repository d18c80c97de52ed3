"""Secrets stay secret: a Secret shows as "***", json.dumps refuses it, it pickles as itself (a Ray actor's
argument); a RunSpec turns a text password into one; only the engine's JSON holds the value; a run's
config, as `crest bench --json` prints it and the store keeps it, has none. Then crest as a user runs it
against Samba, with a marker password through $CREST_SMB_PASSWORD: a file run, crest runs, crest show and
every report format, and a refused login; the marker is in no byte of the store, the reports, the logs,
stdout or stderr, nor (a cluster run) in any file of the Ray nodes' sessions."""

from __future__ import annotations

import json
import pickle
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from crest.errors import ConfigError, TargetError
from crest.filesets.cache import empty_docroot
from crest.load.client import LoadClient, RunResult
from crest.load.runspec import RunSpec, engine_json
from crest.runner.request import PASSWORD_ENV, smb_password
from crest.secrets import MASK, Secret, without_secrets
from crest.servers.base import ServerSettings, Target
from crest.servers.registry import adapter
from support import run_cli, run_cli_in_process
from test_fileops import LOADFILE, SUITE

MARKER = "crest-marker-5f3a9c1e"


def _smb_spec(password: str | Secret, port: int = 1, loadfile: str = "/nonexistent/tiny.txt") -> RunSpec:
    return RunSpec(url=f"smb://crest@127.0.0.1:{port}/crest", connections=1, duration_s=1.0,
                   loadfile={"path": loadfile, "password": password, "cleanup": True})  # fmt: skip


def test_a_secret_never_shows_its_value() -> None:
    secret = Secret(MARKER)
    shown = [repr(secret), str(secret), f"{secret}", f"{secret:>30}", f"{secret!s} {secret!r}",
             repr([secret]), repr({"password": secret}), repr(_smb_spec(secret))]  # fmt: skip
    assert not any(MARKER in text for text in shown)
    assert str(secret) == MASK and secret.reveal() == MARKER
    with pytest.raises(TypeError):
        json.dumps({"password": secret})
    with pytest.raises(AttributeError):
        secret._value = "changed"  # type: ignore[misc]
    again = pickle.loads(pickle.dumps(secret))
    assert isinstance(again, Secret) and again == secret and again.reveal() == MARKER


def test_only_the_engines_json_holds_the_password() -> None:
    spec = _smb_spec(MARKER)
    assert spec.loadfile is not None and isinstance(spec.loadfile["password"], Secret)
    config = spec.to_config()
    assert json.loads(engine_json(config))["loadfile"]["password"] == MARKER
    public = without_secrets(config)
    assert "password" not in public["loadfile"] and public["loadfile"]["path"] == "/nonexistent/tiny.txt"
    result = RunResult({}, config, interrupted=False)
    assert MARKER not in json.dumps(result.config)


def test_the_password_comes_as_a_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PASSWORD_ENV, MARKER)
    found = smb_password(None)
    assert isinstance(found, Secret) and found.reveal() == MARKER
    secret = tmp_path / "pw"
    secret.write_text(f"{MARKER}\n")
    secret.chmod(0o600)
    found = smb_password(secret)
    assert isinstance(found, Secret) and found.reveal() == MARKER


def test_an_unreachable_target_names_no_password(tmp_path: Path, closed_port: int) -> None:
    loadfile = tmp_path / "tiny.txt"
    loadfile.write_text(LOADFILE)
    client = LoadClient(_smb_spec(MARKER, closed_port, str(loadfile)))  # the engine validated it, password in
    with pytest.raises((TargetError, ConfigError)) as caught:
        client.preflight()
    assert MARKER not in str(caught.value) and MARKER not in repr(client.spec)


@pytest.fixture(scope="module")
def samba_target() -> Iterator[Target]:
    a = adapter("samba")
    if not a.installed():
        pytest.skip("apt-get install samba smbclient")
    target = Target(a, ServerSettings(docroot=empty_docroot(), kinds=frozenset({"loadfile"})))
    target.start()
    try:
        yield target
    finally:
        target.stop()


def _leaks(root: Path, marker: str, outputs: list[str]) -> list[str]:
    """Where `marker` shows: any file under `root` (the store and its WAL, reports, logs) and any output."""
    found = [str(p) for p in sorted(root.rglob("*")) if p.is_file() and marker.encode() in p.read_bytes()]
    return found + [f"output {i}" for i, text in enumerate(outputs) if marker in text]


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_no_command_shows_the_password(samba_target: Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The marker is the login's real password (random, unique): a run that uses it succeeds only if it
    # reached the engine, and any copy of it anywhere else is a leak.
    assert samba_target.secret_file is not None
    marker = Path(samba_target.secret_file).read_text().strip()
    loadfile, suite, db = tmp_path / "tiny.txt", tmp_path / "tiny.toml", tmp_path / "results" / "r.db"
    loadfile.write_text(LOADFILE)
    suite.write_text(SUITE.format(loadfile=loadfile))
    monkeypatch.setenv(PASSWORD_ENV, marker)
    outputs: list[str] = []

    def crest(*args: str, code: int = 0) -> str:
        # The load runs in a process of its own; the commands on the store and a refused login need none.
        done = run_cli(*args, timeout_s=90) if args[0] == "run" and code == 0 else run_cli_in_process(*args)
        outputs.extend((done.stdout, done.stderr))
        assert done.returncode == code, done.stderr
        return done.stdout if code == 0 else done.stderr

    crest("run", str(suite), "--target", samba_target.url, "--db", str(db))
    run_id = json.loads(crest("runs", "--db", str(db), "--json"))[0]["id"]
    crest("runs", "--db", str(db))
    crest("show", run_id, "--db", str(db))
    crest("show", run_id, "--db", str(db), "--json")
    reports = tmp_path / "reports"
    for fmt in ("html", "md", "json", "csv"):
        crest("report", run_id, "--db", str(db), "-o", str(reports / f"r.{fmt}"))
    assert {p.suffix for p in reports.iterdir()} == {".html", ".md", ".json", ".csv"}
    # A refused login: its one line names neither the right password nor the wrong one.
    monkeypatch.setenv(PASSWORD_ENV, f"wrong-{marker}")
    refused = crest("run", str(suite), "--target", samba_target.url, "--db", str(db), code=2)
    assert "wrong user or password" in refused and len(refused.strip().splitlines()) == 1, refused
    with sqlite3.connect(db) as conn:  # the WAL's pages too, into the file
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert _leaks(tmp_path, marker, outputs) == []
