"""Target-side processes: start one in its own session (pinned, in a cgroup), stop it and every descendant.

Owns the lifetime of server and helper processes: nothing crest starts for a
target outlives the `Processes` that started it — not on errors, not on
Ctrl-C, not when the interpreter exits, and not when crest is killed (SIGKILL):
each process the main thread starts gets SIGTERM from the kernel when crest dies
(PR_SET_PDEATHSIG), and a server ends its own workers on SIGTERM. Knows nothing
of server configs.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import pwd
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

from crest.errors import TargetError
from crest.network.netns import enter as enter_netns

# How long a process may take to exit after SIGTERM before it gets SIGKILL.
STOP_GRACE_S = 5.0
# Lines of a server's log quoted in a start-up error.
LOG_TAIL_LINES = 5
# prctl(2)'s option: the signal the kernel sends the calling process when its parent dies.
_PR_SET_PDEATHSIG = 1
# Loaded before any fork: the child's setup may only call what is already there.
try:
    _LIBC: ctypes.CDLL | None = ctypes.CDLL(None, use_errno=True)
except OSError:
    _LIBC = None


@dataclass
class Started:
    """One process crest started, with the files its output goes to."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.popen.pid


class Processes:
    """The processes of one target (server and helpers); `stop()` ends them all, descendants included."""

    def __init__(self) -> None:
        self.started: list[Started] = []
        _LIVE.add(self)

    def start(
        self,
        name: str,
        argv: Sequence[str],
        *,
        log: Path,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        cpus: Sequence[int] | None = None,
        cgroup_procs: Sequence[Path] = (),
        stdin_socket: int | None = None,
        user: str | None = None,
        netns: str | None = None,
    ) -> Started:
        """Start `argv` in a new session with stdout and stderr appended to `log`.

        The child pins itself to `cpus` and joins the cgroup (by writing its
        pid to each of `cgroup_procs`: on v1 a cgroup has one directory per
        controller) before exec, so every process it forks is pinned and limited from its first instruction. With `user` (crest
        running as root) it then drops to that account and its primary group.

        Raises:
            TargetError: the program cannot be started.
        """

        def setup() -> None:
            # Default signal dispositions: a server must see SIGINT/SIGTERM as it would from init.
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
                signal.signal(sig, signal.SIG_DFL)
            for procs in cgroup_procs:
                procs.write_text(f"{os.getpid()}\n")
            if netns is not None:  # a target in a client network listens in its own namespace
                enter_netns(netns)
            if cpus:
                os.sched_setaffinity(0, set(cpus))
            if account is not None:  # joining the cgroup needs root
                os.setgroups([])
                os.setgid(account.pw_gid)
                os.setuid(account.pw_uid)
            if die_with_crest:  # last: a change of user clears it
                _LIBC.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)  # type: ignore[union-attr]
                if os.getppid() != crest_pid:  # crest died before prctl took hold
                    os.kill(os.getpid(), signal.SIGTERM)

        # The kernel sends it when the thread that forked the child ends, not the process: only the main
        # thread's children may have it (a child started from a worker thread is stopped by stop_all()).
        die_with_crest = _LIBC is not None and threading.current_thread() is threading.main_thread()
        crest_pid = os.getpid()
        try:
            account = pwd.getpwnam(user) if user is not None else None
        except KeyError:
            raise TargetError(f"cannot start {name}: no account {user!r} on this machine") from None
        out = log.open("ab")
        try:
            popen = subprocess.Popen(
                list(argv),
                stdin=stdin_socket if stdin_socket is not None else subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env=env,
                start_new_session=True,
                preexec_fn=setup,
                close_fds=True,
            )
        except OSError as exc:
            raise TargetError(f"cannot start {name} ({argv[0]}): {exc.strerror or exc}") from None
        finally:
            out.close()
        started = Started(name, popen, log)
        self.started.append(started)
        return started

    def pids(self) -> list[int]:
        """Every live process of the target: the started ones and all their descendants."""
        found: dict[int, None] = {}
        for s in self.started:
            for proc in _tree(s.pid):
                found[proc.pid] = None
        return list(found)

    def check_alive(self) -> None:
        """Raises TargetError naming the first started process that has exited, with its log's last lines."""
        for s in self.started:
            code = s.popen.poll()
            if code is not None:
                raise TargetError(f"{s.name} exited with code {code}: {log_tail(s.log)}")

    def stop(self) -> None:
        """SIGTERM to every process group and descendant, then SIGKILL what is left; safe to call twice."""
        procs = [p for s in self.started for p in _tree(s.pid)]
        for s in self.started:
            _signal_group(s.pid, signal.SIGTERM)
        for p in procs:
            _signal(p, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for s in self.started:
            try:
                s.popen.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        _, alive = psutil.wait_procs(procs, timeout=max(0.0, deadline - time.monotonic()))
        for s in self.started:
            _signal_group(s.pid, signal.SIGKILL)
        for p in alive:
            _signal(p, signal.SIGKILL)
        psutil.wait_procs(alive, timeout=STOP_GRACE_S)
        for s in self.started:
            if s.popen.poll() is None:
                s.popen.kill()
            s.popen.wait()
        self.started.clear()


def wait_until(check: Callable[[], bool], *, timeout_s: float, what: str, processes: Processes) -> None:
    """Poll `check` until it is true; fail early when a process dies, or after `timeout_s`.

    Raises:
        TargetError: a process exited, or `what` did not happen in time.
    """
    deadline = time.monotonic() + timeout_s
    delay = 0.01
    while True:
        processes.check_alive()
        if check():
            return
        if time.monotonic() >= deadline:
            logs = "; ".join(f"{s.name}: {log_tail(s.log)}" for s in processes.started)
            raise TargetError(f"{what} within {timeout_s:.0f} s: {logs}")
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last lines of a log, folded into one line (for one-line errors)."""
    try:
        text = path.read_text(errors="replace").strip().splitlines()[-lines:]
    except OSError:
        return "(no log)"
    return " | ".join(line.strip() for line in text) or "(empty log)"


def _tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _signal(proc: psutil.Process, sig: signal.Signals) -> None:
    try:
        proc.send_signal(sig)
    except psutil.Error:
        pass


# Every Processes still holding processes; stopped at interpreter exit and on SIGTERM
# so a killed crest does not leave servers behind.
_LIVE: weakref.WeakSet[Processes] = weakref.WeakSet()


def stop_all() -> None:
    """Stop every target process this interpreter started and has not stopped yet."""
    for processes in list(_LIVE):
        processes.stop()


atexit.register(stop_all)
