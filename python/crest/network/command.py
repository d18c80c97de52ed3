"""Running one of the network's commands (ip, tc, sysctl, ethtool, nft) with a timeout, its failure in one
line of crest's words. Owns only that; what to run is its callers'."""

from __future__ import annotations

import subprocess

from crest.errors import MachineError

TIMEOUT_S = 30.0


def run(argv: list[str], *, doing: str, install: str, stdin: str | None = None, check: bool = True) -> str:
    """Run `argv` (`stdin` fed to it) and return its output.

    Args:
        doing: what the command is part of, for the message ("build the client network").
        install: the packages that bring the command (`apt-get install -y ...`).

    Raises:
        MachineError: the command is missing, or (with `check`) it failed: one line naming it.
    """
    try:
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise MachineError(f"--network needs {argv[0]}: apt-get install -y {install}") from None
    if check and done.returncode != 0:
        why = (done.stderr.strip() or done.stdout.strip()).splitlines()[:1] or [f"exit {done.returncode}"]
        raise MachineError(f"cannot {doing}: `{' '.join(argv[:6])}` failed: {why[0]}")
    return done.stdout
