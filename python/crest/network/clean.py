"""Removing what crest's networks left behind: a network whose owning process is gone (killed, crashed)
is deleted by the state file it wrote before it made anything, and a `crest-` namespace (or nftables
table) no state file names is an orphan of the same kind. Owns only removal; a live run's network is never touched.
"""

from __future__ import annotations

import json
import os
import signal
from dataclasses import dataclass, field

from crest.network import forward, routed, topology


@dataclass
class Cleaned:
    """What a clean removed: namespaces and root links by name, delay-line processes by pid."""

    removed: list[str] = field(default_factory=list)
    relays_stopped: list[int] = field(default_factory=list)
    kept_live: list[str] = field(default_factory=list)  # networks whose owner still runs


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is gone for our purpose
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def clean_dead() -> Cleaned:
    """Remove every network whose owner is no longer running, and `crest-` namespaces of no network."""
    done = Cleaned()
    named: set[str] = set()
    tables: set[str] = set()
    state_dir = topology.STATE_DIR
    files = sorted(state_dir.glob("*.json")) if state_dir.is_dir() else []
    for path in files:
        if path.name.endswith(".relay.json"):
            continue
        try:
            state = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        namespaces = [str(n) for n in state.get("namespaces", [])]
        named.update(namespaces)
        tables.update(str(t) for t in state.get("nft_tables", []))
        owner = int(state.get("owner_pid") or 0)
        if owner and _alive(owner):
            done.kept_live.append(path.stem)
            continue
        relay = state.get("relay_pid")
        if relay and _alive(int(relay)):
            try:
                os.kill(int(relay), signal.SIGKILL)
                done.relays_stopped.append(int(relay))
            except ProcessLookupError:
                pass
        done.removed += routed.undo(state)  # sysctls restored, routes back removed (a routed network's)
        done.removed += topology.remove(namespaces, [str(n) for n in state.get("root_links", [])])
        done.removed += forward.remove([str(t) for t in state.get("nft_tables", [])])
        for leftover in state_dir.glob(f"{path.stem}.*"):
            leftover.unlink(missing_ok=True)
    orphans = [n for n in topology.list_namespaces() if n.startswith(topology.PREFIX) and n not in named]
    done.removed += topology.remove(orphans, [])
    done.removed += forward.remove([t for t in forward.list_tables() if t not in tables])
    return done
