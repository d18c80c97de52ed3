"""Parse and format units (durations, counts, rates, bytes, latency); pure functions, no I/O.

Byte sizes are decimal SI: 1 KB = 1000 bytes, 1 MB = 10^6 bytes, so that
MB/s × 8 = Mbit/s holds exactly. wrk prints binary sizes labelled KB/MB; crest
does not, and says so in docs/bench.md.
"""

from __future__ import annotations

import math
import re

from crest.errors import ConfigError

_DURATION_UNITS_S = {"us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
# One or more "<number><unit>" parts, e.g. "1m30s"; a bare number is seconds.
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(us|µs|ms|s|m|h)")
_BARE_NUMBER = re.compile(r"\d+(?:\.\d*)?|\.\d+")
_COUNT = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([kKMG]?)")
_COUNT_SUFFIX = {"": 1, "k": 1_000, "K": 1_000, "M": 1_000_000, "G": 1_000_000_000}
# Separates the values of a list option; "\," is a comma inside a value.
_UNESCAPED_COMMA = re.compile(r"(?<!\\),")


def parse_values(text: str, *, what: str, example: str = "1,2", hint: str = "") -> list[str]:
    """Split a comma-separated option value ("nginx,apache-event", "150,400") into its items, each
    stripped; a comma inside an item is written \\, (so "a\\,b" is the one item "a,b").

    Args:
        what: how the option is named in error messages (e.g. "--server").
        example: a valid list, shown with an empty item's error.
        hint: appended to that error (e.g. how to write a comma inside a value).

    Raises:
        ConfigError: an empty item, or one given twice.
    """
    items = [item.replace("\\,", ",").strip() for item in _UNESCAPED_COMMA.split(text)]
    if not all(items):
        raise ConfigError(f"{what} {text!r} has an empty item: give comma-separated values, e.g. {example}{hint}")
    if len(set(items)) != len(items):
        raise ConfigError(f"{what} {text!r} repeats a value: give each once")
    return items


def parse_duration(text: str, *, what: str = "duration", allow_zero: bool = False) -> float:
    """Parse "10s", "500ms", "1m", "2h", "1.5s", "1m30s" or a bare number of seconds.

    Args:
        text: the user's input.
        what: how the value is named in error messages (e.g. "--duration").
        allow_zero: whether 0 is meaningful (a think time) or not (a test length).

    Returns:
        The duration in seconds.

    Raises:
        ConfigError: one line quoting the input and showing accepted examples.
    """
    raw = text.strip()
    seconds: float | None = None
    if _BARE_NUMBER.fullmatch(raw):
        seconds = float(raw)
    elif raw and _DURATION_PART.sub("", raw) == "":
        seconds = sum(float(n) * _DURATION_UNITS_S[u] for n, u in _DURATION_PART.findall(raw))
    if seconds is None or not math.isfinite(seconds):
        raise ConfigError(f"invalid {what} {text!r}: expected a number with a unit, e.g. 10s, 500ms, 1m, 1.5s")
    if seconds == 0 and not allow_zero:
        raise ConfigError(f"invalid {what} {text!r}: must be greater than 0, e.g. 10s")
    return seconds


# The engine's bound on a request's timeout (crates/engine gate.rs MAX_TIMEOUT_S).
MAX_TIMEOUT_S = 3600.0


def parse_timeout(text: str) -> float:
    """A --timeout: a duration of at most an hour, refused here in the flag's own name (a longer one reached
    the engine as the end of a mix's window, and was worded as the suite's ramp settings)."""
    seconds = parse_duration(text, what="--timeout")
    if seconds > MAX_TIMEOUT_S:
        raise ConfigError(f"invalid --timeout {text!r}: must be at most 1h (a request's deadline), e.g. 10s or 2m")
    return seconds


def parse_count(text: str, *, what: str = "count", allow_zero: bool = False) -> int:
    """Parse a whole count with an optional k/M/G suffix: "100", "10k", "1.5M".

    Raises:
        ConfigError: when the input is not a non-negative whole number.
    """
    value = _parse_scaled(text, what, example="100, 10k, 1M")
    if value != int(value):
        raise ConfigError(f"invalid {what} {text!r}: must be a whole number, e.g. 100 or 10k")
    if value == 0 and not allow_zero:
        raise ConfigError(f"invalid {what} {text!r}: must be at least 1")
    return int(value)


def parse_rate(text: str, *, what: str = "rate") -> float:
    """Parse a rate in requests per second with an optional k/M/G suffix: "200", "0.5", "10k".

    Raises:
        ConfigError: when the input is not a number greater than 0.
    """
    value = _parse_scaled(text, what, example="200, 0.5, 10k")
    if value <= 0:
        raise ConfigError(f"invalid {what} {text!r}: must be greater than 0, e.g. 200 or 10k")
    return value


def parse_share(text: str, *, what: str = "share") -> float:
    """Parse a share strictly between 0 and 1, as a percentage or a fraction: "5%" or "0.05".

    Raises:
        ConfigError: when the input is not a number, or not between 0 and 100 %.
    """
    value = text.strip()
    try:
        share = float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        raise ConfigError(f"invalid {what} {text!r}: give a percentage, e.g. 5%") from None
    if not 0 < share < 1:
        raise ConfigError(f"invalid {what} {text!r}: give a percentage between 0 and 100, e.g. 5%")
    return share


def _parse_scaled(text: str, what: str, *, example: str) -> float:
    match = _COUNT.fullmatch(text.strip())
    if match is None:
        raise ConfigError(f"invalid {what} {text!r}: expected a number, e.g. {example}")
    return float(match.group(1)) * _COUNT_SUFFIX[match.group(2)]


def format_bytes(n: float) -> str:
    """Format a byte count in decimal SI units: 512 B, 1.02 KB, 131.2 MB, 1.31 GB."""
    if n < 1000:
        return f"{n:.0f} B"
    for unit in ("KB", "MB", "GB", "TB"):
        n /= 1000.0
        if n < 1000 or unit == "TB":
            return f"{n:.2f} {unit}" if n < 100 else f"{n:.1f} {unit}"
    raise AssertionError("unreachable")  # the loop returns at TB


def format_latency_us(us: float) -> str:
    """Format microseconds like wrk: "812us", "1.20ms", "2.31s"."""
    if us < 999.5:
        return f"{us:.0f}us"
    if us < 999_995:
        return f"{us / 1000:.2f}ms"
    return f"{us / 1e6:.2f}s"


def format_count(n: int) -> str:
    """Format a whole number with thousands separators: 1,234,567."""
    return f"{n:,}"


def format_seconds(s: float) -> str:
    """Format a duration for headings: "10s", "1.5s", "2m", "1m30s"."""
    if s >= 60 and s == int(s):
        minutes, rest = divmod(int(s), 60)
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    return f"{s:g}s"


def format_span(s: float) -> str:
    """Format a long duration for people: "45 s", "12 min", "2 h 40 min"."""
    if s < 60:
        return f"{s:.0f} s"
    minutes = round(s / 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours and minutes else f"{hours} h" if hours else f"{minutes} min"


_SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
               "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}  # fmt: skip


def parse_size(text: str, *, what: str = "size") -> int:
    """Bytes from "512M", "1G", "1.5GiB" or "4096" (binary units: K = 1024).

    Raises:
        ConfigError: not a positive size.
    """
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _SIZE_UNITS or float(match.group(1)) <= 0:
        raise ConfigError(f"invalid {what} {text!r}: give a size such as 512M, 1G or 4096 (bytes)")
    return int(float(match.group(1)) * _SIZE_UNITS[unit])
