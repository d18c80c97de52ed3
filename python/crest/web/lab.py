"""The results browser: the store's runs (filtered), one run's report, a comparison of any runs, the
experiments, the capacity searches, and a running run's ladder so far.

Reads the store through `Store(read_only=True)` (SQLite's mode=ro: it can neither create nor write the file)
once per request, so a page shows what the writing process last committed (WAL: a mix at a time). The
report and the comparison are crest.report's documents rendered as `crest report` and `crest compare`
write them; the lists name runs in crest.analysis.identity's words, like `crest runs`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from crest.analysis.identity import identity, needs_detail, run_result, summary_identity, summary_result
from crest.analysis.peak import highest
from crest.analysis.stats import DEFAULT_INTERVAL
from crest.errors import ConfigError
from crest.report import build_report
from crest.report.html import render_html
from crest.report.svg import Axis, Series, line_chart
from crest.store import RunDetail, RunSummary, Store, StoreError
from crest.web.pages import page
from crest.web.state import State

# A running run's page reloads itself this often: a mix lasts tens of seconds to minutes.
REFRESH_S = 5
_BODY = re.compile(r"<body[^>]*>")


@dataclass(frozen=True)
class Row:
    """One run as the lists show it."""

    id: str
    kind: str
    experiment: str | None
    suite: str
    configuration: str
    server: str
    factors: tuple[str, ...]  # "name=value"
    status: str
    reason: str | None
    mixes: int
    result: str
    started_at: float
    capacity: bool


FILTERS = ("suite", "server", "factor", "status", "experiment")


def routes(state: State) -> list[BaseRoute]:
    def runs_page(request: Request) -> Response:
        with _store(state) as store:
            if isinstance(store, Response):
                return store
            rows = rows_of(store)
        chosen = {k: request.query_params.get(k) or "" for k in FILTERS}
        shown = filter_rows(rows, chosen)
        return page(
            "runs.html.j2", db=True, hub=state.hub is not None, rows=shown, total=len(rows), chosen=chosen,
            choices=choices(rows), where=str(state.db),
        )  # fmt: skip

    def run_page(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        with _store(state) as store:
            if isinstance(store, Response):
                return store
            try:
                detail = store.run(run_id)
            except StoreError as exc:
                return _error(state, str(exc), 404)
        if detail.status == "running" and request.url.path.endswith(run_id):
            return ladder_page(state, detail)
        return _report(state, [detail], {})

    def compare_page(request: Request) -> Response:
        names = [n for n in request.query_params.getlist("run") if n]
        if not names:
            return _error(state, "choose runs to compare: tick them on the runs page, then press compare", 400)
        with _store(state) as store:
            if isinstance(store, Response):
                return store
            try:
                details = store.select(names)
            except StoreError as exc:
                return _error(state, str(exc), 404)
        options = {"interval": request.query_params.get("interval") or DEFAULT_INTERVAL}
        return _report(state, details, options)

    def experiments_page(request: Request) -> Response:
        with _store(state) as store:
            if isinstance(store, Response):
                return store
            rows = rows_of(store)
        return page("experiments.html.j2", db=True, hub=state.hub is not None, experiments=experiments(rows))

    def capacity_page(request: Request) -> Response:
        with _store(state) as store:
            if isinstance(store, Response):
                return store
            rows = [r for r in rows_of(store) if r.capacity]
        return page("capacity.html.j2", db=True, hub=state.hub is not None, rows=rows)

    return [
        Route("/runs", runs_page),
        Route("/runs/{run_id}", run_page),
        Route("/runs/{run_id}/report", run_page),
        Route("/compare", compare_page),
        Route("/experiments", experiments_page),
        Route("/capacity", capacity_page),
    ]


def rows_of(store: Store) -> list[Row]:
    """Every stored run, newest first, named and summed up as `crest runs` does."""
    rows = []
    for s in store.runs():
        result = "-"
        try:
            result = (run_result(store.run(s.id)) if needs_detail(s) else summary_result(s)).text
        except ConfigError:
            pass  # settings of an older crest the analysis cannot read: no result, like `crest runs`
        who = summary_identity(s)
        rows.append(Row(
            id=s.id, kind=who.kind + (" (cluster)" if who.cluster else ""), experiment=who.experiment,
            suite=s.suite, configuration=who.configuration, server=server_of(s),
            factors=tuple(f"{k}={v}" for k, v in s.factors.items()), status=s.status, reason=s.reason,
            mixes=s.mixes, result=result, started_at=s.started_at, capacity=who.kind == "capacity",
        ))  # fmt: skip
    return rows


def server_of(summary: RunSummary) -> str:
    """The server a run measured: the one crest started, else "external"."""
    options = summary.config.get("options") if isinstance(summary.config, dict) else None
    server = (options or {}).get("server") if isinstance(options, dict) else None
    return str(server or summary.factors.get("server") or "external")


def filter_rows(rows: Sequence[Row], chosen: dict[str, str]) -> list[Row]:
    """The rows that match every filter given (an empty one matches all)."""

    def keep(row: Row) -> bool:
        return (
            (not chosen.get("suite") or row.suite == chosen["suite"])
            and (not chosen.get("server") or row.server == chosen["server"])
            and (not chosen.get("factor") or chosen["factor"] in row.factors)
            and (not chosen.get("status") or row.status == chosen["status"])
            and (not chosen.get("experiment") or row.experiment == chosen["experiment"])
        )

    return [r for r in rows if keep(r)]


def choices(rows: Sequence[Row]) -> dict[str, list[str]]:
    """Each filter's values among the rows, sorted."""
    return {
        "suite": sorted({r.suite for r in rows}),
        "server": sorted({r.server for r in rows}),
        "factor": sorted({f for r in rows for f in r.factors}),
        "status": sorted({r.status for r in rows}),
    }


def experiments(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Runs that share an experiment id, newest experiment first: its suites, configurations, statuses."""
    found: dict[str, list[Row]] = {}
    for row in rows:
        if row.experiment:
            found.setdefault(row.experiment, []).append(row)
    return [
        {
            "id": name, "runs": len(members), "started_at": min(r.started_at for r in members),
            "suites": sorted({r.suite for r in members}),
            "configurations": list(dict.fromkeys(r.configuration for r in reversed(members))),
            "statuses": sorted({r.status for r in members}), "kinds": sorted({r.kind for r in members}),
        }
        for name, members in found.items()
    ]  # fmt: skip


def ladder_page(state: State, detail: RunDetail) -> Response:
    """A running run: its mixes so far as a chart and a table, the page reloading itself."""
    mixes = sorted(detail.mixes, key=lambda m: m.index)
    peak = highest([m.rps for m in mixes])
    points: list[tuple[float, float | None]] = [(m.clients, None if math.isnan(m.rps) else m.rps) for m in mixes]
    chart = None
    if points:
        top = (mixes[peak].clients, mixes[peak].rps) if peak is not None else None
        series = Series(0, identity(detail).configuration, points, peak=top)
        chart = line_chart("ladder", "requests/s by clients", Axis("clients", log=True, unit="clients"),
                           Axis("requests/s", unit="req/s"), [series])  # fmt: skip
    return page(
        "ladder.html.j2", db=True, hub=state.hub is not None, detail=detail, who=identity(detail), mixes=mixes,
        peak=None if peak is None else mixes[peak], chart=chart, refresh_s=REFRESH_S,
    )  # fmt: skip


def _report(state: State, details: list[RunDetail], options: dict[str, Any]) -> Response:
    """The HTML report of `details` as `crest report` / `crest compare` writes it, with a way back."""
    try:
        html = render_html(build_report(details, **options))
    except ConfigError as exc:
        return _error(state, str(exc), 400)
    nav = (
        '<nav class="crest-ui" style="font:14px system-ui,sans-serif;background:#f4f6f8;'
        "padding:8px max(32px, calc((100% - 1180px) / 2 + 32px));"
        'border-bottom:1px solid #d9dee3"><a href="/runs" style="color:#0072B2">← runs</a>'
        ' · <a href="/experiments" style="color:#0072B2">experiments</a>'
        ' · <a href="/capacity" style="color:#0072B2">capacity searches</a>'
        + (' · <a href="/live" style="color:#0072B2">live</a>' if state.hub is not None else "")
        + "</nav>"
    )
    found = _BODY.search(html)
    if found:  # the report is a whole page with its own policy (its <meta>): only a way back is added
        html = html[: found.end()] + nav + html[found.end() :]
    # A stored report allows inline styles and its own scripts by hash: its <meta> policy governs it.
    return HTMLResponse(html, headers={"Content-Security-Policy": "frame-ancestors 'none'; base-uri 'none'"})


def _error(state: State, message: str, status: int) -> Response:
    return page("error.html.j2", status_code=status, db=state.db is not None, hub=state.hub is not None,
                message=message)  # fmt: skip


@contextmanager
def _store(state: State) -> Iterator[Store | Response]:
    """The store opened read-only for one request, or the page saying why it cannot be."""
    if state.db is None:
        yield _error(state, "this page shows a run, not a results store: run `crest ui --db FILE` to browse one", 404)
        return
    if not state.db.exists():
        yield page("empty.html.j2", db=True, hub=state.hub is not None, where=str(state.db))
        return
    try:
        store = Store(state.db, read_only=True)
    except StoreError as exc:
        yield _error(state, str(exc), 500)
        return
    try:
        yield store
    finally:
        store.close()


__all__ = ["Row", "choices", "experiments", "filter_rows", "routes", "rows_of"]
