// The playground page: builds a control per knob of /api/knobs, keeps the knobs that differ
// from the scenario in the URL (a link reproduces the view), and whenever one moves asks
// /api/chart for the herd chart from replication 0 alone (the fast first answer; the table
// then shows as updating, never old numbers beside a new chart), then /api/run for the table
// and charts of every replication. Only the newest answer is shown: an older request is
// aborted here and cancelled on the server, which knows the page's order from the
// X-Jitterlab-Run header (PAGE.ORDER; not in the URL, which is the shareable state).
"use strict";

const state = {
  knobs: [], values: new Map(), sequence: 0, controller: null, urls: [], retries: 0, note: "",
  page: Math.random().toString(36).slice(2, 12),
};
const $ = (id) => document.getElementById(id);

// A duration in milliseconds as the server reads it: "250ms", "2.5s".
function durationText(ms) {
  if (ms >= 1000) return `${+(ms / 1000).toFixed(6)}s`;
  return `${+ms.toFixed(6)}ms`;
}

function durationMs(text) {
  const m = /^([0-9.]+)\s*(ns|us|µs|ms|s|m|min|h)$/.exec(text.trim());
  if (!m) return NaN;
  const scale = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1e3, m: 6e4, min: 6e4, h: 3.6e6 };
  return parseFloat(m[1]) * scale[m[2]];
}

// A range control moves on a log scale when its range spans a factor of 20 or more.
function scale(knob) {
  const log = knob.min > 0 && knob.max / knob.min >= 20;
  const toValue = (p) => {
    const raw = log ? knob.min * Math.pow(knob.max / knob.min, p / 1000)
                    : knob.min + (knob.max - knob.min) * p / 1000;
    const snapped = Math.round(raw / knob.step) * knob.step;
    return Math.min(knob.max, Math.max(knob.min, snapped));
  };
  const toPosition = (v) => log ? 1000 * Math.log(v / knob.min) / Math.log(knob.max / knob.min)
                                : 1000 * (v - knob.min) / (knob.max - knob.min);
  return { toValue, toPosition };
}

function textOf(knob, value) {
  if (knob.kind === "duration") return durationText(value);
  if (knob.kind === "integer") return String(Math.round(value));
  return String(+value.toPrecision(12));
}

function numberOf(knob, text) {
  return knob.kind === "duration" ? durationMs(text) : parseFloat(text);
}

function current(knob) {
  return state.values.has(knob.key) ? state.values.get(knob.key) : knob.value;
}

// The scenario's own value, however it is written ("2.0" and "2", "5s" and "5000ms").
function unmoved(knob, text) {
  if (text === knob.value) return true;
  if (!["integer", "number", "duration"].includes(knob.kind)) return false;
  const [a, b] = [numberOf(knob, text), numberOf(knob, knob.value)];
  return Number.isFinite(a) && a === b;
}

function set(knob, text) {
  if (unmoved(knob, text)) state.values.delete(knob.key);
  else state.values.set(knob.key, text);
  const box = document.querySelector(`[data-key="${CSS.escape(knob.key)}"]`);
  if (box) box.classList.toggle("changed", state.values.has(knob.key));
  run();
}

function control(knob) {
  const box = document.createElement("div");
  box.className = "knob";
  box.dataset.key = knob.key;
  const id = "knob-" + state.knobs.indexOf(knob);
  if (knob.kind === "subset") {
    const set_ = document.createElement("fieldset");
    const legend = document.createElement("legend");
    legend.textContent = knob.label;
    set_.append(legend);
    const on = new Set(current(knob).split(","));
    for (const item of knob.items) {
      const label = document.createElement("label");
      const box_ = document.createElement("input");
      box_.type = "checkbox";
      box_.value = item;
      box_.checked = on.has(item);
      box_.addEventListener("change", () => {
        const checked = [...set_.querySelectorAll("input:checked")].map((b) => b.value);
        if (checked.length === 0) { box_.checked = true; return; }
        set(knob, checked.join(","));
      });
      label.append(box_, " " + item);
      set_.append(label);
    }
    box.append(set_);
  } else if (knob.kind === "choice") {
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = knob.label;
    const select = document.createElement("select");
    select.id = id;
    for (const c of knob.choices) select.add(new Option(c, c, false, c === current(knob)));
    select.addEventListener("change", () => set(knob, select.value));
    box.append(label, select);
  } else {
    const { toValue, toPosition } = scale(knob);
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = knob.label;
    const shown = document.createElement("output");
    shown.textContent = current(knob);
    label.append(shown);
    const slider = document.createElement("input");
    slider.type = "range";
    slider.id = id;
    slider.min = 0;
    slider.max = 1000;
    slider.value = toPosition(numberOf(knob, current(knob)));
    slider.addEventListener("input", () => {
      const text = textOf(knob, toValue(+slider.value));
      shown.textContent = text;
      set(knob, text);
    });
    box.append(label, slider);
  }
  box.classList.toggle("changed", state.values.has(knob.key));
  return box;
}

function query() {
  return state.knobs
    .filter((k) => state.values.has(k.key))
    .map((k) => `${encodeURIComponent(k.key)}=${encodeURIComponent(state.values.get(k.key))}`)
    .join("&");
}

function status(text, running) {
  $("status").textContent = text;
  $("status").dataset.state = running ? "running" : "idle";
  document.body.dataset.pending = running ? "1" : "0";
}

function showCharts(list) {
  for (const url of state.urls) URL.revokeObjectURL(url);
  state.urls = [];
  const charts = $("charts");
  charts.replaceChildren();
  for (const chart of list) {
    const img = document.createElement("img");
    const url = URL.createObjectURL(new Blob([chart.svg], { type: "image/svg+xml" }));
    state.urls.push(url);
    img.src = url;
    img.alt = chart.title;
    img.dataset.stem = chart.stem;
    charts.append(img);
  }
}

// The table while every replication runs: its header, and one row that says so.
function tableUpdating(columns) {
  const body = $("summary").tBodies[0];
  const tr = document.createElement("tr");
  tr.className = "updating";
  const td = document.createElement("td");
  td.colSpan = Math.max(columns, 1);
  td.textContent = "updating: the chart above is replication 0; every replication is running for the table…";
  tr.append(td);
  body.replaceChildren(tr);
}

function show(answer) {
  showCharts(answer.charts);
  const head = document.createElement("tr");
  for (const h of answer.header) {
    const th = document.createElement("th");
    th.textContent = h;
    head.append(th);
  }
  $("summary").tHead.replaceChildren(head);
  const body = $("summary").tBodies[0];
  body.replaceChildren();
  for (const point of answer.points) {
    if (point.label) {
      const tr = document.createElement("tr");
      tr.className = "point";
      const td = document.createElement("td");
      td.colSpan = answer.header.length;
      td.textContent = point.label;
      tr.append(td);
      body.append(tr);
    }
    for (const row of point.rows) {
      const tr = document.createElement("tr");
      for (const cell of row) {
        const td = document.createElement("td");
        td.textContent = cell;
        tr.append(td);
      }
      body.append(tr);
    }
  }
  $("command").textContent = answer.command;
  $("command-line").hidden = false;
  $("warnings").replaceChildren(...answer.warnings.map((w) => {
    const li = document.createElement("li");
    li.textContent = "warning: " + w;
    return li;
  }));
  $("view").classList.remove("stale", "updating");
  $("error").hidden = true;
  document.body.dataset.generation = answer.generation;
}

async function progress(sequence) {
  while (sequence === state.sequence && document.body.dataset.pending === "1") {
    await new Promise((r) => setTimeout(r, 250));
    if (sequence !== state.sequence) return;
    try {
      const p = await (await fetch("/api/progress")).json();
      if (sequence === state.sequence && p.total > 0 && document.body.dataset.pending === "1") {
        status(`${state.note}simulating: ${p.done} of ${p.total} runs done…`, true);
      }
    } catch (_) { return; }
  }
}

// The answer's JSON; a plain-text answer (503, 421...) is an error of its own text.
async function answerOf(response) {
  const type = response.headers.get("content-type") || "";
  if (type.startsWith("application/json")) return response.json();
  const text = (await response.text()).trim();
  throw new Error(`${response.status} ${response.statusText}: ${text}`);
}

// Asks `path` for the settings `q` as the page's request number `order`; the answer's JSON,
// or null when a newer request of this page came first (then nothing is shown).
async function ask(path, q, sequence, order) {
  let answer;
  try {
    const response = await fetch(path + (q ? "?" + q : ""), {
      signal: state.controller.signal,
      headers: { "X-Jitterlab-Run": `${state.page}.${order}` },
    });
    answer = await answerOf(response);
  } catch (e) {
    if (sequence === state.sequence) {
      status("", false);
      failed(e.message || String(e));
    }
    return null;
  }
  if (sequence !== state.sequence) return null;
  if (answer.superseded) {
    // Still the page's newest: another page (or a command) took the server; ask again, a
    // few times, without two pages outbidding each other for ever.
    if (state.retries < 3) {
      state.retries += 1;
      setTimeout(() => { if (sequence === state.sequence) run(true); }, 100 * state.retries);
    } else {
      status("another page's request took the server; move a knob to try again", false);
    }
    return null;
  }
  if (answer.error) {
    status("", false);
    failed(answer.error);
    return null;
  }
  return answer;
}

async function run(retry = false) {
  if (!retry) state.retries = 0;
  const q = query();
  history.replaceState(null, "", q ? "?" + q : location.pathname);
  $("download-scenario").href = "/scenario.toml" + (q ? "?" + q : "");
  $("download-results").href = "/results.tar" + (q ? "?" + q : "");
  const sequence = ++state.sequence;
  if (state.controller) state.controller.abort();
  state.controller = new AbortController();
  status("simulating…", true);
  $("view").classList.add("stale");
  state.note = "";
  delete document.body.dataset.chartMs;
  delete document.body.dataset.tableMs;
  progress(sequence);
  const started = performance.now();
  // Two requests per setting, each newer than any before it: 2n for the chart, 2n+1 after.
  const first = await ask("/api/chart", q, sequence, 2 * sequence);
  if (!first) return;
  let chartMs = null;
  if (first.charts) {
    showCharts(first.charts);
    tableUpdating($("summary").tHead.rows[0]?.cells.length || 1);
    $("view").classList.replace("stale", "updating");
    chartMs = performance.now() - started;
    document.body.dataset.chartMs = chartMs.toFixed(1);
    state.note = `chart in ${chartMs.toFixed(0)} ms; `;
    status(`${state.note}every replication running for the table…`, true);
  }
  const answer = await ask("/api/run", q, sequence, 2 * sequence + 1);
  if (!answer) return;
  show(answer);
  const ms = performance.now() - started;
  document.body.dataset.tableMs = ms.toFixed(1);
  const chart = chartMs === null ? "" : `chart in ${chartMs.toFixed(0)} ms, `;
  status(`${chart}table in ${ms.toFixed(0)} ms (all runs simulated in ${answer.elapsed_ms.toFixed(0)} ms)`, false);
}

function failed(message) {
  $("error").textContent = message;
  $("error").hidden = false;
}

async function start() {
  const info = await answerOf(await fetch("/api/knobs"));
  $("name").textContent = info.name;
  $("description").textContent = info.description;
  document.title = `jitterlab playground: ${info.name}`;
  state.knobs = info.knobs;
  const params = new URLSearchParams(location.search);
  for (const knob of state.knobs) {
    if (params.has(knob.key)) state.values.set(knob.key, params.get(knob.key));
  }
  $("knobs").replaceChildren(...state.knobs.map(control));
  $("reset").addEventListener("click", () => {
    state.values.clear();
    $("knobs").replaceChildren(...state.knobs.map(control));
    run();
  });
  run();
}

start().catch((e) => failed(e.message || String(e)));
