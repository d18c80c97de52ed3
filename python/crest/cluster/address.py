"""What `--cluster` names: an existing Ray cluster (auto, ray://HOST:PORT, HOST:PORT), N nodes started on
this machine (local:N), or N simulated machines on this host, each a Ray node (machines:N, with a lab's
options: crest.machines.plan). Pure parsing: imports no Ray and opens no socket."""

from __future__ import annotations

import re
from dataclasses import dataclass

from crest.errors import ConfigError
from crest.machines import plan as lab_plan

# local:N starts N full Ray nodes on this machine; more than this is a typo, not a lab.
MAX_LOCAL_NODES = 16
# machines:N: the head on the control machine, reached by the driver through Ray's client server there.
MACHINES_GCS_PORT = 6379
MACHINES_CLIENT_PORT = 10001

_HOST_PORT = re.compile(r"^(?P<host>\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.-]+):(?P<port>\d{1,5})$")


@dataclass(frozen=True)
class ClusterAddress:
    """A parsed --cluster value; `kind` is auto, client (ray://), gcs (HOST:PORT), local or machines."""

    kind: str
    text: str  # as given, for messages and the stored options
    host: str = ""
    port: int = 0
    local_nodes: int = 0
    lab: lab_plan.LabSpec | None = None  # machines:N

    @property
    def loopback(self) -> bool:
        """Every node and the driver talk over loopback (local:N, or an address on 127.0.0.0/8 or ::1)."""
        return self.kind == "local" or self.host in ("localhost", "[::1]") or self.host.startswith("127.")

    def ray_address(self) -> str:
        """The address ray.init takes."""
        if self.kind in ("client", "machines"):
            return f"ray://{self.host}:{self.port}"
        if self.kind == "gcs":
            return f"{self.host}:{self.port}"
        return "auto"


def parse_cluster(text: str) -> ClusterAddress:
    """Parse a --cluster value.

    Raises:
        ConfigError: the value is none of the accepted forms, with the forms listed.
    """
    value = text.strip()
    forms = "use auto, ray://HOST:PORT, HOST:PORT (the head's GCS address), local:N or machines:N"
    if value == "auto":
        return ClusterAddress("auto", value)
    if value.startswith("machines:"):
        lab = lab_plan.parse(value.removeprefix("machines:"))
        if len(lab.nodes) > MAX_LOCAL_NODES:
            raise ConfigError(f"invalid --cluster {text!r}: machines:N needs N from 1 to {MAX_LOCAL_NODES}")
        control = lab.control.address
        return ClusterAddress("machines", value, host=str(control), port=MACHINES_CLIENT_PORT, lab=lab)
    if value.startswith("local:"):
        count = value.removeprefix("local:")
        if not count.isdigit() or not 1 <= int(count) <= MAX_LOCAL_NODES:
            raise ConfigError(f"invalid --cluster {text!r}: local:N needs N from 1 to {MAX_LOCAL_NODES}")
        return ClusterAddress("local", value, host="127.0.0.1", local_nodes=int(count))
    kind = "gcs"
    rest = value
    if value.startswith("ray://"):
        kind, rest = "client", value.removeprefix("ray://")
    elif "://" in value:
        raise ConfigError(f"invalid --cluster {text!r}: {forms}")
    match = _HOST_PORT.match(rest)
    if match is None or not 0 < int(match["port"]) < 65536:
        raise ConfigError(f"invalid --cluster {text!r}: {forms}")
    return ClusterAddress(kind, value, host=match["host"], port=int(match["port"]))
