"""Type stubs of the compiled load engine (crates/py); the contract between Rust and Python."""

from typing import Any, final

__all__ = [
    "ConfigError",
    "MachineError",
    "Run",
    "Server",
    "merge_parts",
    "probe_file_target",
    "scan_log",
    "start_run",
    "start_server",
    "validate",
    "version",
]

class ConfigError(ValueError):
    """Bad input the engine refuses before any traffic.

    `field` is the RunConfig key at fault ("" when the JSON itself is malformed);
    `template` is the one-line message with other keys as `{key}` placeholders, for
    rewording as flags; str() shows the bare key names.
    """

    field: str
    template: str

class MachineError(RuntimeError):
    """The machine failed a valid run: an event loop, a thread or TLS setup refused, or a worker panicked."""

def live_latency_lower_us() -> list[int]:
    """The lower bound in µs of each bucket of Run.live()'s latency_buckets (two per power of two)."""

def version() -> str:
    """The engine's version string."""

def validate(config_json: str) -> None:
    """Check RunConfig JSON against every engine rule but name resolution (no DNS, no socket); raises ConfigError."""

def probe_file_target(config_json: str) -> None:
    """Check a file-operation RunConfig as a run would before any load, starting nothing: the input, and for
    an smb:// target that the server answers and takes the user, the password and the share (one session set
    up and dropped; releases the GIL). Raises ConfigError naming the problem and the fix."""

def start_run(config_json: str) -> Run:
    """Start a run from RunConfig JSON.

    Raises ConfigError on an invalid config (also a host name that does not resolve) and
    MachineError when the machine refuses an event loop, a thread or TLS; nothing is sent either way.
    """

@final
class Run:
    """A running load test; poll it with wait()."""

    def live(self) -> dict[str, Any]:
        """Cumulative counters so far: elapsed_s, requests, errors (both inside the measured window), bytes,
        connections_opened; and over the whole run, ramps included: completed, received (bytes), failed (by error kind) and
        latency_buckets (successes by live_latency_lower_us()'s buckets)."""

    def cancel(self) -> None:
        """Stop promptly; wait() then returns the partial report."""

    def wait(self, timeout_s: float) -> str | None:
        """RunReport JSON once finished, else None after timeout_s (releases the GIL); MachineError if a worker panicked."""

def merge_parts(parts: list[str], first_clients: list[int]) -> str:
    """Merge the parts of one run's nodes into the RunReport JSON of all their stats at once.

    Each part is the `part` string of a node's RunReport (a run with `report_part` set),
    its clients numbered from 0; part i's client c becomes client `first_clients[i] + c`.
    Counts, histograms and timelines add exactly (the percentiles are the union's);
    threads, connections, client CPU time and open-loop rates add; duration is the
    longest; cancelled if any was. Classes, window, duration and load model must agree.
    Releases the GIL. Raises ConfigError (field "") for a malformed part, parts of
    different runs, or lists of different lengths; the message names the part.
    """

def scan_log(path: str, options_json: str) -> str:
    """Read the access log at `path` and return its summary (JSON).

    `options_json` is the reader's options: {"format": "auto" | a name | a format string,
    "session_key": "client" | {"cookie": NAME}, "session_gap_s": 1800, "max_bad_lines": 0}.
    The summary: format, lines, requests, skipped, bad_lines, distinct, sessions,
    first_unix_s, duration_s, peak_concurrency (None unless durations are logged),
    class_requests and classes, table_bytes, and entries (method, target, status,
    body_bytes, count, class). The table stays cached for a run replaying the same file.
    Releases the GIL. Raises ConfigError (field "replay") for bad options, a file that
    cannot be read, an unknown format, a line that does not parse (its number named) or
    a log with no request to replay: one line, verbatim (`template` is the same text).
    """

def start_server(config_json: str) -> Server:
    """Start the built-in target from ServeConfig JSON; raises ValueError or OSError (one line)."""

@final
class Server:
    """A running built-in target."""

    urls: list[str]

    def stop(self) -> None:
        """Stop serving and release the ports."""
