// The table page: shows the panel for this browser's seat (or a spectator's), posts the
// action a button offers with the version it was offered at, follows the table's event
// stream (log lines, and a fresh panel after every change), and counts deadlines down.
"use strict";

(() => {
  const page = document.querySelector("[data-testid=table-page]");
  const tableId = page.dataset.table;
  const box = document.getElementById("panel-box");
  const log = document.getElementById("event-log");
  const notice = document.getElementById("notice");
  const params = new URLSearchParams(location.search);
  const LOG_KEEP = 500;
  const RETRY_MS = 2000;
  const SAFETY_MS = 15000; // a fresh panel now and then, should the event stream be cut off

  let seat = null;
  let token = null;
  let clockOffset = 0; // server clock minus ours, so countdowns use the server's deadlines

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
    const links = held.map((s) => `<a href="?seat=${s}"${s === seat ? ' aria-current="true"' : ""}>seat ${s}</a>`);
    if (held.length) links.push(`<a href="?seat=watch"${seat === null ? ' aria-current="true"' : ""}>watch</a>`);
    document.getElementById("seat-switch").innerHTML = links.length > 1 ? links.join(" ") : "";
  }

  function say(text) {
    notice.textContent = text;
    notice.hidden = !text;
  }

  // -- the panel ----------------------------------------------------------------------------
  let loading = false;
  let again = false;

  async function refresh() {
    if (loading) {
      again = true; // one more fetch after this one: never show an older position last
      return;
    }
    loading = true;
    try {
      do {
        again = false;
        const reply = await fetch(`/tables/${tableId}/panel`, {
          headers: token ? { "X-Seat-Token": token } : {},
          cache: "no-store",
        });
        if (reply.ok) {
          box.innerHTML = await reply.text();
          const panel = box.querySelector("[data-testid=panel]");
          clockOffset = Number(panel.dataset.now) - Date.now() / 1000;
          tick();
        } else {
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
      } while (again);
    } catch (err) {
      say(`Connection problem: ${err.message}`);
      setTimeout(refresh, RETRY_MS);
    } finally {
      loading = false;
    }
  }

  async function act(button) {
    const panel = box.querySelector("[data-testid=panel]");
    panel.dataset.busy = "1";
    for (const b of box.querySelectorAll("button[data-action]")) b.disabled = true;
    try {
      await Cultists.api(
        "POST",
        `/api/tables/${tableId}/actions`,
        { action: Number(button.dataset.action), version: Number(button.dataset.version) },
        token,
      );
      say("");
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
    return undefined;
  });

  // -- deadlines ------------------------------------------------------------------------------
  function tick() {
    const now = Date.now() / 1000 + clockOffset;
    for (const el of box.querySelectorAll("[data-deadline]")) {
      const left = Number(el.dataset.deadline) - now;
      el.textContent = left > 0 ? `${Math.ceil(left)} s` : "time's up";
      el.classList.toggle("low", left < 10);
    }
  }
  setInterval(tick, 250);

  // -- the event stream ----------------------------------------------------------------------
  function addLog(entry) {
    const li = document.createElement("li");
    li.dataset.testid = "event";
    li.dataset.kind = entry.kind;
    li.dataset.seat = entry.seat;
    li.textContent = entry.text;
    log.append(li);
    while (log.children.length > LOG_KEEP) log.firstElementChild.remove();
    log.scrollTop = log.scrollHeight;
  }

  const stream = new EventSource(`/api/tables/${tableId}/events/stream`);
  // (Re)connected: changes made while the stream was down sent no `update`, so look again.
  stream.addEventListener("open", () => refresh());
  stream.addEventListener("log", (ev) => addLog(JSON.parse(ev.data)));
  stream.addEventListener("update", () => refresh());
  stream.addEventListener("end", () => {
    stream.close(); // the game is over: nothing more will come
    refresh();
  });

  setInterval(() => {
    const panel = box.querySelector("[data-testid=panel]");
    if (!document.hidden && !(panel && panel.dataset.terminal === "1")) refresh();
  }, SAFETY_MS);

  chooseSeat();
  refresh();
})();
