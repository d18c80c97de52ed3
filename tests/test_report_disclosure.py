"""The report's Disclosure section from stored runs: a run's real disclosure, TLS facts, and an older run's few facts."""

from __future__ import annotations

import random
from dataclasses import replace
from importlib.resources import files
from pathlib import Path

from crest.analysis.published import load_published_runs, store_published
from crest.host import disclosure
from crest.report import build_report, render
from crest.store import RunMeta, Store
from report_lab import HOST, THREE, make_mix, store_lab
from test_report_build import check_schema, select

TLS = {"handshakes": 40, "resumed": 30, "handshake_us": {"p50": 200.0},
       "negotiated": [{"protocol": "TLSv1.3", "cipher": "TLS_AES_256_GCM_SHA384", "handshakes": 40}]}  # fmt: skip


def test_the_disclosure_section_shows_every_table(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    facts = disclosure.collect(tmp_path, "http://127.0.0.1:1/", None)
    facts["tls"] = {"key_type": "RSA", "key_bits": 2048, "curve": disclosure.not_applicable("not an elliptic-curve key"),
                    "signature": "sha256WithRSAEncryption"}  # fmt: skip
    curve = THREE[0]
    config = {"suite": {"name": "s", "workload": {"http_version": "1.1", "tls": {"key": "rsa2048"}}},
              "options": {}, "server": {**(curve.server or {}), "config_text": "worker_processes 2;\n"}}  # fmt: skip
    with Store(db) as store:
        run_id = store.create_run(RunMeta(suite="s", target="nginx", profile="quick", repeat_index=0, config=config,
                                          factors=dict(curve.factors), host={**HOST, "disclosure": facts}))  # fmt: skip
        for i, load in enumerate((1, 2)):
            store.add_mix(run_id, replace(make_mix(curve, i, load, 2, random.Random(i)), tls=TLS, naps=1_200 * i))
        store.finish_run(run_id, "complete")
    doc = build_report(select(db, run_id))
    check_schema(doc)
    section = doc["disclosure"]
    (machine,) = section["machines"]
    titles = [t["title"] for t in machine["tables"]]
    assert titles == ["Hardware", "Operating system", "Tuning (sysctls, ulimits)", "Docroot filesystem",
                      "Network interface"]  # fmt: skip
    rows = {r["field"]: r for t in machine["tables"] for r in t["rows"]}
    assert rows["net.core.somaxconn"]["value"].isdigit()
    assert rows["interface"]["why"].startswith("not applicable: the target is on loopback")
    assert "disclosure" not in doc["hosts"][0]["facts"]
    (tls,) = section["tls"]
    tls_rows = {r["field"]: r for r in tls["rows"]}
    assert tls_rows["negotiated"]["value"] == "TLSv1.3 TLS_AES_256_GCM_SHA384 (100% of handshakes)"
    assert tls_rows["key size (bits)"]["value"] == "2048" and tls_rows["key type"]["value"] == "RSA"
    assert tls_rows["handshakes resumed"]["value"] == "60 of 80 (75%)"
    assert section["servers"][0]["config_text"] == "worker_processes 2;\n"
    waiting = {r["field"]: r for r in section["clients"][0]["rows"]}["engine waiting"]
    assert waiting["value"].startswith("napped under load instead of blocking: 1,200 naps in 2 mixes")
    page = render(doc, "html")
    assert page.count('id="disclosure"') == 1 and "<summary>full configuration</summary>" in page
    assert "not applicable: the target is on loopback" in render(doc, "md")


def test_the_disclosure_names_the_server_that_took_the_tls_classes_and_the_servers_profile(tmp_path: Path) -> None:
    """VeriTest's rule (all SSL to the dynamic server) and Mindcraft's preset, as a run stored them."""
    db = tmp_path / "lab.db"
    curve = THREE[0]
    apache = {"name": "apache-prefork", "options": {"profile": "mindcraft", "max_request_workers": "290"}}
    server = {**(curve.server or {}), **apache, "roles": {"static": {"name": "nginx"}, "dynamic": apache}}
    config = {"suite": {"name": "s", "workload": {"http_version": "1.0", "tls": {"key": "rsa2048", "route": "dynamic"}}},
              "options": {}, "server": server}  # fmt: skip
    with Store(db) as store:
        run_id = store.create_run(RunMeta(suite="s", target="nginx", profile="quick", repeat_index=0, config=config,
                                          factors=dict(curve.factors), host=HOST))  # fmt: skip
        store.add_mix(run_id, replace(make_mix(curve, 0, 1, 2, random.Random(0)), tls=TLS))
        store.finish_run(run_id, "complete")
    section = build_report(select(db, run_id))["disclosure"]
    (tls,) = section["tls"]
    routed = {r["field"]: r for r in tls["rows"]}["TLS classes served by"]
    assert routed["value"] == "the dynamic target (apache-prefork), as the suite's route = 'dynamic' says"
    options = {r["field"]: r for r in section["servers"][0]["rows"]}["options"]
    assert options["value"] == "profile=mindcraft, max_request_workers=290"


def test_an_older_run_says_what_was_not_recorded(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    (run_id,) = store_lab(db, curves=[THREE[1]], trials=1)
    doc = build_report(select(db, run_id))
    check_schema(doc)
    rows = [r for t in doc["disclosure"]["machines"][0]["tables"] for r in t["rows"]]
    assert {"field": "CPU", "value": HOST["cpu_model"]} in rows
    assert any(r.get("why", "").startswith("not recorded") for r in rows)
    assert doc["disclosure"]["tls"] == []
    clients = {r["field"]: r for r in doc["disclosure"]["clients"][0]["rows"]}
    assert clients["engine waiting"]["why"].startswith("not recorded: stored by a crest that did not count naps")


def test_a_run_with_no_nap_says_its_engine_always_blocked(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    curve = THREE[0]
    config = {"suite": {"name": "s", "workload": {"http_version": "1.1"}}, "options": {"nap": False}}
    with Store(db) as store:
        run_id = store.create_run(RunMeta(suite="s", target="nginx", profile="quick", repeat_index=0, config=config,
                                          factors=dict(curve.factors), host=HOST))  # fmt: skip
        store.add_mix(run_id, replace(make_mix(curve, 0, 1, 1, random.Random(0)), naps=0))
        store.finish_run(run_id, "complete")
    doc = build_report(select(db, run_id))
    check_schema(doc)
    clients = {r["field"]: r for r in doc["disclosure"]["clients"][0]["rows"]}
    assert clients["engine waiting"]["value"] == "always blocked on its sockets (--no-nap)"


def test_published_figures_disclose_their_source_not_crests_machine_or_engine(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    table = files("crest").joinpath("analysis/published_data/mindcraft-webbench.csv")
    with Store(db) as store:
        ids = store_published(store, load_published_runs(Path(str(table)), "mindcraft-1999"))
    doc = build_report(select(db, *ids))
    check_schema(doc)
    section = doc["disclosure"]
    (machine,) = section["machines"]
    rows = {r["field"]: r for t in machine["tables"] for r in t["rows"]}
    assert rows["source"]["value"] == "mindcraft-webbench.csv (dataset mindcraft-1999, stored by crest import)"
    assert rows["the machine"]["why"].startswith("not applicable: published figures")
    for table_of in (section["servers"], section["clients"]):
        assert all(t["rows"][0]["why"].startswith("not applicable: published figures") for t in table_of)
    clients = {r["field"]: r for r in section["clients"][0]["rows"]}
    assert set(clients) == {"load generator", "clients per mix", "connections per mix"}  # nothing of crest's engine
    assert doc["hosts"] == []  # no load-generator host of crest's measured them
    page = render(doc, "md")
    assert "crest engine" not in page and "Host:" not in page
