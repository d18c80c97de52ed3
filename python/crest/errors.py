"""The one exception hierarchy of crest; library code raises these, only the CLI prints them.

Every message is one line that names the problem and the fix, because the CLI
prints it verbatim after `crest: error:`.
"""


class CrestError(Exception):
    """Base class of every error crest raises on purpose."""


class ConfigError(CrestError):
    """Bad input: detected before any traffic is sent (CLI exit code 2)."""


class TargetError(CrestError):
    """The target cannot be reached or started (CLI exit code 2)."""


class PeerError(CrestError):
    """The target answered, but not as the benchmark requires: a failed SPECweb99 operational validation,
    Reset or Fetch, or a bench in which no request succeeded (CLI exit code 1: a failure of a peer, not
    of the input)."""


class EngineError(CrestError):
    """The load engine failed or misbehaved at run time (CLI exit code 1)."""


class MachineError(CrestError):
    """The machine failed a valid request: an event loop, a thread or TLS setup refused, a worker
    panicked, the results disk is full (CLI exit code 1; the message names what failed)."""


class DiskFullError(MachineError):
    """The disk holding a file crest writes is full; `problem` names the disk's file, for callers to add their fix."""

    def __init__(self, action: str, problem: str) -> None:
        super().__init__(f"cannot {action}: {problem}: free space and try again")
        self.action = action
        self.problem = problem


class NodeLostError(MachineError):
    """A cluster node died or stopped answering during a mix: the mix fails, never a silent rebalance."""

    def __init__(self, node: str, why: str) -> None:
        super().__init__(f"node {node} {why}")
        self.node = node
