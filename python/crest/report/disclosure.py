"""The report's disclosure section: the system under test as the seeds disclosed it, one set of tables per
distinct machine (hardware; operating system and its tuning; the docroot's filesystem; network; servers).

Owns turning each run's stored disclosure (crest.disclosure, under the run's
config) into rows of text for the page; facts that do not apply stay visible
as "n/a" with their reason. Computes nothing and reads no machine.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from crest.analysis.group import Configuration
from crest.units import format_bytes

_TITLES = {"hardware": "Hardware", "os": "Operating system and its tuning", "docroot": "Docroot filesystem",
           "network": "Network"}  # fmt: skip
_BYTES = ("memory_bytes", "free_bytes")


def disclosure_section(configs: Sequence[Configuration]) -> list[dict[str, Any]] | None:
    """Distinct disclosures with the runs and configurations measured under each; None when no run has one."""
    seen: dict[str, dict[str, Any]] = {}
    for c in configs:
        for d in c.trials:
            config = d.meta.config if isinstance(d.meta.config, dict) else {}
            found = config.get("disclosure")
            if not isinstance(found, dict):
                continue
            key = json.dumps(found, sort_keys=True, default=str)
            entry = seen.setdefault(key, {"runs": [], "configurations": [], "sections": _sections(found)})
            entry["runs"].append(d.id)
            if c.label not in entry["configurations"]:
                entry["configurations"].append(c.label)
    return list(seen.values()) or None


def _sections(found: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for name, title in _TITLES.items():
        facts = found.get(name)
        if not isinstance(facts, dict):
            continue
        rows: list[dict[str, Any]] = []
        for key, value in facts.items():
            if key in ("sysctls", "ulimits") and isinstance(value, dict):
                rows += [_row(f"{k}" if key == "sysctls" else f"ulimit {k}", v) for k, v in value.items()]
            else:
                rows.append(_row(key.replace("_", " "), value, key in _BYTES))
        out.append({"title": title, "rows": rows})
    return out


def _row(name: str, value: Any, is_bytes: bool = False) -> dict[str, Any]:
    if isinstance(value, dict) and "not_applicable" in value:
        return {"name": name, "value": f"n/a: {value['not_applicable']}", "na": True}
    return {"name": name, "value": _text(value, is_bytes), "na": False}


def _text(value: Any, is_bytes: bool) -> str:
    if is_bytes and isinstance(value, int):
        return f"{format_bytes(value)} ({value:,} B)"
    if isinstance(value, dict):
        if set(value) == {"soft", "hard"}:
            return f"{value['soft']} (hard {value['hard']})"
        return ", ".join(f"{k.replace('_', ' ')} {_text(v, False)}" for k, v in value.items())
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "unknown"
    return str(value)
