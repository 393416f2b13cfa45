// The lobby: open a table (game, players, seats, config), sit down, queue for a match,
// and keep the tables list fresh.
"use strict";

(() => {
  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

  // -- your name ------------------------------------------------------------------------
  const nameInput = $("#player-name");
  nameInput.value = Cultists.playerName();
  nameInput.addEventListener("change", () => Cultists.setPlayerName(nameInput.value.trim()));

  function nameOrGuest() {
    let name = nameInput.value.trim() || Cultists.playerName();
    if (!name) {
      name = "guest-" + Math.random().toString(16).slice(2, 6);
      nameInput.value = name;
    }
    Cultists.setPlayerName(name);
    return name;
  }

  // -- open a table ---------------------------------------------------------------------
  const form = $("#create-form");
  const gameSelect = $("#create-game");
  const playersInput = $("#create-players");
  const seatRows = $("#seat-rows");
  const errorBox = $("[data-testid=create-error]");

  function chosenGame() {
    return gameSelect.selectedOptions[0];
  }

  function buildSeats() {
    const opt = chosenGame();
    const bots = opt.dataset.bots.split(",").filter(Boolean);
    const words = (opt.dataset.botWords || "").split(",");
    const preferred = bots.includes("heuristic") ? "heuristic" : bots[0];
    const previous = $$("select", seatRows).map((s) => s.value);
    const n = Math.max(1, Math.min(Number(playersInput.value) || Number(opt.dataset.default), 64));
    seatRows.replaceChildren();
    for (let i = 0; i < n; i++) {
      const label = document.createElement("label");
      label.className = "field inline";
      label.textContent = `Seat ${i} `;
      const select = document.createElement("select");
      select.dataset.testid = `seat-kind-${i}`;
      select.append(new Option("human", "human"));
      bots.forEach((bot, k) => select.append(new Option(words[k] || `bot: ${bot}`, `bot:${bot}`)));
      select.value = previous[i] || (i === 0 ? "human" : `bot:${preferred}`);
      label.append(select);
      seatRows.append(label);
    }
  }

  function showGame() {
    const opt = chosenGame();
    playersInput.min = opt.dataset.min;
    playersInput.max = opt.dataset.max;
    playersInput.value = opt.dataset.default;
    for (const fs of $$("[data-config-game]")) fs.hidden = fs.dataset.configGame !== opt.value;
    seatRows.replaceChildren();
    buildSeats();
  }

  // Only fields changed from the game's defaults are sent: the rest keep the rulings' values.
  function configOverrides(game) {
    const out = {};
    for (const input of $$(`[data-config-game="${game}"] [data-field]`)) {
      const kind = input.dataset.type;
      let value;
      if (kind === "bool") {
        if (String(input.checked) === input.dataset.default) continue;
        value = input.checked;
      } else {
        if (input.value === input.dataset.default) continue;
        if (kind === "int") value = parseInt(input.value, 10);
        else if (kind === "float") value = parseFloat(input.value);
        else if (kind === "list") value = input.value.split(",").map((s) => s.trim()).filter(Boolean);
        else value = input.value;
      }
      out[input.dataset.field] = value;
    }
    return out;
  }

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    errorBox.hidden = true;
    const game = chosenGame().value;
    const seats = $$("select", seatRows).map((s) =>
      s.value === "human" ? { kind: "human" } : { kind: "bot", bot: s.value.slice(4) });
    const body = {
      game,
      players: seats.length,
      seats,
      config: configOverrides(game),
      decision_seconds: Number($("#create-seconds").value) || 60,
    };
    const seed = $("#create-seed").value;
    if (seed !== "") body.seed = Number(seed);
    const submit = $("[data-testid=create-submit]");
    submit.disabled = true;
    try {
      const table = await Cultists.api("POST", "/api/tables", body);
      const first = seats.findIndex((s) => s.kind === "human");
      if ($("#create-sit").checked && first >= 0) {
        nameOrGuest();
        await Cultists.join(table.table, first);
        location.href = Cultists.tablePath(table.table, first);
      } else {
        location.href = Cultists.tablePath(table.table);
      }
    } catch (err) {
      errorBox.textContent = err.message;
      errorBox.hidden = false;
      submit.disabled = false;
    }
  });

  // -- play now: one click opens the game's usual table against Steady bots ----------------
  const playError = $("[data-testid=play-error]");
  for (const button of $$("button[data-play]")) {
    button.addEventListener("click", async () => {
      button.disabled = true;
      playError.hidden = true;
      const bots = button.dataset.bots.split(",");
      const bot = bots.includes("heuristic") ? "heuristic" : bots[0];
      const n = Number(button.dataset.players);
      const seats = [{ kind: "human" }];
      for (let i = 1; i < n; i++) seats.push({ kind: "bot", bot });
      try {
        const table = await Cultists.api("POST", "/api/tables", {
          game: button.dataset.play, players: n, seats, config: {}, decision_seconds: 60,
        });
        nameOrGuest();
        await Cultists.join(table.table, 0);
        location.href = Cultists.tablePath(table.table, 0);
      } catch (err) {
        playError.textContent = err.message;
        playError.hidden = false;
        button.disabled = false;
      }
    });
  }

  gameSelect.addEventListener("change", showGame);
  playersInput.addEventListener("input", buildSeats);
  showGame();

  // -- tables list ------------------------------------------------------------------------
  const tablesBox = $("#tables-list");
  async function refreshTables() {
    try {
      // At the page of each list this lobby shows (its query string: the lists' cursors).
      const reply = await fetch("/lobby/tables" + location.search, { cache: "no-store" });
      if (reply.ok) tablesBox.innerHTML = await reply.text();
    } catch (_) {
      /* the next refresh tries again */
    }
  }
  setInterval(refreshTables, 4000);
  tablesBox.addEventListener("click", async (ev) => {
    const button = ev.target.closest("button[data-join-table]");
    if (!button) return;
    button.disabled = true;
    const table = button.dataset.joinTable;
    const seat = Number(button.dataset.joinSeat);
    try {
      nameOrGuest();
      await Cultists.join(table, seat);
      location.href = Cultists.tablePath(table, seat);
    } catch (err) {
      button.textContent = err.message;
      refreshTables();
    }
  });

  // -- matchmaking -------------------------------------------------------------------------
  const mmForm = $("#mm-form");
  const mmGame = $("#mm-game");
  const mmPlayers = $("#mm-players");
  const mmStatus = $("#mm-status");
  const mmCancel = $("#mm-cancel");
  const mmJoin = $("[data-testid=mm-join]");
  const TICKET_KEY = "cultists:ticket";
  let polling = null;

  function mmShowGame() {
    const opt = mmGame.selectedOptions[0];
    if (!opt) return;
    mmPlayers.min = opt.dataset.min;
    mmPlayers.max = opt.dataset.max;
    mmPlayers.value = opt.dataset.default;
  }
  mmGame.addEventListener("change", mmShowGame);
  mmShowGame();

  function queued(on) {
    mmJoin.hidden = on;
    mmCancel.hidden = !on;
  }

  async function poll() {
    const held = JSON.parse(sessionStorage.getItem(TICKET_KEY) || "null");
    if (!held) return;
    try {
      const t = await Cultists.api("GET", `/api/matchmaking/tickets/${held.ticket}`, undefined, held.token);
      if (t.status === "matched") {
        clearInterval(polling);
        sessionStorage.removeItem(TICKET_KEY);
        Cultists.saveSeat(t.table, t.seat, held.token); // a matched ticket's token is its seat token
        mmStatus.textContent = `Matched: table ${t.table}, seat ${t.seat}`;
        mmStatus.dataset.state = "matched";
        location.href = Cultists.tablePath(t.table, t.seat);
        return;
      }
      if (t.status === "cancelled") {
        stopPolling("The ticket was cancelled.");
        return;
      }
      mmStatus.dataset.state = "queued";
      mmStatus.textContent = `Waiting for a ${t.players}-player table: ${Math.floor(t.waited)} s so far…`;
    } catch (err) {
      stopPolling(err.message);
    }
  }

  function stopPolling(text) {
    clearInterval(polling);
    polling = null;
    sessionStorage.removeItem(TICKET_KEY);
    mmStatus.textContent = text;
    mmStatus.dataset.state = "idle";
    queued(false);
  }

  function startPolling() {
    queued(true);
    clearInterval(polling);
    polling = setInterval(poll, 1000);
    poll();
  }

  mmForm.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const ticket = await Cultists.api("POST", "/api/matchmaking/tickets", {
        game: mmGame.value,
        player: nameOrGuest(),
        players: Number(mmPlayers.value),
      });
      sessionStorage.setItem(TICKET_KEY, JSON.stringify({ ticket: ticket.ticket, token: ticket.token }));
      mmStatus.textContent = "Queued…";
      startPolling();
    } catch (err) {
      mmStatus.textContent = err.message;
    }
  });

  mmCancel.addEventListener("click", async () => {
    const held = JSON.parse(sessionStorage.getItem(TICKET_KEY) || "null");
    if (!held) return stopPolling("");
    try {
      await Cultists.api("DELETE", `/api/matchmaking/tickets/${held.ticket}`, undefined, held.token);
      stopPolling("Left the queue.");
    } catch (err) {
      if (err.status === 409) poll(); // matched meanwhile: follow the match
      else stopPolling(err.message);
    }
  });

  if (sessionStorage.getItem(TICKET_KEY)) startPolling(); // a reload keeps the place in the queue
})();
