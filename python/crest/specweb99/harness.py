"""The SPECweb99 harness as the runner's MixHooks: operational validation once the target answers,
Reset before each iteration, Fetch and the POST-log check after it (stored with the iteration).

Owns the order of the kit's housekeeping and what a failure of it means: a failed validation or
Reset stops the test with the kit's reason (the target is at fault, exit 1), a bad POST log is a
broken rule of its iteration. Never prints; sends only through crest.specweb99.wire.
"""

from __future__ import annotations

import random
import time
from typing import Any

from crest.errors import PeerError, TargetError
from crest.runner.table import specweb99_urls
from crest.specweb99 import checks, wire
from crest.specweb99.checks import FETCH_QUERY
from crest.store import MixRecord
from crest.suite import Mix
from crest.suite.specweb99 import Specweb99, class_names


class Harness:
    """The kit's manager around one test of `connections` simultaneous connections (`maxload` users in
    User.Personality, `dirs` directories in the fileset)."""

    def __init__(self, spec: Specweb99, maxload: int, dirs: int, *, conforming_length: bool, insecure: bool = True):
        self.spec = spec
        self.maxload = maxload
        self.dirs = dirs
        self.conforming_length = conforming_length
        self.insecure = insecure
        self.base = ""
        self.loaded = False

    @property
    def dynamic_url(self) -> str:
        return specweb99_urls(self.base, self.spec.dynamic)[0]

    @property
    def cgi_url(self) -> str:
        return specweb99_urls(self.base, self.spec.dynamic)[1]

    def target_ready(self, base_url: str) -> None:
        """Operational validation (reference §4.1): one of each operation, before any load.

        Raises:
            PeerError: the first operation that failed, with the kit's reason.
        """
        self.base = base_url.rstrip("/")
        problem = self._validate()
        if problem is not None:
            raise PeerError(f"SPECweb99 operational validation failed: {problem}")

    def _validate(self) -> str | None:
        self._reset(pttime_s=100)
        last = self.dirs - 1
        static = checks.file_path(last, 3, random.Random(last).randrange(9))
        reply = self._get(f"{self.base}/{static}")
        if reply.status != 200:
            return f"static GET /{static}: status {reply.status} (did the fileset get {self.dirs} directories?)"
        if (why := checks.check_file(reply.body, static, whole=True)) is not None:
            return f"static GET /{static}: {why}"
        page = checks.file_path(0, 1, 4)
        # User 0: Reset writes one user per connection, and there may be only one.
        for name, url, cookie in (
            ("dynamic GET", f"{self.dynamic_url}?/{page}", None),
            ("CGI GET", f"{self.cgi_url}?/{page}", None),
            ("custom-ad GET", f"{self.dynamic_url}?/{page}", checks.my_cookie(0, 20)),
        ):
            reply = self._get(url, cookie)
            if reply.status != 200:
                return f"{name} {url}: status {reply.status}"
            if (why := checks.check_file(reply.body, page, whole=False)) is not None:
                return f"{name} {url}: {why}"
            if cookie is not None and (why := checks.check_cad(reply.body, reply.set_cookie)) is not None:
                return why
        reply = wire.request(
            self.dynamic_url, cookie=checks.my_cookie(0, 20), body=checks.post_body(1, 0, 0, 4), insecure=self.insecure
        )
        if reply.status != 200:
            return f"POST {self.dynamic_url}: status {reply.status}"
        log = checks.parse_fetch(self._fetch())
        if len(log.records) != 1 or log.count != 1:
            return (
                f"the POST log holds {len(log.records)} records (count {log.count}) after one POST, must be 1:"
                " did Reset empty it?"
            )
        return None

    def before_mix(self, mix: Mix) -> None:
        """Reset before every iteration: fresh tables, an empty POST log."""
        self.loaded = True  # from here on load has been or is about to be sent
        t = mix.timing
        self._reset(pttime_s=int(t.length_s))

    def after_mix(self, mix: Mix, record: MixRecord) -> None:
        """Fetch the POST log and check it against every POST the iteration sent (whole run, not only
        the window: each one reached the log); store it with the settings the iteration ran with."""
        figures: dict[str, Any] = dict(record.specweb99 or {})
        issued = figures.get("issued_by_class") or {}
        names = class_names()
        sent = {c: int(issued.get(names[4 * 4 + c], 0)) for c in range(4)}  # post/class0..3
        log = checks.parse_fetch(self._fetch())
        check = checks.check_post_log(log, sent, self.spec.max_missing_posts)
        figures.update(
            settings=self.spec.model_dump(mode="json"),
            conforming_length=self.conforming_length,
            iteration=mix.index,
            post_log=check.to_json(),
        )
        record.specweb99 = figures

    def _reset(self, pttime_s: int) -> None:
        query = checks.reset_query(self.maxload, pttime_s, self.maxload, time.time(), f"{self.base}/file_set/")
        reply = self._get(f"{self.dynamic_url}?{query}")
        if reply.status != 200:
            raise PeerError(f"SPECweb99 Reset failed: can't reset POST log on server (status {reply.status})")

    def _fetch(self) -> bytes:
        reply = self._get(f"{self.dynamic_url}?{FETCH_QUERY}")
        if reply.status != 200:
            raise PeerError(f"SPECweb99 Fetch failed: status {reply.status} from {self.dynamic_url}")
        return reply.body

    def _get(self, url: str, cookie: str | None = None) -> wire.Reply:
        try:
            return wire.request(url, cookie=cookie, insecure=self.insecure)
        except TargetError as exc:
            if not self.loaded:
                raise  # unreachable before any load: nothing was sent (exit 2)
            raise PeerError(f"SPECweb99 housekeeping: the target stopped answering: {exc}") from None


def iteration_mixes(spec: Specweb99, connections: int) -> list[Mix]:
    """The test's iterations as mixes: warm-up before the first, ramp-up before the others, each with its
    run and ramp-down; one connection per client (each connection is scored on its own)."""
    from crest.suite import Timing

    mixes = []
    for i in range(1, spec.iterations + 1):
        up = spec.warmup_s if i == 1 else spec.rampup_s
        timing = Timing(length_s=up + spec.run_s + spec.rampdown_s, ramp_up_s=up, ramp_down_s=spec.rampdown_s)
        mixes.append(Mix(index=i, clients=connections, threads_per_client=1, timing=timing))
    return mixes
