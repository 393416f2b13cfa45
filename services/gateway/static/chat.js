// The table chat (issue 31): seated players post short messages, everyone at the table
// reads them. Messages are inserted as text (never markup); the list is asked for every
// few seconds, only what came after the last message seen.
"use strict";

(() => {
  const box = document.querySelector("[data-testid=chat]");
  if (!box) return;
  const tableId = document.querySelector("[data-testid=table-page]").dataset.table;
  const list = box.querySelector("[data-testid=chat-messages]");
  const form = box.querySelector("[data-testid=chat-form]");
  const input = box.querySelector("[data-testid=chat-input]");
  const error = box.querySelector("[data-testid=chat-error]");
  const POLL_MS = 3000;
  let last = 0;

  // The seat this page plays (table.js's rule: ?seat=, else the lowest held), or null.
  function mySeat() {
    const mine = Cultists.seatsOf(tableId);
    const want = new URLSearchParams(location.search).get("seat");
    if (want === "watch") return null;
    if (want !== null && mine[Number(want)]) return Number(want);
    const held = Object.keys(mine).map(Number).sort((a, b) => a - b);
    return held.length ? held[0] : null;
  }

  function add(message) {
    last = Math.max(last, message.id);
    const li = document.createElement("li");
    li.dataset.testid = "chat-message";
    li.dataset.seat = String(message.seat);
    const who = document.createElement("strong");
    who.textContent = message.seat === mySeat() ? "you" : message.name;
    li.append(who, document.createTextNode(`: ${message.text}`));
    list.append(li);
    while (list.children.length > 50) list.firstChild.remove();
    list.scrollTop = list.scrollHeight;
  }

  async function poll() {
    try {
      const found = await Cultists.api("GET", `/api/tables/${tableId}/chat?after=${last}`);
      for (const m of found.messages) if (m.id > last) add(m);
    } catch (_) {
      /* the next poll tries again */
    }
  }

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const seat = mySeat();
    if (seat === null || !input.value.trim()) return;
    error.hidden = true;
    try {
      const said = await Cultists.api("POST", `/api/tables/${tableId}/chat`, { text: input.value }, Cultists.seatsOf(tableId)[seat]);
      input.value = "";
      if (said.id > last) add(said);
    } catch (err) {
      error.textContent = err.message;
      error.hidden = false;
    }
  });

  // Only a seated player posts; everyone reads (the form shows once a seat is held).
  setInterval(() => {
    form.hidden = mySeat() === null;
    poll();
  }, POLL_MS);
  form.hidden = mySeat() === null;
  poll();
})();
