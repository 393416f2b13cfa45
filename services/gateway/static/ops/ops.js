// /ops: fetches each panel's data from the gateway (which runs only the panel list's own
// queries against Prometheus) and draws it with uPlot. No PromQL is written here: a panel
// is named by its id (and game), the range by a name from the picker.
(function () {
  "use strict";

  const PALETTE = ["#2f7ed8", "#d9480f", "#2b8a3e", "#ae3ec9", "#e67700", "#0b7285",
    "#c2255c", "#5c940d", "#364fc7", "#862e9c", "#a61e4d", "#495057"];
  const rangeBox = document.getElementById("ops-range");
  const refreshBox = document.getElementById("ops-refresh");
  const updated = document.getElementById("ops-updated");
  const dialog = document.getElementById("ops-large");
  const largeChart = document.getElementById("ops-large-chart");
  let timer = null;
  let large = null; // {panel: element, chart: uPlot}

  // What the page has drawn, by panel key ("id" or "id:game"): the tests read it back.
  const drawn = {};
  window.opsPanels = drawn;

  // --- settings kept in the URL, so a link shows the same view ---------------------------
  const params = new URLSearchParams(location.search);
  if (params.has("range") && [...rangeBox.options].some((o) => o.value === params.get("range"))) {
    rangeBox.value = params.get("range");
  }
  if (params.has("refresh") && [...refreshBox.options].some((o) => o.value === params.get("refresh"))) {
    refreshBox.value = params.get("refresh");
  }
  function remember() {
    const p = new URLSearchParams(location.search);
    p.set("range", rangeBox.value);
    p.set("refresh", refreshBox.value);
    history.replaceState(null, "", `${location.pathname}?${p}`);
  }

  // --- units, as Grafana names them ----------------------------------------------------
  function fmt(unit, v) {
    if (v == null || !isFinite(v)) return "–";
    const a = Math.abs(v);
    const n = (x, d) => Number(x.toFixed(d)).toString();
    switch (unit) {
      case "s":
        if (a === 0) return "0";
        if (a < 1e-3) return `${n(v * 1e6, 1)} µs`;
        if (a < 1) return `${n(v * 1e3, a < 0.01 ? 2 : 1)} ms`;
        return `${n(v, 2)} s`;
      case "percentunit":
        return `${n(v * 100, 1)}%`;
      case "reqps":
        return `${short(v)} req/s`;
      case "ops":
        return `${short(v)} /s`;
      default:
        return short(v);
    }
  }
  function short(v) {
    const a = Math.abs(v);
    if (a >= 1e6) return `${(v / 1e6).toFixed(1)}M`;
    if (a >= 1e3) return `${(v / 1e3).toFixed(1)}k`;
    if (a >= 10 || Number.isInteger(v)) return `${Math.round(v * 10) / 10}`;
    return `${Number(v.toPrecision(3))}`;
  }

  // --- charts ------------------------------------------------------------------------
  // One colour per label set, one dash per query: p50/p95/p99 of a method share its colour,
  // the last query of a panel (p99, "finished") is drawn solid, earlier ones dashed.
  const DASHES = [[], [6, 3], [2, 3], [8, 3, 2, 3]];
  function styles(data) {
    const colours = new Map();
    const last = Math.max(0, ...data.series.map((s) => s.query));
    return data.series.map((s) => {
      const labels = JSON.stringify(s.labels);
      if (!colours.has(labels)) colours.set(labels, PALETTE[colours.size % PALETTE.length]);
      return {stroke: colours.get(labels), dash: DASHES[(last - s.query) % DASHES.length]};
    });
  }

  function options(data, unit, width, height, live) {
    const look = styles(data);
    return {
      width, height,
      legend: {live},
      cursor: {drag: {x: true, y: false}},
      scales: {x: {time: true}},
      series: [
        {value: (u, t) => (t == null ? "–" : new Date(t * 1000).toLocaleTimeString())},
        ...data.series.map((s, i) => ({
          label: s.name,
          stroke: look[i].stroke,
          dash: look[i].dash,
          width: 1.5,
          points: {show: false},
          value: (u, v) => fmt(unit, v),
        })),
      ],
      axes: [
        {stroke: "#555", grid: {stroke: "#eee"}},
        {stroke: "#555", grid: {stroke: "#eee"}, size: 70, values: (u, ticks) => ticks.map((t) => fmt(unit, t))},
      ],
    };
  }

  function columns(data) {
    return [data.times, ...data.series.map((s) => s.values)];
  }

  // Small panels list the series only; the large view shows the values under the cursor.
  function draw(target, data, unit, width, height, previous, live = false) {
    const names = data.series.map((s) => s.name).join("\n");
    if (previous && previous._names === names) {
      previous.setData(columns(data));
      return previous;
    }
    if (previous) previous.destroy();
    target.textContent = "";
    const chart = new uPlot(options(data, unit, width, height, live), columns(data), target);
    chart._names = names;
    return chart;
  }

  function key(panel) {
    return panel.dataset.game ? `${panel.dataset.panel}:${panel.dataset.game}` : panel.dataset.panel;
  }

  async function getJSON(url) {
    const reply = await fetch(url, {headers: {Accept: "application/json"}});
    const body = await reply.json().catch(() => ({}));
    if (!reply.ok) throw new Error((body.error && body.error.message) || `HTTP ${reply.status}`);
    return body;
  }

  async function loadPanel(panel) {
    const state = panel.querySelector(".ops-state");
    const q = new URLSearchParams({range: rangeBox.value});
    if (panel.dataset.game) q.set("game", panel.dataset.game);
    let data;
    try {
      data = await getJSON(`/ops/data/panels/${panel.dataset.panel}?${q}`);
    } catch (err) {
      panel.dataset.state = "error";
      state.textContent = err.message;
      return;
    }
    const points = data.series.reduce((sum, s) => sum + s.values.filter((v) => v != null).length, 0);
    const target = panel.querySelector(".ops-chart");
    const chart = draw(target, data, panel.dataset.unit, target.clientWidth || 560, 200, panel._chart);
    panel._chart = chart;
    drawn[key(panel)] = {data, points, chart};
    panel.dataset.points = String(points);
    panel.dataset.series = String(data.series.length);
    panel.dataset.state = points ? "ok" : "empty";
    state.textContent = points ? "" : "No data in this range yet.";
    if (large && large.panel === panel) {
      large.chart = draw(largeChart, data, panel.dataset.unit, ...largeSize(), large.chart, true);
    }
  }

  // --- alerts ------------------------------------------------------------------------
  function since(iso) {
    if (!iso) return "";
    const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    return s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : `${Math.round(s / 3600)}h`;
  }

  async function loadAlerts(panel) {
    const list = panel.querySelector(".ops-alerts");
    const state = panel.querySelector(".ops-state");
    let data;
    try {
      data = await getJSON("/ops/data/alerts");
    } catch (err) {
      panel.dataset.state = "error";
      state.textContent = err.message;
      return;
    }
    list.textContent = "";
    for (const a of data.alerts) {
      const li = document.createElement("li");
      li.className = `ops-alert ops-${a.state}`;
      li.setAttribute("data-testid", "alert");
      li.dataset.name = a.name;
      li.dataset.state = a.state;
      li.dataset.instance = a.labels.instance || "";
      li.dataset.game = a.labels.game || "";
      const badge = document.createElement("span");
      badge.className = "ops-badge";
      badge.textContent = a.state;
      const name = document.createElement("strong");
      name.textContent = a.name;
      const labels = document.createElement("span");
      labels.className = "ops-labels";
      labels.textContent = Object.entries(a.labels).map(([k, v]) => `${k}=${v}`).join(" ");
      const summary = document.createElement("span");
      summary.className = "ops-summary";
      summary.textContent = `${a.summary}${a.since ? ` · for ${since(a.since)}` : ""}`;
      summary.title = a.description || "";
      li.append(badge, name, labels, summary);
      list.append(li);
    }
    const firing = data.alerts.filter((a) => a.state === "firing").length;
    panel.dataset.firing = String(firing);
    panel.dataset.state = "ok";
    panel.querySelector(".ops-count").textContent =
      `${firing} firing, ${data.alerts.length - firing} pending`;
    state.textContent = data.alerts.length ? "" : "No alert is firing or pending.";
    drawn.alerts = data;
  }

  // --- refresh -----------------------------------------------------------------------
  let running = null;
  function refresh() {
    if (running) return running; // one round at a time: a slow Prometheus is not piled on
    const panels = [...document.querySelectorAll(".ops-panel")];
    running = Promise.all(panels.map((p) => (p.dataset.kind === "alerts" ? loadAlerts(p) : loadPanel(p))))
      .finally(() => {
        running = null;
        updated.textContent = `updated ${new Date().toLocaleTimeString()}`;
        document.body.dataset.rounds = String(Number(document.body.dataset.rounds || 0) + 1);
      });
    return running;
  }

  function schedule() {
    if (timer) clearInterval(timer);
    const seconds = Number(refreshBox.value);
    timer = seconds > 0 ? setInterval(refresh, seconds * 1000) : null;
  }

  // --- one panel, large --------------------------------------------------------------
  function largeSize() {
    return [Math.max(320, dialog.clientWidth - 48), Math.max(240, Math.round(window.innerHeight * 0.6))];
  }

  function openLarge(panel) {
    const found = drawn[key(panel)];
    document.getElementById("ops-large-title").textContent = panel.querySelector("h3").textContent;
    document.getElementById("ops-large-help").textContent = panel.querySelector(".ops-help").textContent;
    dialog.dataset.panel = key(panel);
    dialog.showModal();
    largeChart.textContent = found ? "" : "Loading…";
    large = {panel, chart: null};
    if (found) large.chart = draw(largeChart, found.data, panel.dataset.unit, ...largeSize(), null, true);
  }

  function closeLarge() {
    if (large && large.chart) large.chart.destroy();
    large = null;
    largeChart.textContent = "";
    if (dialog.open) dialog.close();
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest(".ops-open");
    if (button) openLarge(button.closest(".ops-panel"));
  });
  document.getElementById("ops-large-close").addEventListener("click", closeLarge);
  dialog.addEventListener("close", closeLarge);
  document.getElementById("ops-reload").addEventListener("click", refresh);
  rangeBox.addEventListener("change", () => { remember(); refresh(); });
  refreshBox.addEventListener("change", () => { remember(); schedule(); });
  let resizing = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizing);
    resizing = setTimeout(() => {
      for (const p of document.querySelectorAll(".ops-panel[data-kind=timeseries]")) {
        if (p._chart) p._chart.setSize({width: p.querySelector(".ops-chart").clientWidth, height: 200});
      }
      if (large && large.chart) {
        const [width, height] = largeSize();
        large.chart.setSize({width, height});
      }
    }, 150);
  });

  refresh();
  schedule();
})();
