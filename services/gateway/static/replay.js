// The replay page: steps a finished game forward and back, from one seat, a spectator, or
// every seat at once; the URL follows, so a step can be linked.
"use strict";

(() => {
  const page = document.querySelector("[data-testid=replay-page]");
  const source = JSON.parse(page.dataset.source);
  const steps = Number(page.dataset.steps);
  const box = document.getElementById("replay-panel");
  const slider = document.getElementById("step-slider");
  const stepNow = document.getElementById("step-now");
  const seatSelect = document.getElementById("seat-select");
  const moves = document.getElementById("move-list");

  let step = Number(stepNow.textContent) || 0;
  let latest = 0; // only the newest request's answer is shown

  function query() {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(source)) if (v !== null && v !== undefined) q.set(k, String(v));
    q.set("step", String(step));
    q.set("seat", seatSelect.value);
    return q;
  }

  // A move's words: its label where this view may read it (all cards open, the seat's own
  // moves, public moves), else only that it was decided.
  function wordMoves() {
    const view = seatSelect.value;
    for (const li of moves.querySelectorAll("li[data-step]")) {
      const label = li.querySelector(".label");
      const open = label.dataset.public === "1" || view === "all" || view === li.dataset.seat;
      label.textContent = open ? label.dataset.label : "decided";
    }
  }

  async function show() {
    wordMoves();
    slider.value = String(step);
    stepNow.textContent = String(step);
    const q = query();
    history.replaceState(null, "", `/replay?${q}`);
    for (const li of moves.querySelectorAll("li.current")) li.classList.remove("current");
    const current = moves.querySelector(`li[data-step="${step}"]`);
    if (current) {
      current.classList.add("current");
      // Scroll the list only, never the page (on a phone the list is far below).
      const row = current.getBoundingClientRect();
      const list = moves.getBoundingClientRect();
      if (row.top < list.top || row.bottom > list.bottom) moves.scrollTop += row.top - list.top - list.height / 2;
    }
    const mine = ++latest;
    const reply = await fetch(`/replay/panel?${q}`, { cache: "no-store" });
    const body = await reply.text();
    if (mine !== latest) return;
    if (reply.ok) box.innerHTML = body;
    else {
      let message = reply.statusText;
      try {
        message = JSON.parse(body).error.message;
      } catch (_) {
        /* keep the status text */
      }
      box.innerHTML = "";
      const p = document.createElement("p");
      p.className = "notice";
      p.dataset.testid = "replay-error";
      p.textContent = message;
      box.append(p);
    }
  }

  function go(to) {
    step = Math.max(0, Math.min(steps, to));
    show();
  }

  const moveBy = { first: () => 0, prev: () => step - 1, next: () => step + 1, last: () => steps };
  for (const button of document.querySelectorAll("[data-step]")) {
    if (button.tagName !== "BUTTON") continue;
    button.addEventListener("click", () => go(moveBy[button.dataset.step]()));
  }
  slider.addEventListener("input", () => go(Number(slider.value)));
  seatSelect.addEventListener("change", show);
  moves.addEventListener("click", (ev) => {
    const link = ev.target.closest("[data-goto]");
    if (!link) return;
    ev.preventDefault();
    go(Number(link.dataset.goto));
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.target.closest("input, select, textarea")) return;
    const keys = { ArrowLeft: step - 1, ArrowRight: step + 1, Home: 0, End: steps };
    if (ev.key in keys) {
      ev.preventDefault();
      go(keys[ev.key]);
    }
  });

  // Autoplay: one move forward at the chosen pace until the end (or Pause, or a key).
  const playButton = document.getElementById("autoplay");
  const playPace = document.getElementById("autoplay-pace");
  let playing = null;
  function stopPlaying() {
    clearTimeout(playing);
    playing = null;
    playButton.textContent = "Play";
    playButton.setAttribute("aria-pressed", "false");
  }
  function playOn() {
    if (step >= steps) return stopPlaying();
    go(step + 1);
    playing = setTimeout(playOn, Number(playPace.value) || 1000);
    return undefined;
  }
  playButton.addEventListener("click", () => {
    if (playing) return stopPlaying();
    if (step >= steps) go(0);
    playButton.textContent = "Pause";
    playButton.setAttribute("aria-pressed", "true");
    playing = setTimeout(playOn, 300);
    return undefined;
  });
  if (new URLSearchParams(location.search).get("autoplay") === "1") playButton.click();

  box.addEventListener("click", (ev) => {
    const card = ev.target.closest(".card[data-text]");
    if (card) Cultists.showCardText(card);
  });

  show();
})();
