// The live page: reads the run's frames from /live/events (server-sent events) and draws them.
// Charts are SVG in the HTML report's palette, markers and axes (crest.report.svg); nothing is fetched
// from anywhere else. EventSource reconnects by itself and resumes from the last frame it got.
"use strict";

(() => {
  const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000", "#F0E442"];
  const MARKERS = ["circle", "square", "triangle", "diamond", "down", "cross", "circle", "square"];
  const ML = 62, MR = 16, MT = 14, MB = 46;
  const SVGNS = "http://www.w3.org/2000/svg";
  const WINDOW_S = 600; // the second-by-second charts show the current run's last ten minutes

  const runs = new Map(); // run_id -> run
  const configurations = []; // in order of appearance: a configuration's index picks its colour
  let current = null; // the run the tiles and the time charts follow: the last one that started
  let seen = 0;
  let ended = false;
  let pending = false;

  const $ = (id) => document.getElementById(id);

  function run(frame) {
    let r = runs.get(frame.run_id);
    if (!r) {
      r = { id: frame.run_id, configuration: frame.configuration || "", about: {}, mixes: 0, t0: frame.t,
            ladder: [], samples: [], starts: [], verdicts: [], status: "running", mix: null, clients: null,
            errorsDone: {} };
      runs.set(frame.run_id, r);
      if (!configurations.includes(r.configuration)) configurations.push(r.configuration);
    }
    return r;
  }

  function take(frame) {
    const r = run(frame);
    switch (frame.type) {
      case "run-started":
        Object.assign(r, { about: frame.about || {}, mixes: frame.mixes, t0: frame.t, status: "running" });
        current = r;
        break;
      case "mix-started":
        Object.assign(r, { mix: frame.mix, clients: frame.clients, mixes: frame.mixes || r.mixes });
        r.starts.push({ t: frame.t - r.t0, clients: frame.clients, mix: frame.mix });
        r.last = null;
        if (!current || current.status !== "running") current = r;
        break;
      case "sample":
        r.samples.push({ x: frame.t - r.t0, ...frame });
        if (r.samples.length > 4 * WINDOW_S) r.samples.splice(0, r.samples.length - 2 * WINDOW_S);
        r.last = frame;
        r.latest = frame;
        r.mix = frame.mix;
        r.clients = frame.clients;
        break;
      case "mix-finished":
        r.ladder.push(frame);
        for (const v of frame.verdicts || []) r.verdicts.push({ mix: frame.mix, clients: frame.clients, ...v });
        for (const [k, n] of Object.entries(frame.errors_by_kind || {})) r.errorsDone[k] = (r.errorsDone[k] || 0) + n;
        r.last = null;
        r.mix = null;
        break;
      case "run-finished":
        r.status = frame.status || "ended";
        r.reason = frame.reason;
        break;
    }
    if (!current) current = r;
  }

  // -- formatting, as crest.report.fmt writes figures

  function rps(v) {
    if (v === null || v === undefined || Number.isNaN(v)) return "–";
    return Math.abs(v) < 100 ? v.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 })
      : even(v).toLocaleString("en-US");
  }
  // Halves to the even neighbour, as Python's format() rounds: the page's figures equal the report's.
  function even(v) {
    const r = Math.round(v);
    return Math.abs(v - Math.trunc(v)) === 0.5 && r % 2 !== 0 ? r - 1 : r;
  }
  function ms(us) {
    if (us === null || us === undefined) return "–";
    const v = us / 1000;
    if (v < 1) return v.toFixed(3);
    if (v < 10) return v.toFixed(2);
    if (v < 100) return v.toFixed(1);
    return Math.round(v).toLocaleString("en-US");
  }
  function short(v) {
    const a = Math.abs(v);
    if (a >= 1e6) return +(v / 1e6).toFixed(a >= 1e7 ? 0 : 1) + "M";
    if (a >= 1e3) return +(v / 1e3).toFixed(a >= 1e4 ? 0 : 1) + "k";
    return a < 10 && a !== Math.round(a) ? +v.toFixed(2) + "" : Math.round(v) + "";
  }
  function clients(n) { return n === 1 ? "1 client" : `${n} clients`; }
  function cores(n) { return n === 1 ? "1 core" : `${n} cores`; }
  function pct(v) { return v === null || v === undefined ? "–" : Math.round(v) + "%"; }
  function cpuTile(side, s, onePct, n) {
    const known = onePct !== null && onePct !== undefined;
    $(`${side}-cpu`).textContent = known ? pct(n ? onePct / n : onePct) : "–";
    $(`${side}-cores`).textContent = known && n ? `of its ${cores(n)}` : "% of one core";
  }

  // -- drawing

  function el(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function niceTicks(lo, hi, n) {
    if (!(hi > lo)) hi = lo + 1;
    const raw = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw);
    const ticks = [];
    for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(+t.toPrecision(12));
    return { ticks, lo: Math.min(lo, ticks[0]), hi: Math.max(hi, ticks[ticks.length - 1]) };
  }

  function mark(shape, x, y, colour, r) {
    const s = r || 3.6;
    const paths = {
      square: `M${x - s},${y - s} h${2 * s} v${2 * s} h${-2 * s} Z`,
      triangle: `M${x},${y - s * 1.2} L${x + s * 1.1},${y + s * 0.8} L${x - s * 1.1},${y + s * 0.8} Z`,
      down: `M${x},${y + s * 1.2} L${x + s * 1.1},${y - s * 0.8} L${x - s * 1.1},${y - s * 0.8} Z`,
      diamond: `M${x},${y - s * 1.3} L${x + s * 1.2},${y} L${x},${y + s * 1.3} L${x - s * 1.2},${y} Z`,
      cross: `M${x - s},${y - s} L${x + s},${y + s} M${x - s},${y + s} L${x + s},${y - s}`,
    };
    if (shape === "circle") return el("circle", { class: "mark", cx: x, cy: y, r: s, fill: colour });
    return el("path", { class: shape === "cross" ? "mark cross" : "mark", d: paths[shape],
                        fill: shape === "cross" ? "none" : colour, stroke: shape === "cross" ? colour : "#fff" });
  }

  // A line chart: series [{colour, marker, points: [[x, y|null]], peak: [x, y], line, pending: [x, y]}],
  // x {label, log, fmt}, y {label, fmt}, refs: [{x, label}] (dashed verticals), note when empty.
  function chart(svg, spec) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const box = svg.viewBox.baseVal, W = box.width, H = box.height;
    const pts = spec.series.flatMap((s) => s.points.concat(s.pending ? [s.pending] : []));
    const xs = pts.map((p) => p[0]).concat((spec.refs || []).map((r) => r.x));
    const ys = pts.map((p) => p[1]).filter((v) => v !== null && v !== undefined && Number.isFinite(v));
    const x0 = ML, x1 = W - MR, y0 = H - MB, y1 = MT;
    if (!ys.length) {
      svg.appendChild(el("line", { class: "axis", x1: x0, x2: x1, y1: y0, y2: y0 }));
      svg.appendChild(el("line", { class: "axis", x1: x0, x2: x0, y1: y0, y2: y1 }));
      svg.appendChild(el("text", { class: "note", x: (x0 + x1) / 2, y: (y0 + y1) / 2, "text-anchor": "middle" },
                         spec.note || "no figures yet"));
      return;
    }
    let xt, xmap;
    if (spec.x.log) {
      const lo = Math.max(1, Math.min(...xs)), hi = Math.max(lo * 2, Math.max(...xs));
      const l0 = Math.floor(Math.log2(lo)), l1 = Math.ceil(Math.log2(hi));
      const every = Math.max(1, Math.ceil((l1 - l0) / 8));
      xt = [];
      for (let e = l0; e <= l1; e += every) xt.push(Math.pow(2, e));
      xmap = (v) => x0 + ((Math.log2(Math.max(v, 1e-9)) - l0) / Math.max(1, l1 - l0)) * (x1 - x0);
    } else {
      const t = niceTicks(Math.min(0, ...xs), Math.max(...xs), 6);
      xt = t.ticks;
      xmap = (v) => x0 + ((v - t.lo) / (t.hi - t.lo)) * (x1 - x0);
    }
    const yt = niceTicks(0, Math.max(...ys) * 1.05, 5);
    const ymap = (v) => y0 - ((v - yt.lo) / (yt.hi - yt.lo)) * (y0 - y1);
    const grid = el("g");
    for (const t of yt.ticks) {
      grid.appendChild(el("line", { class: "gridline", x1: x0, x2: x1, y1: ymap(t), y2: ymap(t) }));
      grid.appendChild(el("text", { x: x0 - 7, y: ymap(t) + 4, "text-anchor": "end" }, (spec.y.fmt || short)(t)));
    }
    for (const t of xt) {
      grid.appendChild(el("line", { class: "tickmark", x1: xmap(t), x2: xmap(t), y1: y0, y2: y0 + 5 }));
      grid.appendChild(el("text", { x: xmap(t), y: y0 + 18, "text-anchor": "middle" }, (spec.x.fmt || short)(t)));
    }
    grid.appendChild(el("line", { class: "axis", x1: x0, x2: x1, y1: y0, y2: y0 }));
    grid.appendChild(el("line", { class: "axis", x1: x0, x2: x0, y1: y0, y2: y1 }));
    grid.appendChild(el("text", { class: "axis-label", x: (x0 + x1) / 2, y: H - 8, "text-anchor": "middle" }, spec.x.label));
    grid.appendChild(el("text", { class: "axis-label", x: 14, y: (y0 + y1) / 2, "text-anchor": "middle",
                                  transform: `rotate(-90 14 ${(y0 + y1) / 2})` }, spec.y.label));
    svg.appendChild(grid);
    let lastLabel = -Infinity;
    for (const r of spec.refs || []) {
      const x = xmap(r.x);
      svg.appendChild(el("line", { class: "mixline", x1: x, x2: x, y1: y0, y2: y1 }));
      if (r.label && x - lastLabel > 26) {
        svg.appendChild(el("text", { class: "mixlabel", x: x + 2, y: y1 + 9 }, r.label));
        lastLabel = x;
      }
    }
    for (const s of spec.series) {
      const g = el("g", { class: "series" });
      if (s.line !== false) {
        let d = "", pen = false;
        for (const [x, y] of s.points) {
          if (y === null || y === undefined || !Number.isFinite(y)) { pen = false; continue; }
          d += `${pen ? "L" : "M"}${xmap(x).toFixed(1)},${ymap(y).toFixed(1)}`;
          pen = true;
        }
        if (d) g.appendChild(el("path", { class: s.dash ? "line dashed" : "line", d, stroke: s.colour }));
      }
      if (s.marker) {
        for (const [x, y] of s.points) if (y !== null && Number.isFinite(y)) g.appendChild(mark(s.marker, xmap(x), ymap(y), s.colour));
      }
      if (s.peak) g.appendChild(el("circle", { class: "peak", cx: xmap(s.peak[0]), cy: ymap(s.peak[1]), r: 8, stroke: s.colour }));
      if (s.pending) g.appendChild(el("circle", { class: "pending", cx: xmap(s.pending[0]), cy: ymap(s.pending[1]), r: 4.5, stroke: s.colour }));
      svg.appendChild(g);
    }
  }

  function keys(box, items) {
    box.replaceChildren(...items.map(([label, colour, dash]) => {
      const span = document.createElement("span");
      const sw = el("svg", { viewBox: "0 0 22 10", "aria-hidden": "true" });
      sw.appendChild(el("line", { x1: 1, x2: 21, y1: 5, y2: 5, stroke: colour, "stroke-width": 2.4,
                                  "stroke-dasharray": dash ? "4 3" : "none" }));
      span.append(sw, label);
      return span;
    }));
  }

  function cell(text, cls) {
    const td = document.createElement("td");
    if (cls) td.className = cls;
    td.textContent = text;
    return td;
  }

  function peakOf(ladder) {
    let best = null;
    for (const m of ladder) if (m.rps !== null && Number.isFinite(m.rps) && (!best || m.rps > best.rps)) best = m;
    return best;
  }

  // -- the page

  function render() {
    pending = false;
    const r = current;
    if (!r) return;
    const about = r.about || {};
    const colour = (run) => PALETTE[configurations.indexOf(run.configuration) % PALETTE.length];
    const marker = (run) => MARKERS[configurations.indexOf(run.configuration) % MARKERS.length];
    $("title").textContent = [about.suite, r.configuration || about.server || about.target].filter(Boolean).join(" · ");
    const bits = [`run ${r.id}`];
    if (about.server) bits.push(`server ${about.server}`);
    if (about.target) bits.push(about.target);
    if (about.profile) bits.push(`${about.profile} profile`);
    const pinned = about.cpus || {};
    if (pinned.target && pinned.target.length) bits.push(`target on CPU ${pinned.target.join(",")}`);
    if (pinned.engine && pinned.engine.length) bits.push(`load engine on CPU ${pinned.engine.join(",")}`);
    if (about.experiment) bits.push(`experiment ${about.experiment}`);
    if (r.mix !== null && r.mix !== undefined) bits.push(`mix ${r.mix} of ${r.mixes}`);
    else bits.push(`${r.ladder.length} of ${r.mixes} mixes done`);
    if (runs.size > 1) bits.push(`${runs.size} runs in this command`);
    $("about").replaceChildren(...bits.map((b) => Object.assign(document.createElement("span"), { textContent: b })));

    const status = ended ? `ended: ${r.status}` : r.status === "running" ? "live" : r.status;
    $("status").textContent = status;
    $("status").className = "status status-" + (ended ? "ended" : r.status === "running" ? "live" : r.status);
    if (ended) document.body.dataset.ended = "true";

    const s = r.latest; // the last second measured: between mixes and after the end, the last one's
    $("current-rps").textContent = s ? rps(s.rps) : "–";
    const running = r.mix !== null && r.mix !== undefined;
    $("current-mix").textContent = running ? `${clients(r.clients)} · mix ${r.mix} of ${r.mixes}`
      : s ? `last second of mix ${s.mix}` : "no mix yet";
    const peak = peakOf(r.ladder);
    $("peak").textContent = peak ? rps(peak.rps) : "–";
    $("peak-at").textContent = peak ? `req/s at ${clients(peak.clients)} (mix ${peak.mix})` : "no mix finished yet";
    const lat = s && s.latency_us;
    $("current-p99").textContent = lat ? ms(lat.p99) : "–";
    $("current-latency").textContent = lat ? `ms · p50 ${ms(lat.p50)} · p90 ${ms(lat.p90)}` : "ms";
    $("current-errors").textContent = s ? rps(s.errors_per_s) : "–";
    const errorsDone = Object.values(r.errorsDone).reduce((a, b) => a + b, 0) + (r.last ? r.last.errors : 0);
    $("errors-total").textContent = errorsDone ? `${errorsDone.toLocaleString("en-US")} in this run` : "none so far";
    // A tile reads as the mixes table does: a share of the cores that side may use (the chart: of one core).
    cpuTile("target", s, s && s.target_cpu_pct, s && s.target_cores);
    cpuTile("engine", s, s && s.engine_cpu_pct, s && s.engine_cores);

    // The ladder: every run of the command, one colour per configuration, each run's peak ringed.
    const ladderSeries = [...runs.values()].map((run) => {
      const pts = run.ladder.map((m) => [m.clients, m.rps]).sort((a, b) => a[0] - b[0]);
      const p = peakOf(run.ladder);
      let live = null;
      if (run.last && run.mix !== null) {
        const recent = run.samples.filter((x) => x.mix === run.mix).slice(-5);
        if (recent.length) live = [run.clients, recent.reduce((a, x) => a + x.rps, 0) / recent.length];
      }
      // The run the page follows is solid; the command's other runs (earlier trials) dashed.
      return { colour: colour(run), marker: marker(run), points: pts, peak: p ? [p.clients, p.rps] : null, pending: live,
               dash: run !== r };
    });
    chart($("chart-ladder"), { x: { label: "clients", log: true }, y: { label: "requests/s" }, series: ladderSeries,
                              note: "the first mix is running" });
    keys($("keys-ladder"), configurations.map((c, i) => [c || "this run", PALETTE[i % PALETTE.length]])
      .concat(runs.size > 1 ? [["the other runs of this command", "#8a939c", true]] : []));

    const from = r.samples.length ? r.samples[r.samples.length - 1].x - WINDOW_S : 0;
    const recent = r.samples.filter((x) => x.x >= from);
    const refs = r.starts.filter((m) => m.t >= from).map((m) => ({ x: m.t, label: String(m.clients) }));
    const xAxis = { label: "seconds since the run started" };
    chart($("chart-rps"), { x: xAxis, y: { label: "requests/s" }, refs,
                            series: [{ colour: colour(r), points: recent.map((x) => [x.x, x.rps]) }] });
    const latency = [["p50", PALETTE[0]], ["p90", PALETTE[1]], ["p99", PALETTE[4]]];
    chart($("chart-latency"), { x: xAxis, y: { label: "ms", fmt: (v) => short(v) }, refs: refs.map((m) => ({ x: m.x })),
      series: latency.map(([q, c]) => ({ colour: c, points: recent.map((x) => [x.x, x.latency_us ? x.latency_us[q] / 1000 : null]) })) });
    keys($("keys-latency"), latency.map(([q, c]) => [q, c]));
    chart($("chart-errors"), { x: xAxis, y: { label: "errors/s" }, refs: refs.map((m) => ({ x: m.x })),
      series: [{ colour: PALETTE[4], points: recent.map((x) => [x.x, x.errors_per_s]) }] });
    const cpu = [["target", "target_cpu_pct", PALETTE[0]], ["load engine", "engine_cpu_pct", PALETTE[1]]];
    chart($("chart-cpu"), { x: xAxis, y: { label: "% of one core" }, refs: refs.map((m) => ({ x: m.x })),
      note: "no CPU figures (the target is not watched)",
      series: cpu.map(([, key, c]) => ({ colour: c, points: recent.map((x) => [x.x, x[key] === undefined ? null : x[key]]) })) });
    keys($("keys-cpu"), cpu.map(([label, , c]) => [label, c]));

    // Verdicts as they are drawn, every run's, newest last.
    const all = [...runs.values()].flatMap((run) => run.verdicts.map((v) => ({ run, ...v })));
    const list = $("verdicts");
    if (!all.length && ended) list.firstElementChild.textContent = "none drawn in this run";
    if (all.length) {
      list.replaceChildren(...all.map((v) => {
        const li = document.createElement("li");
        li.dataset.kind = v.kind;
        const where = Object.assign(document.createElement("span"), { className: "where",
          textContent: `${runs.size > 1 ? v.run.configuration + " · " : ""}mix ${v.mix}, ${clients(v.clients)}` });
        li.append(where, Object.assign(document.createElement("b"), { textContent: v.kind.replace(/_/g, " ") }), v.message);
        return li;
      }));
    }

    // Errors by kind: the running mix's totals so far and the finished mixes'.
    const now = (r.last && r.last.errors_by_kind) || {};
    const kinds = [...new Set([...Object.keys(now), ...Object.keys(r.errorsDone)])]
      .filter((k) => now[k] || r.errorsDone[k]).sort();
    const ebk = $("errors-by-kind").tBodies[0];
    if (kinds.length) {
      ebk.replaceChildren(...kinds.map((k) => {
        const tr = document.createElement("tr");
        tr.append(cell(k), cell((now[k] || 0).toLocaleString("en-US"), "num"), cell((r.errorsDone[k] || 0).toLocaleString("en-US"), "num"));
        return tr;
      }));
    }

    // Links and cluster nodes, when the run has them.
    const links = s && s.links;
    $("links-section").hidden = !(links && links.length);
    if (links && links.length) {
      $("links").tBodies[0].replaceChildren(...links.map((l) => {
        const tr = document.createElement("tr");
        const u = l.utilisation === null || l.utilisation === undefined ? null : l.utilisation;
        const bar = document.createElement("td");
        bar.className = "bar-cell";
        const meter = el("svg", { viewBox: "0 0 100 8", preserveAspectRatio: "none", "aria-hidden": "true" });
        meter.appendChild(el("rect", { x: 0, y: 0, width: 100, height: 8, fill: "#f4f6f8" }));
        meter.appendChild(el("rect", { x: 0, y: 0, width: Math.min(100, (u || 0) * 100), height: 8, fill: u >= 0.9 ? PALETTE[4] : PALETTE[0] }));
        bar.appendChild(meter);
        tr.append(cell(l.link || ""), cell(l.direction || ""), cell(l.bits_per_s === undefined ? "–" : (l.bits_per_s / 1e6).toFixed(1), "num"),
                  cell(u === null ? "–" : (u * 100).toFixed(0) + "%", "num"), bar);
        return tr;
      }));
    }
    const nodes = s && s.by_node;
    const cluster = about.cluster;
    $("nodes-section").hidden = !(nodes || cluster);
    if (cluster) $("cluster-about").textContent = typeof cluster === "object" ? Object.entries(cluster).map(([k, v]) => `${k} ${typeof v === "object" ? JSON.stringify(v) : v}`).join(" · ") : String(cluster);
    if (nodes) {
      $("nodes").tBodies[0].replaceChildren(...Object.entries(nodes).map(([name, n]) => {
        const tr = document.createElement("tr");
        tr.append(cell(name), cell(rps(n.rps), "num"), cell((n.requests || 0).toLocaleString("en-US"), "num"),
                  cell((n.errors || 0).toLocaleString("en-US"), "num"), cell((n.connections_opened || 0).toLocaleString("en-US"), "num"));
        return tr;
      }));
    }

    // The ladder so far as a table, the peak in bold.
    $("mixes").tBodies[0].replaceChildren(...r.ladder.map((m) => {
      const tr = document.createElement("tr");
      if (peak && m === peak) tr.className = "best";
      const sw = document.createElement("td");
      sw.className = "swatch";
      tr.append(cell(m === peak ? "peak" : "", "nowrap"), cell(String(m.mix), "num"), cell(String(m.clients), "num"), cell(rps(m.rps), "num"),
                cell(ms(m.latency_us && m.latency_us.p50), "num"), cell(ms(m.latency_us && m.latency_us.p99), "num"),
                cell((m.errors || 0).toLocaleString("en-US"), "num"),
                cell(m.target_cpu_util_pct === null || m.target_cpu_util_pct === undefined ? "–" : pct(m.target_cpu_util_pct), "num"));
      return tr;
    }));
    document.body.dataset.frames = String(seen);
  }

  function later() {
    if (!pending) {
      pending = true;
      requestAnimationFrame(render);
    }
  }

  function connect() {
    const source = new EventSource("/live/events");
    source.addEventListener("open", () => {
      if (!ended) { $("status").textContent = "live"; $("status").className = "status status-live"; }
    });
    source.addEventListener("frame", (event) => {
      const n = Number(event.lastEventId);
      if (n && n <= seen) return; // already drawn
      seen = n || seen;
      take(JSON.parse(event.data));
      later();
    });
    source.addEventListener("end", () => {
      ended = true;
      source.close();
      later();
      render();
    });
    source.addEventListener("error", () => {
      if (ended) return;
      // EventSource tries again by itself (and resumes after the last frame); say so meanwhile.
      $("status").textContent = source.readyState === EventSource.CLOSED ? "disconnected" : "reconnecting";
      $("status").className = "status status-reconnecting";
    });
  }

  connect();
})();
