// The table page: shows the panel for this browser's seat (or a spectator's), posts the
// action a button or a card click offers with the version it was offered at, follows the
// table's event stream, and counts deadlines down.
//
// Moves are played out one at a time: when the stream says the table moved on by several
// versions (three bots answering within a fraction of a second), the page shows the panel
// *at* each version in between (`/panel?at=V`, the seat's own view then), highlights what
// moved and who acted, waits the chosen pace, then shows the live panel. "Skip to now" and
// the pace setting (kept in localStorage) cut that short.
"use strict";

(() => {
  const page = document.querySelector("[data-testid=table-page]");
  const tableId = page.dataset.table;
  const box = document.getElementById("panel-box");
  const log = document.getElementById("event-log");
  const notice = document.getElementById("notice");
  const announcer = document.getElementById("announce");
  const lastMove = document.getElementById("last-move");
  const skipButton = document.getElementById("skip-now");
  const paceSelect = document.getElementById("pace");
  const autoBox = document.getElementById("auto-pass");
  const warning = document.getElementById("time-warning");
  const params = new URLSearchParams(location.search);
  const LOG_KEEP = 500;
  const RETRY_MS = 2000;
  const SAFETY_MS = 15000; // a fresh panel now and then, should the event stream be cut off
  const WARN_SECONDS = 10;
  const PACE_KEY = "cultists:pace";
  const AUTO_KEY = "cultists:auto-pass";
  const BASE_TITLE = document.title;

  let seat = null;
  let token = null;
  let clockOffset = 0; // server clock minus ours, so countdowns use the server's deadlines
  let names = [];
  let me = -1;
  let shown = -1; // the version on screen
  let latest = -1; // the newest version the stream told us of
  let asked = -1; // the newest version known when the live panel was last asked for
  let wasMyTurn = false;

  // -- settings ---------------------------------------------------------------------------
  const stored = localStorage.getItem(PACE_KEY);
  paceSelect.value = stored === null ? paceSelect.value : stored;
  paceSelect.addEventListener("change", () => localStorage.setItem(PACE_KEY, paceSelect.value));
  autoBox.checked = localStorage.getItem(AUTO_KEY) !== "0"; // on unless turned off
  autoBox.addEventListener("change", () => {
    localStorage.setItem(AUTO_KEY, autoBox.checked ? "1" : "0");
    considerAuto();
  });
  // Milliseconds a move by another seat stays on screen at least; "step" waits for a click.
  const stepping = () => paceSelect.value === "step";
  const pace = () => (stepping() ? 1 : Number(paceSelect.value) || 0);
  const soundBox = document.getElementById("turn-sound");
  const SOUND_KEY = "cultists:turn-sound";
  soundBox.checked = localStorage.getItem(SOUND_KEY) === "1"; // off unless turned on
  soundBox.addEventListener("change", () => localStorage.setItem(SOUND_KEY, soundBox.checked ? "1" : "0"));

  // A short two-note chime (no audio file to fetch), when the player asked for one.
  function chime() {
    if (!soundBox.checked || !window.AudioContext) return;
    try {
      const audio = new AudioContext();
      [660, 880].forEach((hz, i) => {
        const tone = audio.createOscillator();
        const gain = audio.createGain();
        tone.frequency.value = hz;
        gain.gain.setValueAtTime(0.08, audio.currentTime + i * 0.15);
        gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + i * 0.15 + 0.3);
        tone.connect(gain).connect(audio.destination);
        tone.start(audio.currentTime + i * 0.15);
        tone.stop(audio.currentTime + i * 0.15 + 0.3);
      });
    } catch (_) {
      /* no sound, no harm */
    }
  }

  // -- which seat this browser plays ------------------------------------------------------
  function chooseSeat() {
    const mine = Cultists.seatsOf(tableId);
    const held = Object.keys(mine).map(Number).sort((a, b) => a - b);
    const want = params.get("seat");
    if (want === "watch") seat = null;
    else if (want !== null && mine[Number(want)]) seat = Number(want);
    else seat = held.length ? held[0] : null;
    token = seat === null ? null : mine[seat];
    document.getElementById("who-text").textContent = seat === null ? "Watching" : `You are seat ${seat}`;
    // A spectator has no turn: the controls about your own turns are for players only.
    for (const el of document.querySelectorAll("[data-player-only]")) el.hidden = seat === null;
    const links = held.map((s) => `<a href="?seat=${s}"${s === seat ? ' aria-current="true"' : ""}>seat ${s}</a>`);
    if (held.length) links.push(`<a href="?seat=watch"${seat === null ? ' aria-current="true"' : ""}>watch</a>`);
    document.getElementById("seat-switch").innerHTML = links.length > 1 ? links.join(" ") : "";
  }

  function say(text) {
    notice.textContent = text;
    notice.hidden = !text;
  }

  function announce(text) {
    if (!text) return;
    announcer.textContent = ""; // the same words twice are still read out
    setTimeout(() => (announcer.textContent = text), 30);
  }

  // "seat 2" -> the seat's name, "you" for this browser's seat (the log's and moves' words).
  function speak(text) {
    return Cultists.nameSeats(text, names, me);
  }

  // -- the panel ----------------------------------------------------------------------------
  let loading = false;
  let again = false;
  let skipping = false;
  let shownAt = 0; // when the panel on screen was put there (performance.now())
  let holding = false; // the panel on screen shows another seat's move: keep it up a while
  let wake = null; // ends a wait early (skip to now, the next-move click)
  const nextButton = document.getElementById("next-move");

  // Waits until the move on screen has been seen: the pace's duration since it was shown,
  // or, at the "step" pace, a click on "Next move". Skip to now ends the wait.
  async function hold() {
    if (heldLeft() <= 0) return;
    await new Promise((resolve) => {
      let timer = null;
      // The mark is looked at again when the timer fires: the first paint of the panel may
      // have come after the wait began and moved the pace's start later (see show()).
      const arm = () => {
        const left = heldLeft();
        if (left <= 0) done();
        else if (Number.isFinite(left)) timer = setTimeout(arm, left);
      };
      function done() {
        clearTimeout(timer);
        wake = null;
        holding = false; // seen: the position stays until something newer, never held twice
        nextButton.hidden = true;
        resolve();
      }
      wake = done;
      arm();
      if (stepping() && wake) {
        nextButton.hidden = false;
        announce("Next move: press the Next move button");
      }
    });
  }

  // How long the move on screen is still to stay up: 0 when it has been seen (or is the
  // player's own), Infinity at the step pace until the click.
  function heldLeft() {
    if (!holding || skipping || pace() === 0) return 0;
    return stepping() ? Infinity : Math.max(0, shownAt + pace() - performance.now());
  }
  nextButton.addEventListener("click", () => wake && wake());
  paceSelect.addEventListener("change", () => wake && wake());

  async function fetchPanel(at) {
    const query = at === undefined ? "" : `?at=${at}`;
    return fetch(`/tables/${tableId}/panel${query}`, {
      headers: token ? { "X-Seat-Token": token } : {},
      cache: "no-store",
    });
  }

  // The newest version first played out move by move (at the chosen pace), then live.
  async function refresh() {
    if (loading) {
      again = true; // one more fetch after this one: never show an older position last
      return;
    }
    loading = true;
    try {
      do {
        again = false;
        for (;;) {
          while (playing() && shown < latest - 1) {
            skipButton.hidden = false;
            const reply = await fetchPanel(shown + 1);
            if (!reply.ok) {
              await hold(); // the move on screen still gets its pace before the jump
              skipping = true; // an earlier position we cannot have: go to the live one
              break;
            }
            const html = await reply.text();
            await hold(); // the move on screen stays up for the pace before the next one
            if (skipping) break;
            show(html);
          }
          asked = Math.max(asked, latest);
          const reply = await fetchPanel();
          if (!reply.ok) {
            await failed(reply);
            break;
          }
          const html = await reply.text();
          const version = versionOf(html);
          const current = box.querySelector("[data-testid=panel]");
          if (version === shown && current && current.dataset.past === "0" && current.querySelector(".selected")) {
            break; // the same position again: keep the card the player has picked
          }
          if (version === shown && current && current.dataset.past === "0" && sameAsShown(html)) {
            break; // nothing changed: keep the page (and the keyboard's focus) as it is
          }
          if (playing() && version > shown + 1) {
            latest = Math.max(latest, version); // the table moved on meanwhile: play that first
            continue;
          }
          if (version > shown) {
            await hold();
            if (playing() && latest > version) continue; // more moves came while it was held
          }
          skipping = false;
          skipButton.hidden = true;
          show(html);
          break;
        }
      } while (again);
    } catch (err) {
      say(`Connection problem: ${err.message}`);
      setTimeout(refresh, RETRY_MS);
    } finally {
      loading = false;
    }
  }

  // Whether moves are being played out one by one (not when instant, skipped, or on the
  // first panel of the page).
  const playing = () => pace() > 0 && !skipping && shown >= 0;

  // The live panel last put up, without its server time (which every fetch changes).
  let shownHtml = "";
  const withoutClock = (html) => html.replace(/ data-now="[^"]*"/, "");
  const sameAsShown = (html) => withoutClock(html) === shownHtml;

  function versionOf(html) {
    const found = /data-testid="panel"[^>]*?data-version="(\d+)"/.exec(html);
    return found ? Number(found[1]) : -1;
  }

  async function failed(reply) {
    let message = reply.statusText;
    try {
      message = (await reply.json()).error.message;
    } catch (_) {
      /* keep the status text */
    }
    if (reply.status === 403 && seat !== null) {
      Cultists.forgetSeat(tableId, seat); // the seat is not ours (any more): watch instead
      chooseSeat();
      again = true;
    }
    say(message);
    if (reply.status >= 500) setTimeout(refresh, RETRY_MS); // engine or gateway hiccup
  }

  skipButton.addEventListener("click", () => {
    skipping = true;
    skipButton.hidden = true;
    if (wake) wake();
  });

  // Which cards sit in which zone: what is new in a zone since the last panel has just moved.
  function zones(root) {
    const out = new Map();
    for (const zone of root.querySelectorAll(".cards[data-testid]")) {
      const key = `${zone.dataset.testid}:${zone.dataset.seat || ""}`;
      out.set(key, [...zone.querySelectorAll("[data-card]")].map((c) => c.dataset.cardId || c.dataset.card));
    }
    return out;
  }

  function show(html) {
    const before = box.querySelector("[data-testid=panel]");
    const oldZones = before ? zones(before) : null;
    const oldHand = before && Number(before.dataset.seat) >= 0 ? handOf(before) : null;
    box.innerHTML = html;
    shownHtml = withoutClock(html);
    const panel = box.querySelector("[data-testid=panel]");
    clockOffset = Number(panel.dataset.now) - Date.now() / 1000;
    me = Number(panel.dataset.seat);
    const firstNames = !names.length;
    names = JSON.parse(panel.dataset.names || "[]");
    if (firstNames) renderLog();
    const version = Number(panel.dataset.version);
    const moved = version !== shown;
    shown = version;
    latest = Math.max(latest, version);
    if (moved) {
      // Another seat's move (a bot's, another player's) is held on screen; your own is not.
      holding = panel.dataset.moveSeat !== undefined && Number(panel.dataset.moveSeat) !== me;
      renderLog(); // the log shows what the board shows, never a move ahead of it
    }
    if (oldZones) markMoved(panel, oldZones);
    if (oldHand) noteDraws(oldHand, handOf(panel), version);
    const words = panel.querySelector("[data-testid=move-words]");
    if (words && lastMove.dataset.version !== String(version)) {
      const text = speak(words.textContent.trim());
      lastMove.textContent = text;
      lastMove.dataset.version = String(version);
      announce(text);
    }
    if (words) {
      const actor = panel.dataset.moveSeat;
      for (const el of panel.querySelectorAll(`[data-testid=board] [data-seat="${actor}"].seat`)) el.classList.add("acted");
      const aimed = panel.dataset.moveTarget;
      if (aimed !== undefined && aimed !== actor) {
        for (const el of panel.querySelectorAll(`[data-testid=board] [data-seat="${aimed}"].seat`)) el.classList.add("aimed");
      }
    }
    turnSignals(panel);
    setUpCards(panel);
    tick();
    // Told synchronously, so what others lay out on a new panel (learn.js fans the hand) is
    // done before the pace starts counting: a move is held for the pace once it can be seen.
    document.dispatchEvent(new CustomEvent("cultists:panel-shown", { detail: { panel } }));
    if (moved) {
      // On screen from now: the pace counts from here, and from the frame that paints the
      // panel when that comes later (a busy page paints late; the move must be seen for the
      // whole pace, not part of it spent waiting for the paint).
      shownAt = performance.now();
      requestAnimationFrame(() => {
        if (shown === version) shownAt = Math.max(shownAt, performance.now());
      });
    }
    considerAuto(); // after the pace's start is known: a forced answer waits it out
  }

  function markMoved(panel, oldZones) {
    for (const zone of panel.querySelectorAll(".cards[data-testid]")) {
      if (zone.closest("[data-testid=private]")) continue; // the hand's own churn is not a move
      const key = `${zone.dataset.testid}:${zone.dataset.seat || ""}`;
      const before = [...(oldZones.get(key) || [])];
      for (const card of zone.querySelectorAll("[data-card]")) {
        const id = card.dataset.cardId || card.dataset.card;
        const at = before.indexOf(id);
        if (at >= 0) before.splice(at, 1);
        else card.classList.add("moved");
      }
    }
  }

  function handOf(panel) {
    return [...panel.querySelectorAll("[data-testid=hand] [data-card]")].map((c) => c.dataset.card);
  }

  // Your own draws, named to you alone: the cards now in your hand that were not before,
  // added to this version's draw line in your log (the public log says only how many).
  function noteDraws(oldHand, newHand, version) {
    const left = [...oldHand];
    const gained = [];
    for (const card of newHand) {
      const at = left.indexOf(card);
      if (at >= 0) left.splice(at, 1);
      else gained.push(card);
    }
    if (!gained.length) return;
    const line = [...log.querySelectorAll("li[data-kind=draw][data-mine='1']")].pop();
    if (!line || Number(line.dataset.version) > version || line.dataset.named) return;
    line.dataset.named = "1";
    const words = gained.map((c) => Cultists.cardName(c)).join(", ");
    line.append(document.createTextNode(`: ${words}`));
  }

  // -- turn signals: tab title, favicon badge, announcement, focus -------------------------
  function turnSignals(panel) {
    const past = panel.dataset.past === "1";
    const myTurn = !past && !!panel.querySelector("button[data-action]");
    const over = panel.dataset.terminal === "1";
    document.title = myTurn ? `(Your move) ${BASE_TITLE}` : over ? `(Game over) ${BASE_TITLE}` : BASE_TITLE;
    Cultists.setFavicon(myTurn);
    if (myTurn && !wasMyTurn) {
      const prompt = panel.querySelector("[data-testid=prompt]");
      const asked = panel.querySelector("[data-testid=actions] h2");
      announce(`${asked ? asked.textContent : "Your move"}: ${prompt ? speak(prompt.textContent.trim()) : ""}`);
      chime();
    }
    // Focus goes to the first decision when the turn comes, and back to it when a fresh
    // panel replaced the element that had it (never away from a control the player is using).
    const lost = document.activeElement === document.body || !document.activeElement;
    if (myTurn && (!wasMyTurn || lost)) {
      setTimeout(() => {
        const target = panel.querySelector("[data-testid=private] .card.playable") || panel.querySelector("button[data-action]");
        if (target && document.body.contains(target)) target.focus({ preventScroll: true });
      }, 0);
    }
    if (over && !past) announce(panel.querySelector("[data-testid=winner] h2")?.textContent.trim() || "");
    wasMyTurn = myTurn;
  }

  // -- clicking the cards ------------------------------------------------------------------
  // Every legal button names its card (data-card: a name, or a Tricky Cultists card id) and
  // its target seat or Codex card. A card in the seat's private zones with actions is
  // highlighted; a click plays it when it has one action, else marks its targets (seats,
  // Codex cards) and narrows the button list to that card's actions.
  function setUpCards(panel) {
    const buttons = [...panel.querySelectorAll("button[data-action]")];
    // The engines' labels say "seat 2": read it as the names the rest of the page uses.
    for (const el of [...buttons, ...panel.querySelectorAll("[data-testid=prompt], [data-testid=pending]")]) {
      if (/\bseat \d|\byou\b/.test(el.textContent)) el.textContent = speak(el.textContent.trim());
    }
    const privateBox = panel.querySelector("[data-testid=private]");
    if (!privateBox) return;
    const byCard = new Map();
    for (const b of buttons) {
      if (!b.dataset.card) continue;
      if (!byCard.has(b.dataset.card)) byCard.set(b.dataset.card, []);
      byCard.get(b.dataset.card).push(b);
    }
    let any = false;
    for (const card of privateBox.querySelectorAll("[data-card]")) {
      const key = card.dataset.cardId || card.dataset.card;
      const options = forZone(card, byCard.get(key) || []);
      if (options.length) {
        any = true;
        card.classList.add("playable");
        card.tabIndex = 0;
        card.setAttribute("role", "button");
        card.setAttribute("aria-label", `${card.textContent.trim()}: ${options.map((b) => b.textContent).join(" or ")}`);
      } else if (buttons.length && card.closest("[data-testid=hand]")) {
        card.classList.add("dimmed");
      }
    }
    const hint = panel.querySelector("[data-testid=card-hint]");
    if (hint) hint.hidden = !any;
  }

  // A card shown in another seat's revealed hand answers only the actions aimed at that seat.
  function forZone(card, options) {
    const zone = card.closest("[data-seat]");
    const owner = zone ? Number(zone.dataset.seat) : me;
    if (owner === me) return options.filter((b) => !b.dataset.target || b.dataset.kind !== "take");
    return options.filter((b) => b.dataset.target === String(owner));
  }

  function clearSelection(panel) {
    for (const el of panel.querySelectorAll(".selected, .target")) el.classList.remove("selected", "target");
    for (const b of panel.querySelectorAll("button[data-action]")) b.hidden = false;
    const cancel = panel.querySelector("[data-testid=cancel-card]");
    if (cancel) cancel.remove();
  }

  function pickCard(card) {
    const panel = box.querySelector("[data-testid=panel]");
    const key = card.dataset.cardId || card.dataset.card;
    const options = forZone(card, [...panel.querySelectorAll(`button[data-action][data-card="${CSS.escape(key)}"]`)]);
    if (!options.length) return;
    if (options.length === 1) return act(options[0]);
    clearSelection(panel);
    card.classList.add("selected");
    for (const b of panel.querySelectorAll("button[data-action]")) b.hidden = !options.includes(b);
    for (const b of options) {
      const seatBox = b.dataset.target && panel.querySelector(`[data-testid=board] .seat[data-seat="${b.dataset.target}"]`);
      if (seatBox) seatBox.classList.add("target");
      const codex = b.dataset.codex && panel.querySelector(`[data-testid=codex] [data-card-id="${b.dataset.codex}"]`);
      if (codex) codex.classList.add("target");
    }
    const cancel = document.createElement("button");
    cancel.type = "button";
    cancel.textContent = "another card";
    cancel.dataset.testid = "cancel-card";
    cancel.addEventListener("click", () => clearSelection(panel));
    panel.querySelector("[data-testid=buttons]").append(cancel);
    for (const el of panel.querySelectorAll(".target")) {
      el.tabIndex = 0; // a target is one key away: Enter on the card, then Enter here
      el.setAttribute("role", "button");
    }
    const first = panel.querySelector(".target") || options[0];
    first.scrollIntoView({ block: "nearest" });
    first.focus({ preventScroll: true });
  }

  function pickTarget(el) {
    const panel = box.querySelector("[data-testid=panel]");
    const selected = panel.querySelector("[data-testid=private] .selected");
    if (!selected) return false;
    const visible = [...panel.querySelectorAll("button[data-action]:not([hidden])")];
    const match = el.dataset.cardId
      ? visible.find((b) => b.dataset.codex === el.dataset.cardId)
      : visible.find((b) => b.dataset.target === el.dataset.seat);
    if (match) act(match);
    return !!match;
  }

  // -- moving -----------------------------------------------------------------------------
  let autoTimer = null;

  // A decision with a single legal answer (a window you cannot answer, a forced pass) is
  // taken for you after a short random delay, the same whatever your hand holds, so the
  // timing tells the table nothing; a window you can answer stays a real question.
  function considerAuto() {
    clearTimeout(autoTimer);
    const panel = box.querySelector("[data-testid=panel]");
    const note = document.getElementById("auto-note");
    note.hidden = true;
    if (!panel || panel.dataset.past === "1" || !autoBox.checked) return;
    const actions = panel.querySelector("[data-testid=actions]");
    const buttons = panel.querySelectorAll("button[data-action]:not([disabled])");
    if (!actions || buttons.length !== 1) return;
    note.hidden = false;
    note.textContent = `Only one choice ("${buttons[0].textContent}"): taking it for you…`;
    // Never before another seat's move on screen has stayed up for the pace: the page's
    // own answer must not cut short the move it answers. (At the step pace the click on
    // *Next move* ends a wait for a newer move; with none waiting, the answer is the next.)
    const left = heldLeft();
    if (!Number.isFinite(left) && wake) {
      autoTimer = setTimeout(considerAuto, 250); // looked at again once Next move is clicked
      return;
    }
    const delay = Math.max(600 + Math.random() * 900, Number.isFinite(left) ? left : 0);
    autoTimer = setTimeout(() => {
      if (Number.isFinite(heldLeft()) && heldLeft() > 0) return considerAuto(); // painted late
      if (document.body.contains(buttons[0]) && !buttons[0].disabled) act(buttons[0]);
      return undefined;
    }, delay);
  }

  async function act(button) {
    clearTimeout(autoTimer);
    const answered = Number(button.dataset.version) === shown; // the position on screen
    const panel = box.querySelector("[data-testid=panel]");
    panel.dataset.busy = "1";
    for (const b of box.querySelectorAll("button[data-action]")) b.disabled = true;
    try {
      const done = await Cultists.api(
        "POST",
        `/api/tables/${tableId}/actions`,
        { action: Number(button.dataset.action), version: Number(button.dataset.version) },
        token,
      );
      latest = Math.max(latest, done.version);
      say("");
      // You have seen the position you answered, and your move is the next one: it shows at
      // once. Had another seat moved first (a 409, or a move already waiting to be shown),
      // the move on screen keeps its pace: your click does not cut a bot's move short.
      if (answered && done.version === shown + 1) {
        holding = false;
        if (wake) wake();
      }
      // The move's own stream update may have come first and asked for the panel at this
      // version already: one move, one panel.
      if (done.version <= asked) return;
    } catch (err) {
      // 409: someone moved first (an out-of-turn answer, a bot); the fresh panel says what now.
      if (err.status !== 409) say(err.message);
    }
    await refresh();
  }

  async function join(button) {
    button.disabled = true;
    const wanted = Number(button.dataset.joinSeat);
    try {
      await Cultists.join(tableId, wanted);
      params.set("seat", String(wanted));
      history.replaceState(null, "", `?${params}`);
      chooseSeat();
      say("");
    } catch (err) {
      say(err.message);
    }
    await refresh();
  }

  box.addEventListener("click", (ev) => {
    const action = ev.target.closest("button[data-action]");
    if (action && !action.disabled) return act(action);
    const seatButton = ev.target.closest("button[data-join-seat]");
    if (seatButton && !seatButton.disabled) return join(seatButton);
    const target = ev.target.closest(".target");
    if (target && pickTarget(target)) return undefined;
    const card = ev.target.closest(".card.playable");
    if (card) return pickCard(card);
    const plain = ev.target.closest(".card[data-text]");
    if (plain) Cultists.showCardText(plain);
    return undefined;
  });
  box.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter" && ev.key !== " ") return;
    const el = ev.target.closest(".card.playable, .target");
    if (!el) return;
    ev.preventDefault();
    el.click();
  });

  // -- deadlines ------------------------------------------------------------------------------
  function tick() {
    const now = Date.now() / 1000 + clockOffset;
    let mine = null;
    for (const el of box.querySelectorAll("[data-deadline]")) {
      const left = Number(el.dataset.deadline) - now;
      el.textContent = left > 0 ? `${Math.ceil(left)} s` : "time's up";
      el.classList.toggle("low", left < WARN_SECONDS);
      if (el.dataset.testid === `timer-${me}`) mine = left;
    }
    const warn = mine !== null && mine > 0 && mine < WARN_SECONDS && !!box.querySelector("button[data-action]");
    if (warn && warning.hidden) announce(`${Math.ceil(mine)} seconds left to decide`);
    warning.hidden = !warn;
    if (warn) warning.textContent = `${Math.ceil(mine)} s left: then a bot decides for you.`;
  }
  setInterval(tick, 250);

  // -- the event log ---------------------------------------------------------------------------
  const entries = []; // raw log entries, re-worded once the seats' names are known

  function addLog(entry) {
    entries.push(entry);
    if (entries.length > LOG_KEEP) entries.shift();
    if (entry.kind === "timeout" && entry.seat === me && me >= 0) {
      say(`Your time ran out: ${speak(entry.text)}. You are marked away until you act again.`);
      announce("Your time ran out; a bot moved for you.");
    }
    renderLog();
  }

  // One line per entry, except that the draws of one move (a deal, a draw-up) are one line.
  function renderLog() {
    // Entries of versions not on the board yet wait: the log never runs ahead of the board.
    const upto = entries.filter((e) => (e.version ?? 0) <= shown);
    const lines = Cultists.logLines(upto, names, me);
    const named = new Map([...log.querySelectorAll("li[data-named]")].map((li) => [li.dataset.key, li.textContent]));
    log.replaceChildren(
      ...lines.map((line) => {
        const li = document.createElement("li");
        li.dataset.testid = "event";
        li.dataset.kind = line.kind;
        li.dataset.seat = line.seat;
        li.dataset.version = line.version;
        li.dataset.key = line.key;
        if (line.mine) li.dataset.mine = "1";
        li.textContent = named.get(line.key) || line.text;
        if (named.has(line.key)) li.dataset.named = "1";
        return li;
      }),
    );
    log.scrollTop = log.scrollHeight;
    document.getElementById("log-count").textContent = String(lines.length);
    if (!lastMove.dataset.version && lines.length) lastMove.textContent = lines[lines.length - 1].text;
  }

  const stream = new EventSource(`/api/tables/${tableId}/events/stream`);
  // (Re)connected: changes made while the stream was down sent no `update`, so look again.
  stream.addEventListener("open", () => refresh());
  stream.addEventListener("log", (ev) => addLog(JSON.parse(ev.data)));
  stream.addEventListener("update", (ev) => {
    let version;
    try {
      version = JSON.parse(ev.data).version;
    } catch (_) {
      version = undefined;
    }
    if (version === undefined) return refresh(); // a seats-only update carries no version
    latest = Math.max(latest, Number(version));
    // Our own move's update: its answer already said the version, and the panel asked for
    // after it shows it, so one move costs this page one panel, not two.
    if (Number(version) <= asked) return undefined;
    return refresh();
  });
  stream.addEventListener("end", () => {
    stream.close(); // the game is over: nothing more will come
    refresh();
  });

  setInterval(() => {
    const panel = box.querySelector("[data-testid=panel]");
    if (!document.hidden && !(panel && panel.dataset.terminal === "1")) refresh();
  }, SAFETY_MS);

  // The log as a drawer at phone width.
  document.getElementById("log-toggle").addEventListener("click", () => {
    const open = document.body.classList.toggle("log-open");
    document.getElementById("log-toggle").setAttribute("aria-expanded", String(open));
  });

  chooseSeat();
  // Signed in on another device than the one that took the seat: the seat comes along.
  Cultists.followSeats(tableId).finally(() => {
    chooseSeat();
    refresh();
  });
})();
