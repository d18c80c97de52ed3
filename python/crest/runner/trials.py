"""The trial loop: one run of a suite, mix by mix, each mix stored as it ends; and resuming one.

Owns the order of a run and its status: check the request and the placement before anything is
recorded or sent, start the target, create the run record, then for each mix build its engine run
(crest.runner.specs), measure it (crest.runner.measure) and store it in one transaction before the next.
Ctrl-C keeps every finished mix and marks the run interrupted; a target that dies marks it failed with
the reason. Cleanup never replaces the error that caused it: a failure to stop the target (or to keep its
logs) after another error is added to that error as a note, which the CLI prints after it ("crest: also: ..."). Where the load runs is the placement's (crest.placement), chosen once: no branch here asks.
Never prints (progress goes to a callback) and never plans (which runs an experiment has is
crest.experiment's).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, NoReturn, TypeVar
from urllib.parse import urlsplit

from crest.errors import ConfigError, DiskFullError, MachineError, NodeLostError, PeerError, TargetError
from crest.filesets.cache import cached_fileset, empty_docroot
from crest.host.facts import host_facts
from crest.load import vantage
from crest.load.client import LoadClient
from crest.load.preflight import check_answers, check_reachable, parse_file_url, parse_url
from crest.load.runspec import RunSpec
from crest.placement import choose
from crest.placement.base import TargetPlan
from crest.placement.nodes import close_clusters
from crest.replay.har import read_har
from crest.replay.har_site import cached_har_site
from crest.replay.privacy import hash_text
from crest.replay.site import cached_site
from crest.runner import binding
from crest.runner.binding import Bound
from crest.runner.measure import Interrupted, LoadFailed, MixMeasure
from crest.runner.request import (
    Event,
    EventCallback,
    MixHooks,
    RunInterrupted,
    RunRequest,
    check_request,
    fileset_connections,
    fileset_copies,
    server_roles,
    stand_in,
)
from crest.runner.specs import har_facts, mix_spec, replay_facts
from crest.servers.base import SERVER_KINDS, ServerSettings
from crest.servers.group import settings_by_server
from crest.store import DEFAULT_PATH, MixRecord, RunMeta, Store, StoreError
from crest.suite import PROFILES, Mix, Suite
from crest.suite.roles import roles_by_class
from crest.verdicts import DECIDING, ERRORS, decided_by, ranked

E = TypeVar("E", bound=BaseException)

__all__ = ["Event", "EventCallback", "MixHooks", "RunInterrupted", "RunRequest", "SuiteRunner", "close_clusters"]


@dataclass
class _Trial:
    """What one trial holds while its mixes run: its record's id, its target and how the clients reach it."""

    run_id: str
    repeat_index: int
    target: Any
    bound: Bound


def _clean_up_after(first: BaseException, clean_up: Callable[[], None]) -> None:
    """Run `clean_up` after `first` ended the trial; its own failure is told after `first`, never instead."""
    try:
        clean_up()
    except Exception as exc:
        first.add_note(" ".join(str(exc).split()) or type(exc).__name__)


class SuiteRunner:
    """Runs one RunRequest: `run_trial()` for each new trial (crest.experiment orders them), `resume()`
    for an interrupted one."""

    def __init__(
        self, request: RunRequest, on_event: EventCallback | None = None, hooks: MixHooks | None = None
    ) -> None:
        self.request = request
        self.on_event = on_event or (lambda _event: None)
        self.hooks = hooks
        # A harness's own run shape (crest specweb99 --profile smoke) is no suite profile: the suite's mixes
        # then only size the run, and the harness hands run_trial its iterations.
        self.mixes = request.suite.mixes(request.profile if request.profile in PROFILES else "full")
        net_spec = check_request(request, self.mixes)
        self.server_roles = server_roles(request)
        self.placement = choose(
            cpus=request.cpus, network=net_spec, largest=stand_in(max(self.mixes, key=lambda m: m.connections)),
            target_urls=tuple(filter(None, (request.target, request.tls_target))) if request.server is None else (),
            cluster=request.cluster, nodes=request.nodes,
            target_node=request.target_node, monitor_node=request.monitor_node, monitor_pid=request.monitor_pid,
            monitor_name=request.monitor_name, most_clients=max(m.clients for m in self.mixes),
        )  # fmt: skip
        self.manifest = binding.manifest(request)
        self._docroot: Path | None = None
        # A --target is bound once (its tables built now, their errors before anything else starts); a
        # target crest starts is bound anew each trial (new ports).
        self._url_bound = self._bind_url() if request.server is None else None
        # Requests the preflight sent (its one GET per origin), not yet reported: the first mix stored says so.
        self.preflight_requests = 0

    # -- checks before anything is recorded or sent

    def preflight(self) -> None:
        """Check the target before anything is recorded or sent: a URL accepts connections (from this
        machine; on a cluster each load node checks it from where it stands at the ready barrier before
        each mix), or a server can be provisioned as asked (installed, serves the workload's kinds, cores,
        memory), and the placement can place the load (a cluster answers with the nodes asked for)."""
        self.placement.check()
        if self._url_bound is None:
            self.placement.check_server(self._target_plan())
            # Validate one engine config against a stand-in for the target crest will start.
            self._validate(binding.bind_stand_in(self.request, self.manifest, self.server_roles))
            return
        self._validate(self._url_bound)  # a bad option fails before anything is sent
        r, here = self.request, self._url_bound
        if here.url != r.target:
            # The clients reach it elsewhere (a client network's target address, which exists only once the
            # network is built, each mix checking it from the subnets): check it here as the user gave it.
            here = binding.bind(r, self.manifest, r.target, r.tls_target)
        self.placement.preflight_target(partial(self._check_target, here))

    def _check_target(self, bound: Bound) -> None:
        """A --target accepts connections: the directory or the SMB server and its login for a file workload;
        else each URL (HTTP/3 is QUIC over UDP, which a TCP connect cannot probe: only its name is resolved)."""
        if self.request.suite.workload.is_file:
            LoadClient(self._spec(bound, self.mixes[0])).preflight()
            return
        tcp = not self.request.suite.workload.over_quic
        for url in dict.fromkeys(filter(None, (self.request.target, self.request.tls_target,
                                               *self.request.role_targets.values()))):  # fmt: skip
            vantage.call(check_reachable, parse_url(url), tcp=tcp)  # from where the clients stand
        # One real request per target the table reaches (its first entry there): a certificate the load would
        # reject or a fileset the target does not serve stops the run before its record exists.
        firsts: dict[tuple[str, str], str] = {}
        # A log's requests are answered as logged (a 404 among them): reaching the target is the check.
        for entry in () if self.request.suite.workload.replay else bound.table.requests:
            parts = urlsplit(str(entry["url"]))
            firsts.setdefault((parts.scheme, parts.netloc), str(entry["url"]))
        if not self.request.answer_check:
            return
        for url in firsts.values():
            parts = urlsplit(url)
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            self.preflight_requests += check_answers(
                parse_url(url), path=path, http_version=self.request.suite.workload.http_version,
                insecure=bound.insecure, not_found_fix=self._not_found_fix(), timeout_s=self.request.timeout_s,
            )  # fmt: skip

    def _not_found_fix(self) -> str | None:
        fileset = self.request.suite.workload.fileset
        if fileset is None:
            return None
        return (f"the target must serve the {fileset} fileset at its root: `crest fileset generate {fileset} DIR`"
                " and serve DIR")  # fmt: skip

    def _validate(self, bound: Bound) -> None:
        LoadClient(self._spec(bound, self.mixes[0]))

    def _bind_url(self) -> Bound:
        """The binding to a --target URL, as the clients reach it from where they stand."""
        r = self.request
        return binding.bind(r, self.manifest, self.placement.reach(r.target), self.placement.reach(r.tls_target))

    def _spec(self, bound: Bound, mix: Mix, repeat_index: int = 0) -> RunSpec:
        return mix_spec(self.request, bound, mix, repeat_index, self.placement.engine_cores(), len(self.mixes))

    # -- the target

    def _target_plan(self) -> TargetPlan:
        assert self.request.server is not None
        return TargetPlan(
            server=self.request.server,
            roles=self.server_roles,
            settings=self._settings,
            by_server=self._settings_by_server,
            cpus=self.request.cpus,
            fileset=(
                self.request.suite.workload.fileset if self.request.fileset_dir is None else None,
                fileset_connections(self.request.suite),
                fileset_copies(self.request.suite),
            ),
            empty_docroot=empty_docroot,
        )

    @contextmanager
    def _trial_target(self) -> Iterator[tuple[Any, Bound]]:
        """The target of one trial and its binding, inside what the placement holds for a run."""
        with self.placement.around_run():
            if self._url_bound is not None:
                yield None, self._url_bound
                return
            target = self.placement.start_target(self._target_plan())
            try:
                yield target, binding.bind_started(self.request, self.manifest, target)
            except BaseException as exc:
                _clean_up_after(exc, target.stop)
                raise
            target.stop()

    def _cached_docroot(self) -> Path:
        """The suite's fileset from the cache, checked once per runner (not again for every trial)."""
        if self._docroot is None:
            workload = self.request.suite.workload
            if workload.replay is not None:
                # The suite's site, else one written from the log into the cache: every logged 200 answers.
                replay = workload.replay
                self._docroot = Path(replay.site) if replay.site else cached_site(replay.log, replay.reader_options())
                return self._docroot
            if workload.har is not None:
                # The suite's site, else one written from the HAR into the cache: every recorded file answers.
                har = workload.har
                self._docroot = Path(har.site) if har.site else cached_har_site(read_har(har.file))
                return self._docroot
            self._docroot = (
                cached_fileset(workload.fileset, connections=fileset_connections(self.request.suite),
                               copies=fileset_copies(self.request.suite))
                if workload.fileset else empty_docroot()
            )  # fmt: skip
        return self._docroot

    def _settings_by_server(self, docroot: Path | None = None) -> dict[str, ServerSettings]:
        """Each server of a role map with the kinds and TLS of the classes it serves, serving `docroot`
        (None: the run's own fileset)."""
        assert self.server_roles is not None
        workload = self.request.suite.workload
        role = roles_by_class(workload, self.server_roles)
        kinds: dict[str, set[str]] = {}
        for c in workload.classes:
            if c.kind in SERVER_KINDS:
                kinds.setdefault(role[c.name], set()).add(c.kind)
        tls = {role[c.name] for c in workload.classes if c.tls}
        return settings_by_server(self.server_roles, self._settings(docroot), kinds, tls)

    def _settings(self, docroot: Path | None) -> ServerSettings:
        """The target's settings, serving `docroot` (None: the run's own fileset), where the placement runs it."""
        workload = self.request.suite.workload
        kinds = {c.kind for c in workload.classes if c.kind in SERVER_KINDS}
        if workload.replay is not None or workload.har is not None:
            kinds.add("webstone-cgi")  # the log's dynamic requests: crest-bytes answers ?size=N
        settings = ServerSettings(
            docroot=docroot or self.request.fileset_dir or self._cached_docroot(),
            memory_bytes=self.request.memory_bytes,
            access_log=self.request.access_log,
            tls=any(c.tls for c in workload.classes) or workload.over_quic,
            tls_key=workload.tls_settings().key,
            kinds=frozenset(kinds),
            keepalive=workload.keepalive,
            http2=workload.http_version == "2",
            http3=workload.over_quic,
            options=dict(self.request.server_options),
        )
        return self.placement.server_settings(settings)

    # -- trials

    def run_trial(self, store: Store, repeat_index: int, mixes: Iterable[Mix] | None = None) -> str:
        """One run of the suite (one trial), with a freshly started target when crest provisions it.

        mixes: the suite's ladder unless given; may be lazy (a capacity search makes each probe after
        the previous one is stored and judged through the mix-finished event).
        """
        with self._trial_target() as (target, bound):
            run_id = store.create_run(self._meta(repeat_index, target, bound))
            if target is not None:
                target.keep_logs = store.path.parent / "logs" / run_id
            trial = _Trial(run_id, repeat_index, target, bound)
            self._execute(store, trial, self.mixes if mixes is None else mixes)
            return run_id

    @classmethod
    def resume(cls, run_id: str, store_path: Path = DEFAULT_PATH, on_event: EventCallback | None = None) -> str:
        """Continues a stored run with the mixes it has not finished."""
        try:
            return cls._resume(run_id, store_path, on_event)
        finally:
            close_clusters()

    @classmethod
    def _resume(cls, run_id: str, store_path: Path, on_event: EventCallback | None) -> str:
        with Store(store_path) as store:
            detail = store.run(run_id)
            if detail.status == "complete":
                raise ConfigError(f"run {detail.id} is already complete: nothing to resume")
            owner = store.live_owner(detail.id)
            if owner is not None and owner != os.getpid():
                raise ConfigError(
                    f"run {detail.id} is still running in crest (pid {owner}): let it finish, or stop that crest"
                    " (Ctrl-C) and resume it then"
                )
            if detail.meta.config["options"].get("capacity"):
                raise ConfigError(
                    f"run {detail.id} is a capacity search, whose next probe depends on every earlier one:"
                    " start it again with crest capacity"
                )
            if (detail.meta.config.get("suite") or {}).get("workload", {}).get("specweb99") is not None:
                raise ConfigError(
                    f"run {detail.id} is a SPECweb99 test, whose iterations its harness makes: start it again"
                    " with crest specweb99"
                )
            options = dict(detail.meta.config["options"])
            options["fileset_dir"] = Path(options["fileset_dir"]) if options["fileset_dir"] else None
            options["store_path"] = store_path
            request = RunRequest(suite=Suite.model_validate(detail.meta.config["suite"]), **options)
            if request.server is not None:
                request = replace(request, target=None, tls_target=None)
            runner = cls(request, on_event)
            runner.preflight()
            done = {m.index for m in detail.mixes}
            store.reopen_run(detail.id)
            with runner._trial_target() as (target, bound):
                if target is not None:
                    target.keep_logs = store.path.parent / "logs" / detail.id
                left = [m for m in runner.mixes if m.index not in done]
                runner._execute(store, _Trial(detail.id, detail.meta.repeat_index, target, bound), left)
            return detail.id

    def _execute(self, store: Store, trial: _Trial, mixes: Iterable[Mix]) -> None:
        self.on_event(
            Event("run-started", trial.run_id, trial.repeat_index, mixes=len(self.mixes), about=self._about(trial))
        )
        try:
            with self.placement.loading():
                if self.hooks is not None:  # the harness talks to the target from where the clients stand
                    self.placement.from_clients(partial(self.hooks.target_ready, trial.bound.url or ""))
                self._execute_mixes(store, trial, mixes)
        except KeyboardInterrupt:
            # Ctrl-C outside a mix's load (a preflight, storing a mix): still interrupted, not "running".
            raise self._end(
                store, trial, "interrupted", "interrupted between mixes", RunInterrupted(trial.run_id)
            ) from None
        except NodeLostError as exc:
            db = "" if store.path == DEFAULT_PATH else f" --db {store.path}"
            why = str(exc).removeprefix(f"node {exc.node} ")
            hint = f"the mixes before it are stored; when the cluster is whole again, crest run --resume {trial.run_id}{db}"
            raise self._fail_if_running(store, trial, str(exc), NodeLostError(exc.node, f"{why}: {hint}")) from None
        except Exception as exc:
            # A failure outside a mix's load (placing the load nodes, a node's monitor, the access log): the
            # run must not stay "running".
            self._fail_if_running(store, trial, str(exc), exc)
            raise

    def _working_set_bytes(self) -> int | None:
        """Every byte a static-only workload can request (its fileset); None when other kinds take memory too."""
        workload = self.request.suite.workload
        if self.manifest is None or any(c.kind != "static" for c in workload.classes):
            return None
        return self.manifest.total_bytes()

    def _execute_mixes(self, store: Store, trial: _Trial, mixes: Iterable[Mix]) -> None:
        measure = MixMeasure(
            self.request.suite, self.placement, trial.target, self.request.memory_bytes, self._working_set_bytes()
        )
        records: list[MixRecord] = []
        for mix in mixes:
            self.on_event(Event("mix-started", trial.run_id, trial.repeat_index, mix=mix, mixes=len(self.mixes)))
            try:
                lab = measure.restart_if_asked(mix)
                if self.preflight_requests:  # sent before this mix, outside its load: the target saw them
                    lab["preflight_requests"], self.preflight_requests = self.preflight_requests, 0
                spec = self._spec(trial.bound, mix, trial.repeat_index)
                load = self.placement.load(spec, mix.clients, mix.index, trial.target)
                load.preflight()
            except TargetError as exc:
                self._end(store, trial, "failed", f"target unreachable before mix {mix.index}: {exc}", exc)
                raise
            except NodeLostError as exc:
                self._end(store, trial, "failed", f"before mix {mix.index}: {exc}", exc)
                raise
            if self.hooks is not None:
                self.placement.from_clients(partial(self.hooks.before_mix, mix))
            progress = partial(self._progress, trial, mix)
            try:
                record = measure.measure(mix, spec, load, lab, progress)
            except Interrupted:
                why = f"interrupted during mix {mix.index}"
                raise self._end(store, trial, "interrupted", why, RunInterrupted(trial.run_id)) from None
            except LoadFailed as failed:
                raise self._end(store, trial, "failed", f"mix {mix.index}: {failed.cause}", failed.cause) from None
            if self.hooks is not None:
                self.placement.from_clients(partial(self.hooks.after_mix, mix, record))
            replay = self.request.suite.workload.replay
            if replay is not None and replay.hash:
                record = replace(record, verdicts=[replace(v, message=hash_text(v.message)) for v in record.verdicts])
            try:
                store.add_mix(trial.run_id, record)
            except DiskFullError as exc:
                self._stop_on_full_disk(store, trial, mix, exc)
            self.on_event(Event("mix-finished", trial.run_id, trial.repeat_index, mix=mix, record=record,
                                mixes=len(self.mixes)))  # fmt: skip
            self._stop_if_target_died(store, trial, mix, record)
            records.append(record)
        self._fail_if_nothing_succeeded(store, trial, records)
        # Whether the target was idle at the peak is the analysis's to judge (over a configuration's
        # trials); each mix stores the target's CPU use for it.
        self._finish(store, trial, "complete", None)

    def _progress(self, trial: _Trial, mix: Mix, live: dict[str, Any]) -> None:
        self.on_event(Event("mix-progress", trial.run_id, trial.repeat_index, mix=mix, live=live))

    def _stop_if_target_died(self, store: Store, trial: _Trial, mix: Mix, record: MixRecord) -> None:
        """A mix that only failed to connect: fail the run when the target stopped answering."""
        if record.requests != 0 or record.errors.get("connect", 0) == 0:
            return
        reason = self._dead_target_reason(trial, mix)
        if reason:
            raise self._end(store, trial, "failed", reason, TargetError(reason))

    def _fail_if_nothing_succeeded(self, store: Store, trial: _Trial, records: list[MixRecord]) -> None:
        """A run in which not one request of any mix succeeded measured nothing: it is failed, not complete,
        with the first error's reason (a PeerError: the target, not the input, failed; exit 1)."""
        if not records or any(r.requests for r in records) or not any(r.error_count for r in records):
            return
        records = store.run(trial.run_id).mixes  # a resumed run: the mixes stored before count too
        if any(r.requests for r in records):
            return
        failed = sum(r.error_count for r in records)
        first = next((v.message for r in records for v in r.verdicts if v.kind == ERRORS), "see crest show")
        reason = f"no request succeeded in any of its {len(records)} mixes ({failed:,} failed; {first})"
        # What decided it first, when the mixes say (the accept queues overflowing, a link at its rate).
        found = ranked([v for r in records for v in r.verdicts if v.kind in DECIDING])
        why = decided_by(found[0].kind, "in them", "the run", found[0].figures) if found else None
        reason += f"; {why}" if why else ""
        raise self._end(store, trial, "failed", reason, PeerError(reason))

    def _dead_target_reason(self, trial: _Trial, mix: Mix) -> str | None:
        try:
            if trial.target is not None:
                trial.target.check_alive()
            if self.request.suite.workload.is_file:
                if trial.bound.url and trial.bound.url.startswith("smb:"):
                    check_reachable(parse_file_url(trial.bound.url))
            else:
                tcp = not self.request.suite.workload.over_quic
                for url in filter(None, (trial.bound.url, trial.bound.tls_url)):
                    self.placement.from_clients(partial(check_reachable, parse_url(url), tcp=tcp))
        except TargetError as exc:
            return f"the target stopped answering during mix {mix.index}: {exc}"
        return None

    def _stop_on_full_disk(self, store: Store, trial: _Trial, mix: Mix, exc: DiskFullError) -> NoReturn:
        """Fail the run (if the store can still write that) and say how to go on: the mixes stored stay."""
        reason = f"cannot store mix {mix.index}: {exc.problem}"
        db = "" if store.path == DEFAULT_PATH else f" --db {store.path}"
        # The store gives up its reserve to write "failed"; if even that fails, the run reads as interrupted
        # once this crest has ended, and --resume continues it all the same.
        error = MachineError(f"{reason}: free space, then crest run --resume {trial.run_id}{db}")
        raise self._end(store, trial, "failed", reason, error) from None

    def _finish(self, store: Store, trial: _Trial, status: str, reason: str | None) -> None:
        store.finish_run(trial.run_id, status, reason)
        self.on_event(Event("run-finished", trial.run_id, trial.repeat_index, status=status, reason=reason))

    def _end(self, store: Store, trial: _Trial, status: str, reason: str, error: E) -> E:
        """Mark the run ended by `error` and return `error` to raise: a store that cannot take the end is
        told after it (a note), never instead of it; the run then reads as interrupted once crest has ended."""
        try:
            self._finish(store, trial, status, reason)
        except (StoreError, MachineError) as exc:
            error.add_note(f"cannot mark run {trial.run_id} {status}: {' '.join(str(exc).split())}")
        return error

    def _fail_if_running(self, store: Store, trial: _Trial, reason: str, error: E) -> E:
        """Mark the run failed by `error` unless it already ended; returns `error` to raise, as _end does."""
        try:
            running = store.run(trial.run_id).status == "running"
        except (StoreError, MachineError) as exc:
            error.add_note(f"cannot read run {trial.run_id}: {' '.join(str(exc).split())}")
            return error
        return self._end(store, trial, "failed", reason, error) if running else error

    # -- what is stored with the run

    def _meta(self, repeat_index: int, target: Any, bound: Bound) -> RunMeta:
        options = self.request.options()
        if target is not None:
            # New ports every run: resume provisions again; crest's own certificate is never verified.
            options.update(target=None, tls_target=None, insecure=True)
        config: dict[str, Any] = {
            "suite": self.request.suite.model_dump(mode="json"),
            "options": options,
            "experiment": self.request.experiment,
        }
        if self.request.capacity is not None:
            config["capacity"] = dict(self.request.capacity)
        if bound.log is not None:
            config["replay"] = replay_facts(bound.log, bound.dynamic_url is not None)
        if bound.har is not None:
            config["har"] = har_facts(bound.har)
        if target is not None:
            config["server"] = target.metadata()  # with the node it runs on in cluster mode
        config.update(self.placement.describe(target))  # the cores each side got, or the cluster
        return RunMeta(
            suite=self.request.suite.name,
            target=f"{self.request.server} at {bound.url}" if target is not None else str(bound.url),
            profile=self.request.profile,
            repeat_index=repeat_index,
            config=config,
            factors=dict(self.request.factors),
            host={**host_facts(), "disclosure": self._disclosure(target, bound)},
        )

    def _about(self, trial: _Trial) -> dict[str, Any]:
        """What a watcher names a run by: its suite, target, configuration and where its load runs."""
        request = self.request
        return {
            "suite": request.suite.name,
            "server": request.server,
            "target": trial.bound.url,
            "profile": request.profile,
            "factors": dict(request.factors),
            "experiment": request.experiment,
            **self.placement.describe(trial.target),
        }

    def _disclosure(self, target: Any, bound: Bound) -> dict[str, Any]:
        facts = self.placement.disclosure(target, bound.url, bound.tls_url)  # read where the target runs
        facts["network"] = self.placement.network_facts()
        return facts
