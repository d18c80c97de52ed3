"""Every table crest prints, drawn at 80 and 200 columns (and 140 where a long label used to wrap): no line
wider than the terminal, every figure of the data whole, every word of every label whole. Fabricated and
stored records only; nothing is started.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.cells import cell_len
from rich.console import Console, RenderableType
from typer.testing import CliRunner

from analysis_records import mix, run
from crest.analysis.specweb99 import specweb99_result
from crest.analysis.throughput import run_throughput
from crest.cli.main import main
from crest.cli.render import render_nodes, render_report
from crest.cli.render_network import render_network
from crest.cli.render_specweb99 import print_specweb99
from crest.cli.render_throughput import operations_table, throughput_table
from crest.cli.report import print_summary
from crest.cli.runs import runs_command, show_command
from crest.cli.terminal import Column, FitTable
from crest.load.runspec import RunSpec
from crest.report import build_report
from crest.store import RunDetail, Store
from test_specweb99_checks import connection_score, stored_iteration
from test_store import H2, make_meta, make_mix

WIDTHS = (80, 200)
LONG = "network=webcat-100mbit"  # the label that wrapped over four lines at 140 columns
# Four configurations whose labels differ in three factors, two trials each: a peak of 20,598 and labels
# longer than a quarter of an 80-column line.
CONFIGS = (("nginx", 1, "webcat-100mbit", 20_598.0), ("lighttpd", 1, "webcat-100mbit", 14_123.0),
           ("nginx", 2, "veritest-4x100", 30_111.0), ("lighttpd", 2, "veritest-4x100", 21_222.0))  # fmt: skip
LABELS = [f"server={s} cpus={c} network={n}" for s, c, n, _ in CONFIGS]


def drawn(renderable: RenderableType, width: int) -> str:
    out = Console(width=width, file=io.StringIO(), record=True, markup=False, highlight=False, color_system=None)
    out.print(renderable)
    return out.export_text()


def assert_fits(text: str, width: int, figures: Iterable[str] = (), labels: Iterable[str] = ()) -> None:
    """No line wider than `width`; each figure whole on one line; each label's every word whole."""
    for line in text.splitlines():
        assert cell_len(line.rstrip()) <= width, f"{cell_len(line.rstrip())} > {width} columns: {line!r}\n{text}"
    for figure in figures:
        assert any(figure in line for line in text.splitlines()), f"{figure!r} cut or missing at {width}:\n{text}"
    words = set(text.split())
    for label in labels:
        missing = [word for word in label.split() if word not in words]
        assert not missing, f"{missing} of {label!r} cut or missing at {width}:\n{text}"


# -- the table itself -------------------------------------------------------------------------------------


def table() -> FitTable:
    t = FitTable([Column("configuration", "left", legend=True), Column("trials"), Column("peak req/s"),
                  Column("± 95% CI"), Column("p99"), Column("saturation", "left", wrap=True)], title="peaks")  # fmt: skip
    for label, peak in zip(LABELS, ("20,598", "14,123", "30,111", "21,222")):
        t.add_row(label, "2", peak, "1,234", "4.00ms", "NOT saturated")
    return t


def test_a_table_is_drawn_whole_when_it_fits_then_with_a_legend_then_split_then_stacked() -> None:
    t = table()
    assert [t.layout(w).kind for w in (200, 64, 46, 30)] == ["table", "legend", "split", "stacked"]
    wide = drawn(t, 200)
    assert all(any(label in line for line in wide.splitlines()) for label in LABELS)  # one line each
    legend = drawn(t, 64).splitlines()
    assert legend[1:5] == [f"[{n}] {label}" for n, label in enumerate(LABELS, 1)]  # under the title
    assert any(line.split()[:4] == ["[1]", "2", "20,598", "1,234"] for line in legend)
    stacked = drawn(t, 30).splitlines()
    assert " ".join(stacked[1:3]).split() == LABELS[0].split()  # the label, wrapped between words
    assert stacked[3].split()[:4] == ["trials", "2", "peak", "req/s"]


@pytest.mark.parametrize("width", range(24, 201, 11))
def test_no_width_cuts_a_figure_or_a_word(width: int) -> None:
    assert_fits(drawn(table(), width), width, ["20,598", "14,123", "30,111", "21,222", "4.00ms"], LABELS)


def test_a_label_wraps_between_words_never_inside_one() -> None:
    t = FitTable([Column("configuration", "left", wrap=True), Column("req/s")])
    t.add_row("server=nginx cpus=1 network=webcat-100mbit", "20,598")
    text = drawn(t, 40)  # narrower than the label, wider than its longest word
    assert [line.split()[0] for line in text.splitlines()[2:]] == ["server=nginx", LONG]


# -- crest report / compare / run's summary ---------------------------------------------------------------


def details() -> list[RunDetail]:
    runs = []
    for i, (server, cpus, network, peak) in enumerate(CONFIGS):
        for trial in range(2):
            runs.append(run([peak / 2, peak * (1 + 0.01 * trial), peak * 0.9], run_id=f"r{i}{trial}",
                            factors={"server": server, "cpus": cpus, "network": network}, repeat_index=trial))  # fmt: skip
    return runs


@pytest.mark.parametrize("width", (80, 140, 200))
def test_the_compare_summary_keeps_every_label_and_digit(
    width: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    doc = build_report(details(), baseline=LABELS[0])
    print_summary(doc, Path("r.html"))
    out = capsys.readouterr().out
    peaks = [f"{c['peak']['rps']:,.0f}" for c in doc["configurations"]]
    pivot = doc["peaks"]["pivot"]["rows"]
    assert_fits(out, width, [*peaks, "20,598–20,804", "+113%"], [*LABELS, *(row["label"] for row in pivot)])
    if width != 140:
        assert all(label in out for label in LABELS)  # whole, in a legend or a row


def test_a_single_run_summary_keeps_its_figures(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for width in WIDTHS:
        monkeypatch.setenv("COLUMNS", str(width))
        print_summary(build_report(details()[:1]), Path("r.html"))
        out = capsys.readouterr().out
        assert_fits(out, width, ["20,598", "20.60", "3.00", "2 clients"])


# -- crest runs, crest show -------------------------------------------------------------------------------

NETWORK = {
    "window_s": 20,
    "links": [
        {"link": "subnet 1 uplink", "direction": "tx", "rate_bps": 100e6, "bits_per_s": 99.8e6, "utilisation": 0.998,
         "drops": 12_345, "overlimits": 678_901},
        {"link": "client lines", "direction": "rx", "rate_bps": 10e6, "bits_per_s": 9.1e6, "utilisation": 0.91,
         "scope": "client", "clients": 8, "utilisation_mean": 0.6, "drops": 0, "overlimits": 0},
    ],
    "tcp": {"client": {"retrans_segs": 1_234, "out_segs": 567_890}, "server": {"retrans_segs": 12, "out_segs": 98_765}},
    "delay_line": {"packets": 123_456, "dropped": 7, "cpu_cores": 0.72, "late_mean_us": 351.2, "late_p99_us": 4096},
}  # fmt: skip
NODES = {"nodes": [
    {"node_id": "aa11bb22cc", "ip": "10.0.0.3", "first_client": 0, "clients": 8, "requests": 1_234_567, "rps": 20_598.4,
     "engine_cpu_util_pct": 97.0, "client_bound": True, "clock_offset_s": 0.00012, "clock_uncertainty_s": 0.0003},
]}  # fmt: skip
MONITOR = {"target": {"cpu_util_pct": 87.0, "cores": 1}, "engine": {"cpu_util_pct": 99.0, "cores": 1}}


def test_runs_and_show_fit(tmp_path: Path) -> None:
    db = tmp_path / "crest.db"
    with Store(db) as store:
        run_id = store.create_run(make_meta(factors={"server": "nginx", "cpus": 1, "network": "webcat-100mbit"}))
        for i in range(3):
            store.add_mix(run_id, make_mix(i, rps=20_598.4 + i, requests=1_234_567 + i, monitor=MONITOR,
                                           h2=H2 if i else None, network=NETWORK if i == 2 else None,
                                           cluster=NODES if i == 1 else None))  # fmt: skip
        store.finish_run(run_id, "complete")
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.command("runs")(runs_command)
    app.command("show")(show_command)
    for width in WIDTHS:
        env = {"COLUMNS": str(width), "NO_COLOR": "1"}
        listing = CliRunner().invoke(app, ["runs", "--db", str(db)], env=env)
        assert listing.exit_code == 0, listing.output
        assert_fits(listing.stdout, width, [run_id, "webbench-static"], ["server=nginx cpus=1 network=webcat-100mbit"])
        shown = CliRunner().invoke(app, ["show", run_id, "--db", str(db)], env=env)
        assert shown.exit_code == 0, shown.output
        mixes = ["20,598.4", "20,600.4", "1,234,567", "1,234,569", "87% of 1", "99% of 1", "4.00ms", "800us"]
        nodes = ["10.0.0.3", "+0.120±0.300 ms"]
        network = ["100.00", "99.80", "12,345", "678,901", "567,890", "98,765", "123,456"]
        h2 = ["1.93×", "2.94×", "594"]
        assert_fits(shown.stdout, width, [*mixes, *nodes, *network, *h2], ["subnet 1 uplink", "8 clients (0-7)"])


def test_the_throughput_and_operations_tables_fit() -> None:
    classes = {name: {"requests": 1_234_567, "rps": 20_598.4, "throughput_Bps": 123_456_789.0, "errors": 3,
                      "latency_us": {"mean": 1234.0, "p99": 98_765.0}}
               for name in ("read", "write", "find_first", "query_file_information")}  # fmt: skip
    detail = run([20_598.0, 41_196.0, 30_000.0], suite="netbench-disk-mix")
    detail.mixes[1] = mix(1, 2, 41_196.0, classes=classes)
    curve = run_throughput(detail)
    ops = operations_table(detail.mixes[1])
    assert ops is not None
    for width in WIDTHS:
        assert_fits(drawn(throughput_table(curve), width), width, [f"{p.mbit_s:,.1f}" for p in curve.points])
        assert_fits(drawn(ops, width), width, ["1,234,567", "20,598", "123.46", "1.23ms", "98.77ms"],
                    ["query_file_information"])  # fmt: skip


# -- bench, the network block, the cluster's nodes ---------------------------------------------------------


def test_the_bench_summary_folds_between_figures() -> None:
    report: dict[str, Any] = {
        "duration_s": 3.0, "requests": 724_400, "rps": 241_466.7, "bytes": 123_456_789, "throughput_Bps": 41e6,
        "connections_opened": 28_674, "connect_us": {"p50": 123.0},
        "latency_us": {"mean": 1234.0, "p50": 1001.0, "p90": 2002.0, "p99": 123_456.0, "p999": 234_567.0,
                       "max": 12_345_678.0},
        "status": {"200": 700_000, "301": 12_000, "404": 12_345, "500": 55, "503": 1_234},
        "errors": {"connect": 1_234, "timeout": 5_678, "tls": 91_011, "read": 1, "reset": 22},
    }  # fmt: skip
    spec = RunSpec(url="http://127.0.0.1:8080/")
    figures = ["1.23ms", "1.00ms", "2.00ms", "123.46ms", "234.57ms", "12.35s", "404: 12,345", "503: 1,234",
               "timeout 5,678", "tls 91,011", "reset 22"]  # fmt: skip
    for width in WIDTHS:
        assert_fits(render_report(report, spec, width), width, figures)
        assert_fits(
            render_network(NETWORK, width), width, ["12,345", "678,901", "567,890", "351", "4,096"], ["subnet 1 uplink"]
        )
        assert_fits(render_nodes(NODES, width), width, ["1,234,567", "20,598.4", "+0.120±0.300 ms"])
    folded = render_report(report, spec, 80).splitlines()
    (latency,) = [i for i, line in enumerate(folded) if line.startswith("  Latency")]
    assert folded[latency + 1].startswith(" " * 14 + "p")  # the next figure, under the first


# -- SPECweb99, weighted, doe, suites ----------------------------------------------------------------------


def test_the_specweb99_tables_fit(capsys: pytest.CaptureFixture[str]) -> None:
    scores = [connection_score(requests=1_234) for _ in range(19)] + [connection_score(rate_bps=300_000)]
    mixes = [stored_iteration(i, scores) for i in (1, 2, 3)]
    result = specweb99_result(RunDetail("s", make_meta(suite="specweb99"), "complete", None, 0.0, 1.0, mixes))
    for width in WIDTHS:
        print_specweb99(result, width)
        out = capsys.readouterr().out
        assert_fits(out, width, ["2*", "19", "0.350", "0.500", "400", "95", "100"])


def test_weighted_doe_and_suites_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_report_sweep import store_sweeps

    db = tmp_path / "lab.db"
    store_sweeps(db)
    kornecki = Path(__file__).parent / "data" / "published" / "kornecki-2k-figure2.csv"
    csv = tmp_path / "sweep.csv"
    csv.write_text("size_bytes,throughput_Mbps\n100,10\n2000,60\n50000,90\n500000,100\n5000000,1\n")
    for width in WIDTHS:
        monkeypatch.setenv("COLUMNS", str(width))
        for args, figures, labels in (
            (["weighted", "sweep-1", "--db", str(db)], ["per configuration"], ["server=a", "server=b"]),
            (["weighted", "--csv", str(csv)], ["50.65", "5,000,000"], []),
            (["doe", "--analyze", str(kornecki), "--response", "rps"], ["25,118.75", "75.38", "91,025", "161.25"],
             ["buffer_bytes:workload:clients:memory_MB"]),
            (["suites"], ["veritest-ecommerce-isapi"], ["VeriTest 2003 (seed 000)"]),
        ):  # fmt: skip
            assert main(args) == 0
            assert_fits(capsys.readouterr().out, width, figures, labels)


def test_crest_servers_folds_its_lines_under_their_indent(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    options = ["profile", "max_request_workers", "server_limit", "start_servers", "requests_per_child", "backlog",
               "keepalive_timeout", "keepalive_requests", "sendfile", "mmap", "file_cache", "access_log"]  # fmt: skip
    rows = [{"name": "apache-event", "installed": False, "version": None, "install": "apt-get install -y apache2",
             "kinds": ["cgi", "fastcgi", "inproc", "specweb99", "specweb99-get", "webstone-cgi"],
             "title": "Apache httpd (event MPM)", "http2": True, "http3": False, "options": options,
             "missing": [{"needed_for": "cgi", "part": "needs mod_cgid", "install": "apt-get install -y apache2-bin"}]}]  # fmt: skip
    monkeypatch.setattr("crest.cli.servers.describe_all", lambda: rows)
    for width in WIDTHS:
        monkeypatch.setenv("COLUMNS", str(width))
        assert main(["servers"]) == 0
        out = capsys.readouterr().out
        assert_fits(out, width, ["apt-get install -y apache2", "webstone-cgi", *options])
        body = out.split("\n\n")[0].splitlines()[1:]  # the lines after the name's, before the --json hint
        assert len(body) >= 3 and all(line.startswith(" " * 14) for line in body)  # under the name, not at column 0


def test_a_capacity_result_folds_between_words(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from crest.analysis.capacity import capacity_result
    from crest.cli.capacity import print_result
    from test_capacity_run import capacity_run

    result = capacity_result(capacity_run({n: 9.8 * n for n in range(1, 20)}, [1, 2, 4, 8, 6, 5, 5, 5]))
    for width in WIDTHS:
        monkeypatch.setenv("COLUMNS", str(width))
        print_result(result)
        out = capsys.readouterr().out
        assert_fits(out, width, ["49.00ms", "58.80ms", "(confirm)", "broke p99<50ms"], [result.statement()])


def test_output_to_a_file_is_not_hard_wrapped(capsys: pytest.CaptureFixture[str]) -> None:
    """The README walk: a run's output sent to a file was wrapped at 80 columns (rich's width when stderr is
    not a terminal). Neither the run's lines on stderr nor the folded prose on stdout wrap when piped."""
    from crest.cli.run import Progress
    from crest.cli.terminal import console, fold

    assert not console(stderr=True).is_terminal
    prose = "capacity: " + " ".join(f"word{i}" for i in range(80))  # 480 columns
    console(stderr=True).print(prose)
    print(fold(prose))
    out, err = capsys.readouterr()
    assert err == prose + "\n" and out == prose + "\n"
    assert Progress(enabled=False).console.width >= 200 and Progress(enabled=False).console.soft_wrap


def test_a_run_says_where_its_access_log_went(tmp_path: Path) -> None:
    """The README walk: an --access-log run never said where the log went."""
    from crest.cli.run import logs_kept

    db = tmp_path / "crest.db"
    (tmp_path / "logs" / "r1").mkdir(parents=True)
    (tmp_path / "logs" / "r1" / "access.log").write_text("")
    (tmp_path / "logs" / "r2" / "static").mkdir(parents=True)  # a per-class target: one log per role
    for role in ("static", "dynamic"):
        (tmp_path / "logs" / "r2" / role).mkdir(parents=True, exist_ok=True)
        (tmp_path / "logs" / "r2" / role / "access.log").write_text("")
    assert logs_kept(db, ["r1", "r2", "r3"]) == [
        f"crest: the target's access log of run r1: {tmp_path / 'logs' / 'r1' / 'access.log'}",
        f"crest: the target's access logs of run r2: {tmp_path / 'logs' / 'r2' / 'dynamic' / 'access.log'},"
        f" {tmp_path / 'logs' / 'r2' / 'static' / 'access.log'}",
    ]
