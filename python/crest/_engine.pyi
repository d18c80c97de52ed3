"""Type stubs of the compiled load engine (crates/py); the contract between Rust and Python."""

from typing import final

__all__ = ["Run", "Server", "start_run", "start_server", "version"]

def version() -> str:
    """The engine's version string."""

def start_run(config_json: str) -> Run:
    """Start a run from RunConfig JSON; raises ValueError (one line) on an invalid config, before any traffic."""

@final
class Run:
    """A running load test; poll it with wait()."""

    def live(self) -> dict[str, float | int]:
        """Cumulative counters so far: elapsed_s, requests, errors, bytes, connections_opened."""

    def cancel(self) -> None:
        """Stop promptly; wait() then returns the partial report."""

    def wait(self, timeout_s: float) -> str | None:
        """RunReport JSON once finished, else None after timeout_s (releases the GIL)."""

def start_server(config_json: str) -> Server:
    """Start the built-in target from ServeConfig JSON; raises ValueError or OSError (one line)."""

@final
class Server:
    """A running built-in target."""

    urls: list[str]

    def stop(self) -> None:
        """Stop serving and release the ports."""
