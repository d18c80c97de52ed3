"""`hash = true` in a replay: query strings and client addresses never reach the store. Owns the one
rewriting of a text that could hold them (an error note naming a URL); pure.
"""

from __future__ import annotations

import hashlib
import re

# A query string (up to a space, quote or the end) and IPv4 / bracketed or bare IPv6 addresses.
_QUERY = re.compile(r"\?[^\s\"'<>]*")
_IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])")
_IPV6 = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")
# Loopback is crest's own target, not a logged client: it stays readable.
_KEEP = frozenset({"127.0.0.1", "::1"})


def digest(text: str) -> str:
    """A short stable stand-in for `text` (the same text, the same stand-in)."""
    return "h:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def hash_text(text: str) -> str:
    """`text` with every query string and client address replaced by its digest."""
    text = _QUERY.sub(lambda m: "?" + digest(m.group(0)[1:]), text)
    text = _IPV4.sub(_address, text)
    return _IPV6.sub(_address, text)


def _address(match: re.Match[str]) -> str:
    found = match.group(0)
    # A time of day (12:30:45) has colons too: an IPv6 address has "::" or all seven.
    if found in _KEEP or (":" in found and "::" not in found and found.count(":") != 7):
        return found
    return digest(found)
