"""--metrics with real parts: the endpoint on a socket (its refusals, its stop), and Debian's Prometheus
scraping it every second during real engine runs, its query API giving back crest's request count. The
exposition itself is tested without sockets in test_metrics.py."""

from __future__ import annotations

import json
import socket
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crest.errors import ConfigError
from crest.load.client import LoadClient
from crest.load.runspec import RunSpec
from crest.observe.frames import Feed, Frame
from crest.observe.metrics import MetricsSink, serve_metrics
from support import wait_until

pytestmark = pytest.mark.integration

PROMETHEUS = Path("/usr/bin/prometheus")
# Mixes of 2 s, one after another until Prometheus has scraped one as it ran (its first scrape comes
# about 5 s after it starts): 3 or 4 mixes.
MIX_S = 2.0
MIXES_AT_MOST = 8


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get(url: str, accept: str | None = None) -> tuple[int, str, str]:
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read().decode()


def test_the_endpoint_serves_where_told_refuses_a_taken_port_in_one_line_and_stops() -> None:
    sink = MetricsSink()
    Feed([sink]).run_started("run-a", 0, 1, {"suite": "s", "server": "builtin"})
    served = serve_metrics(sink, "127.0.0.1", 0)
    try:
        assert served.url == f"http://127.0.0.1:{served.port}/metrics"
        status, content_type, body = get(served.url, "application/openmetrics-text;version=1.0.0")
        assert status == 200 and content_type.startswith("application/openmetrics-text")
        assert 'crest_run_info{configuration="builtin"' in body and body.endswith("# EOF\n")
        assert get(served.url.replace("/metrics", "/other"))[0] == 404
        with pytest.raises(
            ConfigError, match=rf"^--metrics: cannot listen on 127.0.0.1:{served.port}: the port is in use;"
        ):
            serve_metrics(sink, "127.0.0.1", served.port)
        elsewhere = r"^--metrics: cannot listen on 192.0.2.1:9464: 192.0.2.1 is not an address of this machine; name"
        with pytest.raises(ConfigError, match=elsewhere + r" one \(e.g. --metrics 127.0.0.1:9464\)$"):
            serve_metrics(sink, "192.0.2.1", 9464)  # TEST-NET-1: never this machine's
    finally:
        served.stop()
    served.stop()  # twice is harmless
    with pytest.raises(urllib.error.URLError):
        get(served.url)


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """Debian's prometheus on 127.0.0.1, scraping 127.0.0.1:PORT/metrics every second: (its URL, PORT)."""
    if not PROMETHEUS.exists():
        pytest.skip("Debian's prometheus is not installed: sudo apt-get install -y prometheus")
    port, web = free_port(), free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
        f"scrape_configs: [{{job_name: crest, static_configs: [{{targets: ['127.0.0.1:{port}']}}]}}]\n"
    )
    log = (tmp_path / "prometheus.log").open("w")
    server = subprocess.Popen(
        [str(PROMETHEUS), f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{web}"],
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{web}"
    try:
        wait_until(lambda: _ready(url) or server.poll() is not None, 20, "prometheus ready")
        assert server.poll() is None, (tmp_path / "prometheus.log").read_text()[-2000:]
        yield url, port
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _ready(url: str) -> bool:
    try:
        return get(url + "/-/ready")[0] == 200
    except OSError:
        return False


def query(url: str, promql: str) -> list[dict[str, Any]]:
    status, _, body = get(f"{url}/api/v1/query?query={urllib.parse.quote(promql)}")
    assert status == 200, body
    answer = json.loads(body)
    assert answer["status"] == "success", answer
    return list(answer["data"]["result"])


@pytest.mark.timeout(60)
def test_prometheus_scrapes_a_run_and_its_query_api_gives_back_crests_request_count(
    prometheus: tuple[str, int], builtin_target: str
) -> None:
    """In-process (the runner's frames from real engine runs, a mix at a time), not `crest run --metrics`:
    Prometheus's first scrape comes ~5 s after it starts, and a run in this process can go on until it
    has been scraped, and stop right after, where a CLI run would have to be long enough to be sure."""
    url, port = prometheus
    sink = MetricsSink()
    served = serve_metrics(sink, "127.0.0.1", port)
    frames = Frames()
    feed = Feed([sink, frames])
    answered: dict[int, int] = {}  # the engine's requests per mix, as a run stores them
    try:
        feed.run_started("run-1", 0, MIXES_AT_MOST, {"suite": "prometheus", "server": "builtin"})
        for index in range(1, MIXES_AT_MOST + 1):
            feed.mix_started("run-1", index, 2, MIXES_AT_MOST)
            client = LoadClient(RunSpec(url=builtin_target + "1k.html", connections=2, threads=1, duration_s=MIX_S))

            def progress(live: dict[str, Any], index: int = index) -> None:
                feed.progress("run-1", index, live)

            answered[index] = int(client.run(on_progress=progress).report["requests"])
            # The live gauges are exported only while a mix runs: once Prometheus holds one, it scraped the run.
            if query(url, "count_over_time(crest_requests_per_second[1m])"):
                break
        else:
            pytest.fail(f"Prometheus did not scrape in {MIXES_AT_MOST} mixes of {MIX_S:g} s")
        feed.run_finished("run-1", "complete", None)
        # The last mix's totals stay exported after the run: Prometheus catches up with the last sample.
        final = int([f for f in frames.got if f["type"] == "sample"][-1]["requests"])
        wait_until(lambda: _latest(url) == final, 10, f"Prometheus holding crest_requests_total = {final}")
        # Asked while crest still serves: a target that stops answering has its series marked stale.
        (latest,) = query(url, "crest_requests_total")
        seen = query(url, "max_over_time(crest_requests_total[1m])")
        status, _, body = get(f"{url}/api/v1/metadata?metric=crest_request_latency_seconds")
    finally:
        served.stop()
    labels = {k: latest["metric"][k] for k in ("job", "run", "mix", "configuration", "node")}
    assert labels == {"job": "crest", "run": "run-1", "mix": str(index), "configuration": "builtin", "node": "local"}
    # Every mix Prometheus saw: more than nothing, at most what the engine counted (live counts lag it).
    counted = {int(r["metric"]["mix"]): float(r["value"][1]) for r in seen}
    assert counted and all(0 < n <= answered[mix] for mix, n in counted.items()), (counted, answered)
    # It scraped OpenMetrics (asked for by Prometheus, served by crest): the metadata carries the unit.
    assert status == 200, body
    metadata = json.loads(body)["data"]["crest_request_latency_seconds"][0]
    assert (metadata["type"], metadata["unit"]) == ("histogram", "seconds")  # the classic format has no unit


class Frames:
    """A Sink that keeps every frame."""

    def __init__(self) -> None:
        self.got: list[Frame] = []

    def publish(self, frame: Frame) -> None:
        self.got.append(frame)

    def close(self) -> None:
        pass


def _latest(url: str) -> int | None:
    found = query(url, "crest_requests_total")
    return int(float(found[0]["value"][1])) if len(found) == 1 else None
