"""Scripted sessions through `crest run` as a user runs them: a suite with a [workload.script] and a CSV of
users against the built-in target crest starts. Its in-process page echoes the query string, so the script
logs in (extracting a token from the echo), uses the token (the target's access log shows each user's own),
and has a step whose extraction misses: that step's class holds the validation errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from crest.store import Store
from support import run_cli

pytestmark = pytest.mark.integration  # starts the built-in target

SUITE = """
name = "login-script"
description = "log in, use the token, miss an extraction"
source = "crest tests"

[workload]
http_version = "1.1"
keepalive = true

[workload.script]
users = "users.csv"

[[workload.script.steps]]
name = "login"
path = "/dyn/env?user={{user}}&token=t{{pass}}"
extract = [{ name = "token", regex = "token=(t[a-z0-9]+)" }]

[[workload.script.steps]]
name = "use"
path = "/dyn/env?again={{token}}"
expect_status = 200
think_s = 0.02

[[workload.script.steps]]
name = "miss"
path = "/dyn/env?x=1"
extract = [{ name = "id", json = "/id" }]

[ladder]
clients = [2]

[timing]
length_s = 2
"""


# One short mix: about 2 s of load and the built-in target's start and stop.
@pytest.mark.timeout(60)
def test_a_script_logs_in_uses_its_token_and_fails_the_step_that_misses(tmp_path: Path) -> None:
    (tmp_path / "users.csv").write_text("user,pass\nalice,a1\nbob,b2\n")
    (tmp_path / "login.toml").write_text(SUITE)
    db = tmp_path / "crest.db"
    result = run_cli("run", str(tmp_path / "login.toml"), "--server", "builtin", "--access-log", "--db", str(db), "-q")
    assert result.returncode == 0, result.stderr
    with Store(db) as store:
        (run,) = store.runs()
        detail = store.run(run.id)
    assert detail.status == "complete"
    (mix,) = detail.mixes
    classes = mix.classes
    assert set(classes) == {"login", "use", "miss"}, classes
    assert classes["login"]["requests"] > 0 and classes["use"]["requests"] > 0
    assert classes["login"]["errors"] == classes["use"]["errors"] == 0
    assert classes["miss"]["requests"] == 0 and classes["miss"]["errors"] > 0
    assert mix.errors.get("validation") == classes["miss"]["errors"]
    served = (db.parent / "logs" / run.id / "access.log").read_text()
    assert "/dyn/env?again=ta1 " in served and "/dyn/env?again=tb2 " in served
