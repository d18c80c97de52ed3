"""SPECweb99's harness checks on raw bytes: the Reset and Fetch requests, the POST log a Fetch returns and
its check, and the operational validation of one response of each kind. Sans-IO: bytes in, findings
out; crest.specweb99.wire sends the requests and crest.specweb99.harness decides what a finding does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlencode

ADS = 360
USER_ID_BASE = 10_000
POST_RECORD_BYTES = 139
# The header line every fileset file starts with (the kit's check: `\d+\s+(file_set.*class.*)`).
_HEADER_LINE = re.compile(rb"^ *(\d+) (file_set/dir\d{5}/class\d_\d)$", re.MULTILINE)
_CAD_TAG = re.compile(rb'<!WEB99CAD><IMG SRC="/file_set/(dir\d{5}/class\d_\d)"><!/WEB99CAD>')
_FOUND_COOKIE = re.compile(r"found_cookie=Ad_id=(-?\d+)&Ad_weight=(\d+)&Expired=([01])")


def file_path(directory: int, file_class: int, number: int) -> str:
    """`file_set/dirNNNNN/classC_F` (no leading slash: as the header line names it)."""
    return f"file_set/dir{directory:05d}/class{file_class}_{number}"


def ad_path(ad: int) -> str:
    """The file an ad stands for: dir = ad / 36, class = (ad % 36) / 9, file = ad % 9."""
    return f"dir{ad // 36:05d}/class{ad % 36 // 9}_{ad % 9}"


def reset_query(maxload: int, pttime_s: int, maxthread: int, now_unix_s: float, urlroot: str) -> str:
    """`command/Reset&maxload=…&pttime=…&maxthread=…&exp=a,b&urlroot=…`: a = now mod 360, b = a + 100 (wrapped,
    ordered), as the kit's manager sends it."""
    a = int(now_unix_s) % ADS
    b = (a + 100) % ADS
    low, high = sorted((a, b))
    fields = urlencode({"maxload": maxload, "pttime": pttime_s, "maxthread": maxthread}, safe=",")
    return f"command/Reset&{fields}&exp={low},{high}&urlroot={urlroot}"


FETCH_QUERY = "command/Fetch"


@dataclass(frozen=True)
class PostRecord:
    """One line of the POST log: what a POST asked the server to record."""

    recno: int
    time_unix_s: int
    directory: int
    file_class: int
    number: int
    client: int
    filename: str
    user_id: int
    consistent: bool  # the two pid/tid fields agree (the kit warns "inconsistent data" otherwise)


@dataclass(frozen=True)
class PostLog:
    """A Fetch's log: the header's count and the records in file order; lines that are neither, kept."""

    count: int | None
    records: tuple[PostRecord, ...]
    unreadable: tuple[str, ...]


def parse_fetch(body: bytes) -> PostLog:
    """The POST log inside a Fetch's envelope: after the `<pre>` line up to `</pre>` (the whole body when
    there is no `<pre>`); a line holding only an integer is the count, any other non-blank line a record."""
    text = body.decode("latin-1")
    start = text.find("<pre>")
    if start >= 0:
        text = text[text.index("\n", start) + 1 if "\n" in text[start:] else len(text) :]
    end = text.find("</pre>")
    if end >= 0:
        text = text[:end]
    count: int | None = None
    records: list[PostRecord] = []
    unreadable: list[str] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        if line.strip().isdigit() and count is None and not records:
            count = int(line)
            continue
        record = _record(line)
        if record is None:
            unreadable.append(line)
        else:
            records.append(record)
    return PostLog(count, tuple(records), tuple(unreadable))


def _record(line: str) -> PostRecord | None:
    # "%10d %10d %10d %5d %2d %2d %10d %-60.60s %10d %10d": the filename may not hold spaces.
    fields = line.split()
    if len(fields) != 10:
        return None
    try:
        recno, when, pid, directory, file_class, number, client = (int(f) for f in fields[:7])
        pid_again, user_id = int(fields[8]), int(fields[9])
    except ValueError:
        return None
    return PostRecord(recno, when, directory, file_class, number, client, fields[7], user_id, pid == pid_again)


@dataclass(frozen=True)
class PostLogCheck:
    """What the kit checks after each iteration, with the figures: records, sent, missing, and every
    rule broken (empty: the log passed)."""

    records: int
    sent: int
    missing: int
    failures: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {"records": self.records, "sent": self.sent, "missing": self.missing, "failures": list(self.failures)}


def check_post_log(log: PostLog, sent_by_class: dict[int, int], max_missing: float) -> PostLogCheck:
    """The POST log against the POSTs the clients sent per file class: records in strictly rising order,
    the header's count equal to the records, no class with more records than POSTs sent, at most
    `max_missing` of the POSTs missing."""
    failures: list[str] = []
    recnos = [r.recno for r in log.records]
    if any(b <= a for a, b in zip(recnos, recnos[1:])):
        failures.append("POST log: an entry out of order (record numbers must rise strictly)")
    if log.count != len(log.records):
        failures.append(f"POST log: its count says {log.count} but it holds {len(log.records)} records")
    if log.unreadable:
        failures.append(f"POST log: {len(log.unreadable)} lines are not records, e.g. {log.unreadable[0][:60]!r}")
    if any(not r.consistent for r in log.records):
        failures.append("POST log: inconsistent data (a record's two pid/tid fields differ)")
    recorded: dict[int, int] = {}
    for r in log.records:
        recorded[r.file_class] = recorded.get(r.file_class, 0) + 1
    for file_class, n in sorted(recorded.items()):
        if n > sent_by_class.get(file_class, 0):
            failures.append(
                f"POST log: class {file_class} recorded {n - sent_by_class.get(file_class, 0)} too many POSTs"
            )
    sent = sum(sent_by_class.values())
    missing = max(0, sent - len(log.records))
    if sent and missing / sent > max_missing:
        failures.append(f"POST log: {missing} of {sent} POSTs missing ({missing / sent:.1%} > {max_missing:.0%})")
    return PostLogCheck(len(log.records), sent, missing, tuple(failures))


def check_file(body: bytes, path: str, whole: bool) -> str | None:
    """Why a body does not carry the file `path` (None: it does). `whole`: the body is the file itself
    (a static GET), else the file inside an envelope."""
    match = _HEADER_LINE.match(body) if whole else _HEADER_LINE.search(body)
    if match is None:
        return "improper file returned: no `<size> file_set/...` header line"
    if match.group(2).decode() != path:
        return f"wrong file returned: {match.group(2).decode()} instead of {path}"
    stated = int(match.group(1))
    available = len(body) - match.start()
    if (whole and available != stated) or (not whole and available < stated):
        return f"{path}: {available} bytes where its header line says {stated}"
    return None


def check_cad(body: bytes, set_cookie: str | None) -> str | None:
    """The kit's custom-ad check: a `found_cookie` naming an ad, and every `<!WEB99CAD>` tag substituted with
    that ad's path (at least one tag)."""
    match = _FOUND_COOKIE.search(set_cookie or "")
    if match is None:
        return "custom-ad GET: no Set-Cookie found_cookie=Ad_id=...&Ad_weight=...&Expired=..."
    ad = int(match.group(1))
    if not 0 <= ad < ADS:
        return f"custom-ad GET: Ad_id {ad} is not an ad (0-{ADS - 1})"
    tags = [t.decode() for t in _CAD_TAG.findall(body)]
    if not tags:
        return "custom-ad GET: no <!WEB99CAD> tag in a class 1 file"
    expected = ad_path(ad)
    wrong = [t for t in tags if t != expected]
    if wrong:
        return f"custom-ad GET: {len(wrong)} of {len(tags)} tags name {wrong[0]}, not Ad_id {ad}'s {expected}"
    return None


def my_cookie(user_index: int, last_ad: int) -> str:
    """The cookie a custom-ad GET and a POST carry."""
    return f"my_cookie=user_id={USER_ID_BASE + user_index}&last_ad={last_ad}"


def post_body(file_class: int, client: int, directory: int, number: int) -> str:
    """A POST's form, in the kit sample's order."""
    return f"class={file_class}&client={client}&dir={directory:05d}&num={number}&urlroot=/file_set/"
