// /designer: tunes and sweeps with their progress (asked of /api/tunes and /api/sweeps every
// few seconds), and the nightly history per game drawn with uPlot (/designer/data/nightly).
(function () {
  "use strict";

  const REFRESH_MS = 2000;
  const NIGHTLY_MS = 60000;
  const PALETTE = ["#2f7ed8", "#d9480f", "#2b8a3e", "#ae3ec9", "#e67700", "#0b7285"];
  const updated = document.getElementById("designer-updated");
  // What the page has drawn, by game: the tests read it back.
  const charts = {};
  window.designerCharts = charts;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null) continue;
      if (k === "class") node.className = v;
      else if (k.startsWith("data")) node.setAttribute(k.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase()), v);
      else node[k] = v;
    }
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(c == null ? "" : String(c)));
    return node;
  }

  function bar(percent, testid) {
    const p = Math.max(0, Math.min(100, Number(percent) || 0));
    const fill = el("span");
    fill.style.width = `${p}%`;
    return el("div", { class: "designer-bar", dataTestid: testid, dataPercent: String(p) }, fill, el("b", {}, `${p.toFixed(1)}%`));
  }

  function words(config) {
    if (!config) return "–";
    return Object.entries(config).map(([k, v]) => `${k}=${v}`).join(" ");
  }

  function fill(tbodyId, emptyId, rows) {
    const body = document.getElementById(tbodyId);
    body.replaceChildren(...rows);
    document.getElementById(emptyId).hidden = rows.length > 0;
  }

  function tuneRow(t) {
    const report = t.status === "done"
      ? el("a", { href: t.links.report, dataTestid: `tune-report-${t.id}` }, "report")
      : el("span", {}, t.status === "failed" ? t.error || "failed" : "–");
    const progress = t.phase === "confirming" && t.confirm_games_total
      ? `confirming ${t.confirm_games_done}/${t.confirm_games_total}` : `${t.games_done}/${t.budget} games`;
    return el("tr", { dataTestid: `tune-${t.id}`, dataStatus: t.status },
      el("td", {}, t.name || t.id),
      el("td", {}, t.game),
      el("td", { class: `designer-status-${t.status}` }, t.status),
      el("td", {}, bar(t.percent, `tune-percent-${t.id}`), el("small", {}, progress)),
      el("td", {}, t.trials),
      el("td", {}, words(t.best)),
      el("td", { class: `designer-verdict-${t.verdict || ""}` }, t.verdict || "–"),
      el("td", {}, report));
  }

  function sweepRow(s) {
    const report = s.status === "done"
      ? el("a", { href: s.links.report, dataTestid: `sweep-report-${s.id}` }, "report")
      : el("span", {}, s.status === "failed" ? s.error || "failed" : "–");
    return el("tr", { dataTestid: `sweep-${s.id}`, dataStatus: s.status },
      el("td", { title: s.id }, s.name || s.id),
      el("td", {}, s.kind),
      el("td", { class: `designer-status-${s.status}` }, s.status),
      el("td", {}, bar(s.percent, `sweep-percent-${s.id}`)),
      el("td", {}, `${s.games_done}/${s.total_games}`),
      el("td", {}, report));
  }

  async function getJson(url) {
    const reply = await fetch(url, { headers: { Accept: "application/json" } });
    if (reply.status === 401 || reply.status === 403) {
      // Tunes, sweeps and nights are for designers: say how to become one here.
      throw new Error(`${reply.status}: sign in with a designer's account (/account)`);
    }
    if (!reply.ok) throw new Error(`${url}: ${reply.status}`);
    return reply.json();
  }

  async function refresh() {
    try {
      const [tunes, sweeps] = await Promise.all([getJson("/api/tunes?limit=20"), getJson("/api/sweeps?limit=20")]);
      fill("designer-tunes", "designer-tunes-empty", tunes.tunes.map(tuneRow));
      fill("designer-sweeps", "designer-sweeps-empty", sweeps.sweeps.map(sweepRow));
      updated.textContent = `updated ${new Date().toLocaleTimeString()}`;
    } catch (err) {
      updated.textContent = `not updated: ${err.message}`;
    }
  }

  function drawChart(game, holder, entry, cell) {
    const seats = entry.cells[cell] || [];
    const xs = entry.nights.map((n, i) => n.time || i);
    const data = [xs, ...seats];
    const width = Math.max(320, holder.clientWidth || 640);
    const opts = {
      width, height: 240,
      scales: { x: { time: true }, y: { range: [0, 1] } },
      axes: [{}, { values: (u, ticks) => ticks.map((v) => `${Math.round(v * 100)}%`) }],
      series: [{ label: "night" }, ...seats.map((_, i) => ({
        label: `seat ${i}`, stroke: PALETTE[i % PALETTE.length], width: 2, points: { show: true },
        value: (u, v) => (v == null ? "–" : `${(v * 100).toFixed(1)}%`),
      }))],
    };
    const old = charts[game];
    if (old && old.chart) old.chart.destroy();
    holder.replaceChildren();
    const chart = new uPlot(opts, data, holder);
    charts[game] = { chart, cell, seats: seats.length, points: xs.length };
    holder.dataset.cell = cell;
    holder.dataset.points = String(xs.length);
  }

  function gameSection(game, entry) {
    const latest = entry.nights[entry.nights.length - 1];
    const flags = latest.drifted.length
      ? el("ul", { class: "designer-flags", dataTestid: `drift-${game}` }, ...latest.drifted.map((d) =>
        el("li", {}, `${d.cell}: ${d.metric} ${fmt(d.before)} → ${fmt(d.after)} (adjusted p ${Number(d.p_adjusted).toPrecision(2)})`)))
      : el("p", { class: "designer-calm", dataTestid: `drift-${game}` },
        latest.compared ? `no drift in ${latest.compared} metrics compared` : "nothing to compare yet (first night)");
    const cells = Object.keys(entry.cells);
    const pick = el("select", { dataTestid: `cell-${game}` }, ...cells.map((c) => el("option", { value: c }, c)));
    const holder = el("div", { class: "designer-chart", dataTestid: `chart-${game}` });
    const history = entry.nights.map((n) => `${n.night}: ${n.drifted.length} drifted`).join("; ");
    const section = el("article", { class: "designer-game", dataTestid: `nightly-${game}` },
      el("h3", {}, entry.title),
      el("p", {}, `${entry.nights.length} night(s); latest ${latest.night}. Drift flags of the latest night:`),
      flags,
      el("label", {}, "Seat win rates over the nights, table ", pick),
      holder,
      el("p", { class: "designer-empty", title: history }, `flags per night: ${entry.nights.map((n) => n.drifted.length).join(", ")}`));
    pick.addEventListener("change", () => drawChart(game, holder, entry, pick.value));
    return { section, draw: () => cells.length && drawChart(game, holder, entry, pick.value) };
  }

  function fmt(v) {
    if (v == null) return "–";
    return Math.abs(v) <= 1 ? `${(v * 100).toFixed(1)}%` : Number(v).toFixed(1);
  }

  async function nightly() {
    try {
      const data = await getJson("/designer/data/nightly");
      const games = Object.entries(data.games);
      document.getElementById("designer-nightly-empty").hidden = games.length > 0;
      const box = document.getElementById("designer-games");
      const parts = games.map(([game, entry]) => gameSection(game, entry));
      box.replaceChildren(...parts.map((p) => p.section));
      parts.forEach((p) => p.draw());
    } catch (err) {
      document.getElementById("designer-games").textContent = `nightly history not available: ${err.message}`;
    }
  }

  refresh();
  nightly();
  setInterval(refresh, REFRESH_MS);
  setInterval(nightly, NIGHTLY_MS);
})();
