"""Removing what crest's labs left behind: a lab whose owning process is gone (killed, crashed) is removed
by the state file it wrote before it made anything, and a `crestm-` namespace no state file names is an
orphan of the same kind. Owns only removal; a live lab is never touched."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field

from crest.machines import lab
from crest.machines.plan import PREFIX
from crest.servers.reap import alive


@dataclass
class Cleaned:
    """What a clean removed, by name, and the labs it left because their owner still runs."""

    removed: list[str] = field(default_factory=list)
    kept_live: list[str] = field(default_factory=list)


def clean_dead() -> Cleaned:
    """Remove every lab whose owner is no longer running, and `crestm-` namespaces of no lab."""
    done = Cleaned()
    named: set[str] = set()
    files = sorted(lab.STATE_DIR.glob("*.json")) if lab.STATE_DIR.is_dir() else []
    for path in files:
        try:
            state = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            path.unlink(missing_ok=True)
            continue
        owner = int(state.get("owner_pid") or 0)
        if owner > 0 and alive(owner):
            done.kept_live.append(path.stem)
            named.update(state.get("namespaces", []))
            continue
        done.removed += lab.remove(state)
        path.unlink(missing_ok=True)
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30, check=False).stdout
    for line in listed.splitlines():
        name = line.split()[0] if line.split() else ""
        if name.startswith(PREFIX) and name not in named:
            done.removed += lab.remove({"namespaces": [name]})
    return done
