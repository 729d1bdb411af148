// SPDX-License-Identifier: MIT
// report.js - the script of `tracebuf report --html` (tools/report_html.c
// writes the data it reads: #tb-data).  No framework, no network.  The
// timeline and the flame graph are drawn on canvases from per-time-bucket
// summaries (never one DOM node per event), redrawn on the next animation
// frame after each zoom or pan; zoomed in to at most DRAW_MAX events, the
// single events (D.events, per lane, decoded once) are drawn one by one and
// #tb-single says how many and of which classes (data-events-drawn), and
// what of the view the page's budget left out.  When the first drawing is on the screen,
// <body> gets data-ready="1" and data-first-paint-ms (ms since navigation
// start); an error anywhere is shown in #tb-errors and counted in
// data-errors (the browser tests read both).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  let nerrors = 0;
  function showError(msg) {
    nerrors++;
    document.body.dataset.errors = String(nerrors);
    const box = $("tb-errors");
    box.hidden = false;
    box.textContent += (box.textContent ? "\n" : "") + "error: " + msg;
  }
  window.addEventListener("error", (e) => showError(e.message + (e.lineno ? " (line " + e.lineno + ")" : "")));
  window.addEventListener("unhandledrejection", (e) => showError(String(e.reason)));

  let D;
  try {
    D = JSON.parse($("tb-data").textContent);
  } catch (e) {
    showError("the page's data cannot be read: " + e.message);
    return;
  }
  const R = D.report;

  // ---- formatting ----------------------------------------------------
  const grp = (n) => (n === null || n === undefined ? "-" : Number(n).toLocaleString("en-US"));
  function dur(ns) {
    const a = Math.abs(ns);
    if (a < 1e3) return ns.toFixed(0) + " ns";
    if (a < 1e6) return (ns / 1e3).toFixed(a < 1e4 ? 3 : 1) + " \u00b5s";
    if (a < 1e9) return (ns / 1e6).toFixed(a < 1e7 ? 3 : 1) + " ms";
    if (a < 600e9) return (ns / 1e9).toFixed(3) + " s";
    const s = ns / 1e9;
    return Math.floor(s / 3600) + " h " + String(Math.floor(s / 60) % 60).padStart(2, "0") + " min " +
      (s % 60).toFixed(1) + " s";
  }
  const rate = (n, ns) => (ns > 0 ? n * 1e9 / ns : 0);
  function rateStr(r) {
    if (r >= 1e6) return (r / 1e6).toFixed(2) + " M/s";
    if (r >= 1e3) return (r / 1e3).toFixed(1) + " k/s";
    return r.toFixed(r < 10 ? 2 : 0) + " /s";
  }
  function hue(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return (h >>> 0) % 360;
  }
  const colorOf = (s, l) => "hsl(" + hue(s) + ",62%," + (l || 62) + "%)";
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    if (attrs) for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // "full 5, toobig 2, cause unknown 7": the loss causes the trace records (report's by_cause)
  function causes(by, unknown) {
    const parts = [];
    if (by) for (const k in by) if (by[k]) parts.push(k + " " + grp(by[k]));
    if (unknown) parts.push("cause unknown " + grp(unknown));
    return parts.join(", ") || "-";
  }

  // ---- summary --------------------------------------------------------
  $("tb-trace").textContent = D.trace;
  $("tb-trace2").textContent = D.trace;
  $("tb-tool").textContent = D.tool;
  const SPAN = Math.max(D.duration_ns, 1);
  // a flight recorder snapshot's trigger (report_html.c put_trigger), or null
  const TRIG = D.trigger || null;
  (function summary() {
    const s = $("tb-summary");
    const add = (k, v, bad) => {
      s.appendChild(el("span", { class: "k" }, k));
      s.appendChild(el("span", bad ? { class: "bad" } : null, v));
    };
    add("time", R.start.replace("T", " ").replace("Z", "") + " .. " + R.end.slice(11, -1) + " UTC (" + dur(R.duration_ns) + ")");
    add("events", grp(R.events) + " (" + rateStr(R.rate_per_s) + "); " + R.classes.length + " classes, " +
      R.cpus.length + " CPUs, " + R.threads.length + " threads");
    add("bytes", grp(R.bytes) + " in " + R.streams.length + " stream files" +
      (R.events ? " (" + (R.bytes / R.events).toFixed(1) + " B/event)" : ""));
    const L = R.lost;
    const lost = L.events || L.packets || L.notices_count_unknown;
    add("lost", lost ? grp(L.events) + " events" + (L.packets ? " + " + grp(L.packets) + " packets" : "") +
      (L.notices_count_unknown ? " + " + L.notices_count_unknown + " losses of unknown size" : "") +
      (L.events ? ": " + causes(L.by_cause, L.cause_unknown) : "") : "none", lost);
    if (R.busiest_second)
      add("busiest", "second " + (R.busiest_second.index + 1) + " (" + R.busiest_second.start.slice(11, -1) + " .. +1 s): " +
        grp(R.busiest_second.events) + " events");
    if (R.diagnostics.count)
      add("damaged", R.diagnostics.count + " problems in the input; that data was skipped", true);
    if (D.spans.total > D.spans.kept)
      add("spans", "the " + grp(D.spans.kept) + " longest of " + grp(D.spans.total) + " are drawn");
    if (D.events.kept < D.events.total)
      add("single events", D.events.max ? "the page holds " + grp(D.events.kept) + " of the " + grp(D.events.total) +
        " events one by one (its budget: " + grp(D.events.max) + "): windows of " + dur(D.events.window_ns) +
        " with more keep their first " + grp(D.events.per_window) : "none in this page (--html-events 0)", true);
    if (D.states)
      add("thread states", "the band under each thread's events: running (green), runnable: waiting for a CPU " +
        "(orange), blocked (grey), from the kernel's sched events" + (D.states.causes && D.states.causes.length ?
        "; the pointer over a lane says what a blocked thread was in (its system call or page fault)" : "") +
        (D.states.total > D.states.kept ? "; the first " +
        grp(D.states.kept) + " of " + grp(D.states.total) + " intervals are drawn" : ""), D.states.total > D.states.kept);
    if (D.cpus)
      add("cpu occupancy", "the row under each CPU's events: which thread ran there, from one sched_switch to the " +
        "next (idle: blank)" + (D.cpus.total > D.cpus.kept ? "; the first " + grp(D.cpus.kept) + " of " +
        grp(D.cpus.total) + " runs are drawn" : ""), D.cpus.total > D.cpus.kept);
    if (D.lost.total > D.lost.items.length)
      add("losses", "the first " + grp(D.lost.items.length) + " of " + grp(D.lost.total) + " loss notices are drawn");
    if (TRIG)
      add("trigger", "this snapshot was taken for " + TRIG.kind + " trigger '" + TRIG.name + "'" +
        (TRIG.tid !== null ? " from thread " + TRIG.tid : "") + ", " + (TRIG.t < 0 ? dur(-TRIG.t) + " before the first event" :
        TRIG.t > D.duration_ns ? dur(TRIG.t - D.duration_ns) + " after the last event" : "at " + dur(TRIG.t)) +
        " (the purple line)");
  })();

  // ---- the timeline ---------------------------------------------------
  const NB = D.buckets, BNS = D.bucket_ns;
  const lanes = D.lanes;
  // prefix sums of each lane's counts: the events of any time range in O(1)
  const cum = D.counts.map((sp) => {
    const c = new Float64Array(NB + 1);
    let b = 0;
    for (let i = 0; i + 1 < sp.length; i += 2) {
      b += sp[i];
      c[b + 1] = sp[i + 1];
      b++;
    }
    for (let i = 1; i <= NB; i++) c[i] += c[i - 1];
    return c;
  });
  const cpuLanes = lanes.map((l, i) => (l.kind === "cpu" ? i : -1)).filter((i) => i >= 0);
  const total = new Float64Array(NB + 1);
  for (const i of cpuLanes) for (let b = 0; b <= NB; b++) total[b] += cum[i][b];
  // events in [0, t) of a prefix sum, linear inside a bucket
  function upTo(c, t) {
    const f = Math.min(Math.max(t / BNS, 0), NB);
    const i = Math.floor(f);
    return i >= NB ? c[NB] : c[i] + (f - i) * (c[i + 1] - c[i]);
  }
  // spans by lane, their depth rows
  const SP = D.spans;
  const laneDepth = new Array(lanes.length).fill(0);
  for (let i = 0; i < SP.lane.length; i++) laneDepth[SP.lane[i]] = Math.max(laneDepth[SP.lane[i]], Math.min(SP.depth[i] + 1, 8));
  // thread states (a --kernel trace): per lane its intervals in time order, drawn as a band
  const ST = D.states, ST_COL = ["#2e9d4f", "#e8a33d", "#b4bfcd"], BAND_H = 4;
  const stLane = lanes.map(() => ({ s: [], e: [], k: [], c: [] }));
  if (ST)
    for (let i = 0; i < ST.lane.length; i++) {
      const L = stLane[ST.lane[i]];
      L.s.push(ST.start[i]);
      L.e.push(ST.start[i] + ST.dur[i]);
      L.k.push(ST.state[i]);
      L.c.push(ST.cause ? ST.cause[i] : 0); // what a blocked interval was in: 1 + index in ST.causes, 0 not known
    }
  // CPU occupancy (a --kernel trace): per CPU lane the threads' runs in time order, a row under its events
  const OC = D.cpus;
  const ocLane = lanes.map(() => ({ s: [], e: [], t: [] }));
  if (OC)
    for (let i = 0; i < OC.lane.length; i++) {
      const L = ocLane[OC.lane[i]];
      L.s.push(OC.start[i]);
      L.e.push(OC.start[i] + OC.dur[i]);
      L.t.push(OC.tid[i]);
    }
  const ocName = (tid) => (OC && Object.prototype.hasOwnProperty.call(OC.names, tid) ? OC.names[tid] : "tid " + tid);
  for (let i = 0; i < lanes.length; i++) if (ocLane[i].s.length) laneDepth[i] = Math.max(laneDepth[i], 1);
  // single events, per lane: base64 of LEB128 varints, (zigzag time delta, class) each
  const EV = D.events, DRAW_MAX = 20000;
  const evLane = lanes.map((l, i) => {
    const n = EV.n[i] || 0, t = new Float64Array(n), c = new Uint32Array(n);
    const s = n ? atob(EV.data[i]) : "";
    let p = 0, last = 0;
    const varint = () => {
      let v = 0, m = 1, b;
      do {
        b = s.charCodeAt(p++);
        v += (b & 127) * m;
        m *= 128;
      } while (b & 128);
      return v;
    };
    for (let k = 0; k < n; k++) {
      const z = varint();
      last += z % 2 ? -(z + 1) / 2 : z / 2;
      t[k] = last;
      c[k] = varint();
    }
    return { t, c };
  });
  // the windows that do not hold all their events (over the page's budget): [window, events, ...]
  const cutW = [], cutN = [];
  for (let i = 0; i + 1 < EV.cut.length; i += 2) {
    cutW.push(EV.cut[i]);
    cutN.push(EV.cut[i + 1]);
  }
  // what of [t0, t1] the page does not hold: events left out, windows cut
  function cutIn(t0, t1) {
    const w0 = Math.floor(t0 / EV.window_ns), w1 = Math.floor(t1 / EV.window_ns);
    let k = lowerBound(cutW, w0), missing = 0, windows = 0;
    for (; k < cutW.length && cutW[k] <= w1; k++) {
      missing += cutN[k] - EV.per_window;
      windows++;
    }
    return { missing, windows };
  }
  const lossesByCpu = new Map();
  for (const x of D.lost.items) {
    if (!lossesByCpu.has(x.cpu)) lossesByCpu.set(x.cpu, []);
    lossesByCpu.get(x.cpu).push(x);
  }

  const LABEL_W = 190, AXIS_H = 22, RATE_H = 70, HIST_H = 20, ROW_H = 12, GAP = 3;
  const laneY = [];
  let TL_H = AXIS_H + RATE_H + 8;
  for (let i = 0; i < lanes.length; i++) {
    laneY.push(TL_H);
    TL_H += HIST_H + laneDepth[i] * ROW_H + GAP;
  }
  TL_H += 4;

  // lanes, also as a list (for people who cannot see the canvas, and for the tests)
  (function laneList() {
    const ol = $("tb-lanes");
    lanes.forEach((l) => ol.appendChild(el("li", { "data-kind": l.kind }, l.label + ": " + grp(l.events) + " events")));
  })();

  const view = { t0: 0, t1: SPAN };
  let evInViewLast = Infinity;
  const cv = $("tb-timeline"), ctx = cv.getContext("2d");
  let W = 0, dpr = 1;
  function sizeCanvas(c, h) {
    dpr = window.devicePixelRatio || 1;
    const w = c.parentElement.clientWidth || 1000;
    c.width = Math.round(w * dpr);
    c.height = Math.round(h * dpr);
    c.style.height = h + "px";
    return w;
  }
  const plotW = () => Math.max(W - LABEL_W - 8, 10);
  const xOf = (t) => LABEL_W + (t - view.t0) / (view.t1 - view.t0) * plotW();
  const tOf = (x) => view.t0 + (x - LABEL_W) / plotW() * (view.t1 - view.t0);

  // an axis label with as many decimals as the step needs (10.02 ms, 10.04 ms, not 10.0 ms twice)
  function tick(t, step) {
    const a = Math.max(Math.abs(t), step);
    const [div, unit] = a < 1e3 ? [1, " ns"] : a < 1e6 ? [1e3, " \u00b5s"] : a < 1e9 ? [1e6, " ms"] : [1e9, " s"];
    const dec = Math.min(Math.max(0, Math.ceil(-Math.log10(step / div) - 1e-9)), 9);
    return (t / div).toFixed(dec) + unit;
  }
  function niceStep(range, n) {
    const raw = range / n, p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }

  function drawTimeline() {
    const pw = plotW(), vt = view.t1 - view.t0;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, TL_H);
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    // axis
    const step = niceStep(vt, Math.max(pw / 110, 2));
    ctx.fillStyle = "#5f6b7a";
    ctx.strokeStyle = "#e6e9ee";
    for (let t = Math.ceil(view.t0 / step) * step; t <= view.t1; t += step) {
      const x = xOf(t);
      ctx.beginPath();
      ctx.moveTo(x + 0.5, AXIS_H - 4);
      ctx.lineTo(x + 0.5, TL_H);
      ctx.stroke();
      ctx.fillText(tick(t, step), x + 3, AXIS_H / 2);
    }
    // event rate (all CPUs) and the loss ranges
    const y0 = AXIS_H + 4;
    const colNs = vt / pw;
    const rates = new Float64Array(Math.ceil(pw));
    let rmax = 0;
    for (let x = 0; x < rates.length; x++) {
      const a = view.t0 + x * colNs;
      const n = upTo(total, a + colNs) - upTo(total, a);
      rates[x] = n * 1e9 / colNs;
      if (rates[x] > rmax) rmax = rates[x];
    }
    for (const x of D.lost.items) {
      if (x.end < view.t0 || x.begin > view.t1) continue;
      const xa = xOf(x.begin), xb = Math.max(xOf(x.end), xa + 2);
      ctx.fillStyle = "rgba(208,52,44,0.22)";
      ctx.fillRect(xa, y0, xb - xa, RATE_H);
      ctx.fillStyle = "#d0342c";
      ctx.fillRect(xa, y0, xb - xa, 3);
    }
    ctx.fillStyle = "rgba(37,99,235,0.30)";
    ctx.strokeStyle = "#2563eb";
    ctx.beginPath();
    ctx.moveTo(LABEL_W, y0 + RATE_H);
    for (let x = 0; x < rates.length; x++) ctx.lineTo(LABEL_W + x, y0 + RATE_H - (rmax ? rates[x] / rmax * (RATE_H - 4) : 0));
    ctx.lineTo(LABEL_W + rates.length, y0 + RATE_H);
    ctx.fill();
    ctx.fillStyle = "#1d2330";
    ctx.font = "600 11px system-ui, sans-serif";
    ctx.fillText("events/s, all CPUs", 6, y0 + 10);
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillStyle = "#5f6b7a";
    ctx.fillText("max " + rateStr(rmax), 6, y0 + 26);
    if (D.lost.items.length) {
      ctx.fillStyle = "#d0342c";
      ctx.fillText("\u25a0 losses", 6, y0 + 42);
    }
    // lanes
    let evInView = 0;
    const evRange = evLane.map((e) => {
      const a = lowerBound(e.t, view.t0), b = lowerBound(e.t, view.t1 + 1);
      evInView += b - a;
      return [a, b];
    });
    for (let i = 0; i < lanes.length; i++) {
      const y = laneY[i], l = lanes[i], h = HIST_H + laneDepth[i] * ROW_H;
      ctx.fillStyle = i % 2 ? "#fafbfc" : "#f3f5f8";
      ctx.fillRect(0, y, W, h);
      ctx.fillStyle = "#1d2330";
      ctx.save();
      ctx.beginPath();
      ctx.rect(0, y, LABEL_W - 6, h);
      ctx.clip();
      ctx.fillText(l.label, 6, y + HIST_H / 2);
      ctx.restore();
      // histogram: events per pixel column, scaled to the lane's busiest column in view
      const c = cum[i];
      let m = 0;
      const cols = new Float64Array(Math.ceil(pw));
      for (let x = 0; x < cols.length; x++) {
        const a = view.t0 + x * colNs;
        cols[x] = upTo(c, a + colNs) - upTo(c, a);
        if (cols[x] > m) m = cols[x];
      }
      ctx.fillStyle = l.kind === "cpu" ? "#4b7bd8" : l.kind === "other" ? "#8a94a3" : "#2f9e77";
      // faint under the single events of a thread lane, which are then the exact picture
      ctx.globalAlpha = evInView <= DRAW_MAX && l.kind !== "cpu" ? 0.25 : 1;
      if (m > 0)
        for (let x = 0; x < cols.length; x++) {
          if (cols[x] <= 0) continue;
          const bh = Math.max(1, Math.sqrt(cols[x] / m) * (HIST_H - 3));
          ctx.fillRect(LABEL_W + x, y + HIST_H - 1 - bh, 1, bh);
        }
      ctx.globalAlpha = 1;
      if (l.kind === "cpu" && lossesByCpu.has(l.cpu))
        for (const x of lossesByCpu.get(l.cpu)) {
          if (x.end < view.t0 || x.begin > view.t1) continue;
          const xa = xOf(x.begin), xb = Math.max(xOf(x.end), xa + 2);
          ctx.fillStyle = "rgba(208,52,44,0.35)";
          ctx.fillRect(xa, y, xb - xa, HIST_H);
        }
    }
    // single events, when few enough are in view to tell apart
    const byClass = new Map();
    let drawn = 0;
    if (evInView <= DRAW_MAX)
      evLane.forEach((e, i) => {
        for (let k = evRange[i][0]; k < evRange[i][1]; k++) {
          const name = EV.classes[e.c[k]] || "?";
          ctx.fillStyle = colorOf(name, 40);
          ctx.fillRect(Math.round(xOf(e.t[k])), laneY[i] + 2, 1, HIST_H - 4);
          byClass.set(name, (byClass.get(name) || 0) + 1);
          drawn++;
        }
      });
    singleNote(evInView, drawn, byClass);
    evInViewLast = evInView;
    // thread-state bands at the foot of each thread's histogram: running, runnable, blocked
    for (let i = 0; i < lanes.length; i++) {
      const L = stLane[i];
      if (!L.s.length) continue;
      const y = laneY[i] + HIST_H - BAND_H;
      let k = Math.max(lowerBound(L.s, view.t0) - 1, 0);
      for (; k < L.s.length && L.s[k] <= view.t1; k++) {
        if (L.e[k] < view.t0) continue;
        const xa = Math.max(xOf(L.s[k]), LABEL_W), xb = Math.min(xOf(L.e[k]), W);
        if (xb < xa) continue;
        ctx.fillStyle = ST_COL[L.k[k]];
        ctx.fillRect(xa, y, Math.max(xb - xa, 1), BAND_H);
      }
    }
    // CPU lanes: which thread ran, coloured by its name, named where there is room
    ctx.textBaseline = "middle";
    let ocDrawn = 0;
    for (let i = 0; i < lanes.length; i++) {
      const L = ocLane[i];
      if (!L.s.length) continue;
      const y = laneY[i] + HIST_H;
      let k = Math.max(lowerBound(L.s, view.t0) - 1, 0);
      for (; k < L.s.length && L.s[k] <= view.t1; k++) {
        if (L.e[k] < view.t0) continue;
        const xa = Math.max(xOf(L.s[k]), LABEL_W), xb = Math.min(xOf(L.e[k]), W);
        if (xb < xa) continue;
        const name = ocName(L.t[k]);
        ctx.fillStyle = colorOf(name, 55);
        ctx.fillRect(xa, y, Math.max(xb - xa, 1), ROW_H - 1);
        ocDrawn++;
        if (xb - xa > 40) {
          ctx.save();
          ctx.beginPath();
          ctx.rect(xa, y, xb - xa, ROW_H);
          ctx.clip();
          ctx.fillStyle = "#10141c";
          ctx.fillText(name + " " + L.t[k], xa + 3, y + ROW_H / 2);
          ctx.restore();
        }
      }
    }
    document.body.dataset.cpuRunsDrawn = String(ocDrawn);
    // spans
    for (let k = 0; k < SP.lane.length; k++) {
      const s = SP.start[k], e = s + SP.dur[k];
      if (e < view.t0 || s > view.t1 || SP.depth[k] >= 8) continue;
      const xa = Math.max(xOf(s), LABEL_W), xb = Math.min(xOf(e), W);
      if (xb - xa < 0.5) continue;
      const y = laneY[SP.lane[k]] + HIST_H + SP.depth[k] * ROW_H;
      const name = SP.names[SP.name[k]];
      ctx.fillStyle = colorOf(name, 66);
      ctx.fillRect(xa, y, Math.max(xb - xa, 1), ROW_H - 1);
      if (xb - xa > 40) {
        ctx.save();
        ctx.beginPath();
        ctx.rect(xa, y, xb - xa, ROW_H);
        ctx.clip();
        ctx.fillStyle = "#10141c";
        ctx.fillText(name + " " + dur(SP.dur[k]), xa + 3, y + ROW_H / 2);
        ctx.restore();
      }
    }
    // the snapshot's trigger: a line across every lane, its name at the axis
    if (TRIG && TRIG.t >= view.t0 && TRIG.t <= view.t1) {
      const x = Math.round(xOf(TRIG.t)) + 0.5;
      ctx.strokeStyle = "#8e24aa";
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(x, AXIS_H - 4);
      ctx.lineTo(x, TL_H);
      ctx.stroke();
      ctx.lineWidth = 1;
      ctx.fillStyle = "#8e24aa";
      ctx.font = "600 11px system-ui, sans-serif";
      ctx.fillText("\u25bc " + TRIG.name, x + 4, AXIS_H / 2);
      ctx.font = "11px system-ui, sans-serif";
    }
    ctx.clearRect(0, 0, LABEL_W, AXIS_H);
    $("tb-view").textContent = tick(view.t0, vt / 100) + " .. " + tick(view.t1, vt / 100) + " (" + dur(vt) + " shown)";
  }
  // what the single events of the view are, in words (and for the tests: data-events-drawn)
  function singleNote(inView, drawn, byClass) {
    const box = $("tb-single");
    let text;
    if (!EV.kept && EV.total)
      text = "single events: none in this page (--html-events 0)";
    else if (inView > DRAW_MAX)
      text = grp(inView) + " single events in view: zoom in to see them one by one (drawn when at most " +
        grp(DRAW_MAX) + " are in view)";
    else
      text = grp(drawn) + " single event" + (drawn === 1 ? "" : "s") + " in view, each drawn" +
        (byClass.size ? ": " + [...byClass].sort((a, b) => b[1] - a[1]).slice(0, 6)
          .map((x) => x[0] + " " + grp(x[1])).join(", ") + (byClass.size > 6 ? ", ..." : "") : "");
    const c = cutIn(view.t0, view.t1);
    if (c.windows && EV.max)
      text += "; not in this page: " + grp(c.missing) + " events of the " + (c.windows === 1 ? "window" : c.windows + " windows") +
        " of " + dur(EV.window_ns) + " this view touches (over the page's budget, each keeps its first " +
        grp(EV.per_window) + ")";
    box.textContent = text;
    box.classList.toggle("bad", c.windows > 0);
    document.body.dataset.eventsDrawn = String(drawn);
    document.body.dataset.eventsInView = String(inView);
    document.body.dataset.eventsMissing = String(c.missing);
  }
  function lowerBound(a, t) {
    let lo = 0, hi = a.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (a[m] < t) lo = m + 1;
      else hi = m;
    }
    return lo;
  }

  // the view (and the flame graph's search) live in the address: #t0=NS&t1=NS&q=TEXT or /REGEX/
  const hashParams = new URLSearchParams(location.hash.slice(1));
  function saveHash() {
    const p = new URLSearchParams();
    if (view.t0 > 0 || view.t1 < SPAN) {
      p.set("t0", String(Math.round(view.t0)));
      p.set("t1", String(Math.round(view.t1)));
    }
    const q = $("tb-search").value.trim();
    if (q) p.set("q", q);
    const h = p.toString();
    if (h !== location.hash.slice(1)) history.replaceState(null, "", h ? "#" + h : location.pathname + location.search);
  }
  let pending = false;
  function redraw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      drawTimeline();
      saveHash();
    });
  }
  function setView(t0, t1) {
    const minW = Math.min(1000, SPAN);
    let w = Math.min(Math.max(t1 - t0, minW), SPAN);
    t0 = Math.min(Math.max(t0, 0), SPAN - w);
    view.t0 = t0;
    view.t1 = t0 + w;
    redraw();
  }
  function zoomAt(t, f) {
    setView(t - (t - view.t0) * f, t + (view.t1 - t) * f);
  }
  cv.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = cv.getBoundingClientRect(), x = e.clientX - r.left;
    const t = x < LABEL_W ? (view.t0 + view.t1) / 2 : tOf(x);
    zoomAt(t, Math.pow(1.0018, e.deltaY * (e.deltaMode ? 30 : 1)));
  }, { passive: false });
  let drag = null;
  cv.addEventListener("mousedown", (e) => { drag = { x: e.clientX, t0: view.t0, t1: view.t1 }; });
  window.addEventListener("mouseup", () => { drag = null; });
  window.addEventListener("mousemove", (e) => {
    if (!drag) return;
    const dt = (e.clientX - drag.x) / plotW() * (drag.t1 - drag.t0);
    setView(drag.t0 - dt, drag.t1 - dt);
  });
  cv.addEventListener("dblclick", () => setView(0, SPAN));
  $("tb-zoom-in").onclick = () => zoomAt((view.t0 + view.t1) / 2, 0.5);
  $("tb-zoom-out").onclick = () => zoomAt((view.t0 + view.t1) / 2, 2);
  $("tb-zoom-reset").onclick = () => setView(0, SPAN);
  window.addEventListener("keydown", (e) => {
    if (e.target && e.target.tagName === "INPUT") return;
    const c = (view.t0 + view.t1) / 2, w = view.t1 - view.t0;
    if (e.key === "+" || e.key === "w") zoomAt(c, 0.7);
    else if (e.key === "-" || e.key === "s") zoomAt(c, 1 / 0.7);
    else if (e.key === "a") setView(view.t0 - w * 0.2, view.t1 - w * 0.2);
    else if (e.key === "d") setView(view.t0 + w * 0.2, view.t1 + w * 0.2);
    else if (e.key === "0") setView(0, SPAN);
  });
  // the tooltip: what is under the pointer
  const tip = $("tb-tip");
  cv.addEventListener("mouseleave", () => { tip.hidden = true; });
  cv.addEventListener("mousemove", (e) => {
    const r = cv.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
    if (x < LABEL_W || drag) {
      tip.hidden = true;
      return;
    }
    const t = tOf(x), colNs = (view.t1 - view.t0) / plotW();
    const lines = ["t = " + dur(t)];
    if (TRIG && Math.abs(TRIG.t - t) <= 3 * colNs)
      lines.push(TRIG.kind + " trigger '" + TRIG.name + "'" + (TRIG.tid !== null ? " (thread " + TRIG.tid + ")" : "") +
        " at " + dur(TRIG.t) + ": this snapshot was taken for it");
    let lane = -1;
    for (let i = 0; i < lanes.length; i++) if (y >= laneY[i] && y < laneY[i] + HIST_H + laneDepth[i] * ROW_H + GAP) lane = i;
    if (lane < 0 && y > AXIS_H && y < AXIS_H + RATE_H + 8) {
      const n = upTo(total, t + colNs / 2) - upTo(total, t - colNs / 2);
      lines.push("all CPUs: " + rateStr(n * 1e9 / colNs) + " (" + n.toFixed(n < 10 ? 1 : 0) + " events in this pixel)");
      for (const l of D.lost.items)
        if (t >= l.begin - colNs && t <= l.end + colNs)
          lines.push("lost " + (l.count === null ? "events (count unknown)" : grp(l.count) + " " + l.kind) + " on cpu " + l.cpu +
            " (" + l.stream + ") in " + dur(l.begin) + " .. " + dur(l.end));
    }
    if (lane >= 0) {
      const n = upTo(cum[lane], t + colNs / 2) - upTo(cum[lane], t - colNs / 2);
      lines.push(lanes[lane].label + ": " + n.toFixed(n < 10 ? 1 : 0) + " events in this pixel (" + rateStr(n * 1e9 / colNs) + ")");
      const depth = Math.floor((y - laneY[lane] - HIST_H) / ROW_H);
      const e = evLane[lane], a = lowerBound(e.t, t - colNs), b = lowerBound(e.t, t + colNs);
      if (b - a > 0 && b - a <= 5)
        for (let k = a; k < b; k++) lines.push("event " + (EV.classes[e.c[k]] || "?") + " at " + dur(e.t[k]));
      else if (b - a > 5 && evInViewLast <= DRAW_MAX)
        lines.push((b - a) + " single events here: zoom in to tell them apart");
      const S = stLane[lane];
      if (S.s.length) {
        const k = lowerBound(S.s, t + 1e-9) - 1;
        if (k >= 0 && S.e[k] >= t)
          lines.push("thread " + ST.names[S.k[k]] + (S.c[k] ? " in " + ST.causes[S.c[k] - 1] : "") + " for " +
            dur(S.e[k] - S.s[k]) + " from " + dur(S.s[k]));
      }
      const L = ocLane[lane];
      if (depth === 0 && L.s.length) {
        const k = lowerBound(L.s, t + 1e-9) - 1;
        if (k >= 0 && L.e[k] >= t)
          lines.push("ran: " + ocName(L.t[k]) + " (tid " + L.t[k] + ") for " + dur(L.e[k] - L.s[k]) + " from " + dur(L.s[k]));
      }
      for (let k = 0; k < SP.lane.length; k++)
        if (SP.lane[k] === lane && SP.depth[k] === depth && SP.start[k] <= t && SP.start[k] + SP.dur[k] >= t)
          lines.push("span " + SP.names[SP.name[k]] + ": " + dur(SP.dur[k]) + " from " + dur(SP.start[k]));
    }
    tip.textContent = lines.join("\n");
    tip.hidden = false;
    tip.style.left = Math.min(x + 14, r.width - 300) + "px";
    tip.style.top = (y + 14) + "px";
  });

  // ---- the flame graph ------------------------------------------------
  const F = D.flame;
  let drawFlame = null;
  if (F) {
    $("tb-flame-section").hidden = false;
    const n = F.parent.length, kids = Array.from({ length: n }, () => []), depth = new Int32Array(n);
    for (let i = 1; i < n; i++) kids[F.parent[i]].push(i);
    for (let i = 1; i < n; i++) depth[i] = depth[F.parent[i]] + 1; // parents come first
    for (const k of kids) k.sort((a, b) => (F.names[F.name[a]][0] < F.names[F.name[b]][0] ? -1 : 1));
    let maxDepth = 0;
    for (let i = 0; i < n; i++) maxDepth = Math.max(maxDepth, depth[i]);
    const FH = 18, fc = $("tb-flame"), fx = fc.getContext("2d");
    const FL_H = (maxDepth + 1) * FH + 4;
    let FW = 0, focus = 0, match = null;
    const rects = [];
    drawFlame = function () {
      fx.setTransform(dpr, 0, 0, dpr, 0, 0);
      fx.clearRect(0, 0, FW, FL_H);
      fx.font = "11px system-ui, sans-serif";
      fx.textBaseline = "middle";
      rects.length = 0;
      // the focused node's ancestors span the whole width
      const chain = [];
      for (let a = focus; a >= 0; a = a ? F.parent[a] : -1) chain.unshift(a);
      const box = (i, x, w) => {
        const d = depth[i], name = F.names[F.name[i]][0];
        const hit = match && match.has(i);
        fx.fillStyle = match ? (hit ? "hsl(300,70%,62%)" : "hsl(" + hue(name) + ",10%,80%)") : "hsl(" + (10 + hue(name) % 50) + ",78%," + (58 + hue(name) % 14) + "%)";
        fx.fillRect(x, d * FH, Math.max(w - 0.5, 0.5), FH - 1);
        rects.push([x, d * FH, w, i]);
        if (w > 30) {
          fx.save();
          fx.beginPath();
          fx.rect(x, d * FH, w - 1, FH);
          fx.clip();
          fx.fillStyle = "#10141c";
          fx.fillText(name, x + 3, d * FH + FH / 2);
          fx.restore();
        }
      };
      for (const a of chain) if (a !== focus) box(a, 0, FW);
      const scale = FW / Math.max(F.value[focus], 1);
      const walk = (i, x) => {
        const w = F.value[i] * scale;
        if (w < 0.3) return;
        box(i, x, w);
        let cx = x;
        for (const k of kids[i]) {
          walk(k, cx);
          cx += F.value[k] * scale;
        }
      };
      walk(focus, 0);
    };
    // The search: plain text is a case-insensitive substring (linear, cannot
    // hang); /TEXT/ is a regular expression, which is run in a Web Worker and
    // given SEARCH_MS: a hostile one ("(a+)+$", catastrophic backtracking over
    // long names, possibly from a link's #q=) is stopped there and said, the
    // page's own thread never runs it.  Every unique name is tested once.
    const SEARCH_MAX = 1000, SEARCH_MS = 1500;
    const search = $("tb-search");
    search.maxLength = SEARCH_MAX;
    let seq = 0, worker = null, timer = 0;
    const stopWorker = () => {
      if (worker) worker.terminate();
      worker = null;
      clearTimeout(timer);
    };
    const WORKER_SRC = "onmessage = (m) => { const re = new RegExp(m.data.re, 'i'); postMessage(m.data.names.map((x) => " +
      "re.test(x[0]) || re.test(x[1] || '') ? 1 : 0)); };";
    function showResult(nameHit, error) {
      const st = $("tb-match");
      st.classList.toggle("error", !!error);
      document.body.dataset.flameSearchError = error || "";
      if (!nameHit) {
        match = null;
        st.textContent = error || "";
      } else {
        match = new Set();
        let periods = 0;
        const top = new Uint8Array(n); // a match with no matching ancestor counts its periods once
        for (let i = 1; i < n; i++) {
          const hit = nameHit[F.name[i]] === 1;
          if (hit) match.add(i);
          top[i] = top[F.parent[i]] || hit ? 1 : 0;
          if (hit && !top[F.parent[i]]) periods += F.value[i];
        }
        st.textContent = "matched: " + match.size + " frames, " + grp(periods) + " of " + grp(F.value[0]) +
          " periods (" + (100 * periods / Math.max(F.value[0], 1)).toFixed(1) + " %)";
      }
      document.body.dataset.flameMatches = match ? String(match.size) : "";
      document.body.dataset.flameSearch = "done";
      drawFlame();
    }
    function applySearch() {
      stopWorker();
      const my = ++seq;
      const q = search.value.trim();
      if (!q) return showResult(null, "");
      if (q.length > SEARCH_MAX) return showResult(null, "the search is " + grp(q.length) + " characters long: at most " + SEARCH_MAX);
      const rx = /^\/([\s\S]+)\/$/.exec(q);
      if (!rx) {
        const lq = q.toLowerCase();
        return showResult(F.names.map((x) => (x[0].toLowerCase().includes(lq) || (x[1] || "").toLowerCase().includes(lq) ? 1 : 0)), "");
      }
      try {
        new RegExp(rx[1], "i"); // only compiled here: an invalid one is said, not thrown
      } catch (e) {
        return showResult(null, "invalid regular expression " + q + ": " + e.message);
      }
      try {
        worker = new Worker(URL.createObjectURL(new Blob([WORKER_SRC], { type: "text/javascript" })));
      } catch (e) {
        return showResult(null, "this browser refuses the worker a regular expression runs in (" + e.message + "): search without the slashes, as text");
      }
      document.body.dataset.flameSearch = "running";
      $("tb-match").textContent = "searching…";
      worker.onmessage = (m) => {
        if (my !== seq) return;
        stopWorker();
        showResult(m.data, "");
      };
      worker.onerror = (e) => {
        e.preventDefault();
        if (my !== seq) return;
        stopWorker();
        showResult(null, "the regular expression " + q + " failed: " + (e.message || "error in its worker"));
      };
      timer = setTimeout(() => {
        if (my !== seq) return;
        stopWorker();
        showResult(null, "the regular expression " + q + " took more than " + SEARCH_MS / 1000 + " s over " + grp(F.names.length) +
          " names (nested repetition backtracks without end?) and was stopped: write it simpler, or search as text without the slashes");
      }, SEARCH_MS);
      worker.postMessage({ re: rx[1], names: F.names });
    }
    search.addEventListener("input", () => {
      applySearch();
      saveHash();
    });
    if (hashParams.get("q")) {
      search.value = hashParams.get("q");
      drawFlame.search = applySearch;
    }
    $("tb-flame-reset").onclick = () => { focus = 0; drawFlame(); };
    const at = (e) => {
      const r = fc.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
      for (const q of rects) if (x >= q[0] && x < q[0] + q[2] && y >= q[1] && y < q[1] + FH) return [q[3], x, y];
      return null;
    };
    fc.addEventListener("click", (e) => {
      const h = at(e);
      if (h) {
        focus = h[0];
        drawFlame();
      }
    });
    const ftip = $("tb-ftip");
    fc.addEventListener("mouseleave", () => { ftip.hidden = true; });
    fc.addEventListener("mousemove", (e) => {
      const h = at(e);
      if (!h) {
        ftip.hidden = true;
        return;
      }
      const i = h[0], nm = F.names[F.name[i]];
      ftip.textContent = nm[0] + (nm[1] ? "  (" + nm[1] + ")" : "") + "\ntotal " + grp(F.value[i]) + " periods (" +
        (100 * F.value[i] / Math.max(F.value[0], 1)).toFixed(2) + " %), self " + grp(F.self[i]);
      ftip.hidden = false;
      ftip.style.left = Math.min(h[1] + 14, FW - 300) + "px";
      ftip.style.top = (h[2] + 14) + "px";
    });
    drawFlame.size = () => { FW = sizeCanvas(fc, FL_H); };
  }

  // ---- tables ---------------------------------------------------------
  function table(parent, title, head, rows, more) {
    const d = el("div");
    d.appendChild(el("h3", null, title));
    const t = el("table", { "data-table": title });
    const tr = el("tr");
    head.forEach((h, i) => tr.appendChild(el("th", i === 0 || h.startsWith("!") ? { class: "l" } : null, h.replace(/^!/, ""))));
    t.appendChild(tr);
    for (const r of rows) {
      const row = el("tr");
      r.forEach((v, i) => {
        const left = i === 0 || head[i].startsWith("!");
        const cell = el("td", left ? { class: "l" + (typeof v === "object" && v && v.mono ? " mono" : "") } : null);
        if (v && typeof v === "object" && v.swatch) {
          cell.appendChild(el("span", { class: "swatch", style: "background:" + v.swatch }));
          cell.appendChild(document.createTextNode(v.text));
        } else cell.textContent = v && typeof v === "object" ? v.text : v;
        row.appendChild(cell);
      });
      t.appendChild(row);
    }
    d.appendChild(t);
    if (more) d.appendChild(el("div", { class: "more" }, more));
    parent.appendChild(d);
  }
  (function tables() {
    const T = $("tb-tables"), P = D.profile;
    if (P) {
      const c = P.counters;
      table(T, "profile", ["!what", "value"], [
        ["samples", grp(P.samples) + (P.periods !== P.samples ? " (" + grp(P.periods) + " periods with the timer overruns)" : "")],
        ["over", dur(P.duration_ns)],
        ["threads / processes", P.threads + " / " + P.processes],
        ["received", grp(c.received)], ["lost to overflow", grp(c.lost)], ["invalid PC", grp(c.invalid_pc)],
        ["backtrace aborted", grp(c.aborted)], ["truncated", grp(c.truncated)], ["timer overruns", grp(c.overruns)],
        ["symbols", P.symbols.unavailable ? "unavailable: " + P.symbols.unavailable : P.symbols.backend],
      ]);
      for (const which of ["self", "total"])
        table(T, which === "self" ? "self: the PC is in the function" : "total: the function is on the stack",
          ["function", "!module", "periods", "%"],
          P[which].map((r) => [{ text: r.function === "[unknown]" ? r.label : r.function, mono: 1 }, r.module || "", grp(r.samples), r.percent.toFixed(2)]));
    }
    const span = R.duration_ns;
    table(T, "event classes", ["event class", "events", "%", "per s", "avg bytes"],
      R.classes.map((k) => [{ text: k.name, swatch: colorOf(k.name, 40) }, grp(k.events), (100 * k.events / Math.max(R.events, 1)).toFixed(1),
        rateStr(k.rate_per_s), (k.payload_bytes / Math.max(k.events, 1)).toFixed(1)]));
    table(T, "CPUs", ["cpu", "events", "per s", "lost events", "lost packets"],
      R.cpus.map((c) => [String(c.cpu), grp(c.events), rateStr(c.rate_per_s), grp(c.lost_events) + (c.loss_notices_count_unknown ? " + unknown" : ""), grp(c.lost_packets)]));
    const th = R.threads.slice(0, 100);
    // the thread's recorded name, its tid in parentheses (the tid alone when it has none)
    table(T, "threads", ["process", "pid", "thread", "events", "per s"],
      th.map((t) => [t.pid || t.tid ? t.process || "?" : "(no thread record)", t.pid || t.tid ? String(t.pid) : "-",
        t.pid || t.tid ? (t.thread ? t.thread + " (tid " + t.tid + ")" : "tid " + t.tid) : "-", grp(t.events), rateStr(t.rate_per_s)]),
      R.threads.length > th.length ? "... " + (R.threads.length - th.length) + " more threads" : "");
    if (R.lost.by_cpu.length) {
      const rows = [];
      for (const c of R.lost.by_cpu)
        for (const x of c.ranges.slice(0, 50))
          rows.push(["cpu " + c.cpu, x.stream, x.count === null ? "unknown" : grp(x.count) + " " + x.kind,
            x.kind === "events" && x.count !== null ? causes(x.by_cause, x.by_cause ? 0 : x.count) : "",
            dur(Number(x.begin_ns) - Number(D.start_ns)), dur(Number(x.end_ns) - Number(x.begin_ns))]);
      table(T, "losses", ["cpu", "!stream", "lost", "!cause", "from start", "during"], rows);
    }
    if (R.diagnostics.count)
      table(T, "damaged input (skipped)", ["file", "offset", "!error", "!what"],
        R.diagnostics.items.slice(0, 50).map((d) => [d.file, grp(d.offset), d.error, d.what]));
    void span;
  })();

  // ---- first paint ----------------------------------------------------
  function resize() {
    W = sizeCanvas(cv, TL_H);
    if (drawFlame) drawFlame.size();
    drawTimeline();
    if (drawFlame) drawFlame();
  }
  window.addEventListener("resize", resize);
  if (hashParams.has("t0") && hashParams.has("t1")) {
    const a = Number(hashParams.get("t0")), b = Number(hashParams.get("t1"));
    if (isFinite(a) && isFinite(b) && b > a) {
      view.t0 = Math.max(a, 0);
      view.t1 = Math.min(b, SPAN);
    }
  }
  resize();
  if (drawFlame && drawFlame.search) drawFlame.search();
  document.body.dataset.lanes = String(lanes.length);
  document.body.dataset.flameNodes = F ? String(F.parent.length) : "0";
  requestAnimationFrame(() => {
    document.body.dataset.firstPaintMs = performance.now().toFixed(0);
    document.body.dataset.ready = "1";
  });
})();
