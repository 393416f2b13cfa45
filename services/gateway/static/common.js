// Shared by every page: the match API with the gateway's one error shape, and seat tokens.
// A seat's token is kept in localStorage under one key per table and seat, so a reload or
// a second tab keeps the seat, and another browser (profile) can take another seat.
"use strict";

const Cultists = (() => {
  const SEAT_PREFIX = "cultists:seat:";
  const NAME_KEY = "cultists:name";

  function seatKey(table, seat) {
    return `${SEAT_PREFIX}${table}:${seat}`;
  }

  function saveSeat(table, seat, token) {
    localStorage.setItem(seatKey(table, seat), token);
  }

  function forgetSeat(table, seat) {
    localStorage.removeItem(seatKey(table, seat));
  }

  // {seat: token} for every seat of `table` this browser holds.
  function seatsOf(table) {
    const out = {};
    const prefix = `${SEAT_PREFIX}${table}:`;
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      if (key && key.startsWith(prefix)) out[Number(key.slice(prefix.length))] = localStorage.getItem(key);
    }
    return out;
  }

  function playerName() {
    return localStorage.getItem(NAME_KEY) || "";
  }

  function setPlayerName(name) {
    if (name) localStorage.setItem(NAME_KEY, name);
    else localStorage.removeItem(NAME_KEY);
  }

  // fetch + JSON; a non-2xx reply throws an Error carrying the API's status, code and words.
  async function api(method, path, body, token) {
    const headers = { Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (token) headers["X-Seat-Token"] = token;
    const reply = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
    });
    let data = null;
    try {
      data = await reply.json();
    } catch (_) {
      data = null;
    }
    if (!reply.ok) {
      const err = new Error((data && data.error && data.error.message) || reply.statusText);
      err.status = reply.status;
      err.code = data && data.error && data.error.code;
      err.data = data;
      throw err;
    }
    return data;
  }

  // Take a seat; the token is shown once, so it is stored before anything else happens.
  async function join(table, seat) {
    const name = playerName();
    const claim = await api("POST", `/api/tables/${table}/seats/${seat}`, name ? { player: name } : {});
    saveSeat(table, seat, claim.token);
    return claim;
  }

  // A seat this browser's player holds at `table` whose token is not here (taken while
  // signed in, on another device): its token is reissued to this session and kept, so the
  // seat follows the account (the old device's token stops working). Asked once per page.
  async function followSeats(table) {
    if (Object.keys(seatsOf(table)).length || !window.CultistsPlayer) return;
    const session = await window.CultistsPlayer.signIn();
    if (!session || !session.player) return;
    let summary;
    try {
      summary = await api("GET", `/api/tables/${table}`);
    } catch (_) {
      return;
    }
    if (summary.status === "finished") return;
    for (const s of summary.seats) {
      if (s.kind !== "human" || !s.claimed || s.player_id !== session.player) continue;
      try {
        const got = await api("POST", `/api/tables/${table}/seats/${s.seat}/token`, {});
        saveSeat(table, s.seat, got.token);
      } catch (_) {
        /* not ours after all (left, a bot plays it): watch */
      }
    }
  }

  function tablePath(table, seat) {
    return `/tables/${table}` + (seat === undefined || seat === null ? "" : `?seat=${seat}`);
  }

  // -- words ---------------------------------------------------------------------------
  // The engines' log says "seat 2"; people read names, and "you" for their own seat.
  function nameSeats(text, names, me) {
    return String(text)
      .replace(/^(.*) took seat (\d+)$/, (all, who, n) => (Number(n) === me ? "You sat down" : `${who} sat down`))
      .replace(/\bseat (\d+)'s\b/g, (all, n) => (Number(n) === me ? "your" : names[n] ? `${names[n]}'s` : all))
      .replace(/\bseat (\d+)\b/g, (all, n) => (Number(n) === me ? "you" : names[n] || all))
      .replace(/(^|[;:] )you ([^;:]*)/g, (all, lead, rest) => {
        // A clause whose subject is "you" (pages/history.py's second_person, the same rule).
        const [verb, ...words] = rest.split(" ");
        const tail = words.join(" ")
          .replace(/\b(and|then) ([a-z]+s)\b/g, (m, join, v) => `${join} ${baseVerb(v)}`)
          .replace(/\b(their|its) (Codex|Stash|turn|hand|Shrine)\b/g, "your $2")
          .replace(/\byou\b/g, "yourself");
        return `${lead}${lead ? "you" : "You"} ${baseVerb(verb)}${words.length ? " " + tail : ""}`;
      })
      .replace(/^your\b/, "Your")
      .replace(/\b(\d+) card\(s\)/g, (all, n) => `${n} card${n === "1" ? "" : "s"}`);
  }

  // A third-person verb's plain form: "passes" -> "pass", "wins" -> "win".
  function baseVerb(verb) {
    const irregular = { is: "are", has: "have", goes: "go", does: "do", was: "were" };
    if (irregular[verb]) return irregular[verb];
    if (/(ch|sh|ss|x|zz)es$/.test(verb)) return verb.slice(0, -2);
    return /s$/.test(verb) && !/ss$/.test(verb) ? verb.slice(0, -1) : verb;
  }

  // Log entries as lines: the draws of one move (a deal, a draw-up) are grouped into one
  // line, and Tricky Cultists' round scores are given by name.
  function logLines(entries, names, me) {
    const lines = [];
    let group = null;
    for (const e of entries) {
      const draw = e.kind === "draw" && /draws (\d+) card/.exec(e.text);
      if (draw && group && group.version === e.version) {
        group.counts[e.seat] = (group.counts[e.seat] || 0) + Number(draw[1]);
        group.text = drawWords(group.counts, names, me);
        group.mine = group.mine || e.seat === me;
        continue;
      }
      let text = nameSeats(e.text, names, me);
      const scores = /^round (\d+) scores: \[([^\]]*)\]/.exec(e.text);
      if (scores) {
        const parts = scores[2].split(",").map((x, i) => `${i === me ? "you" : names[i] || `seat ${i}`} ${x.trim()}`);
        text = `Round ${scores[1]} scores: ${parts.join(", ")}`;
      }
      const line = { kind: e.kind, seat: e.seat, version: e.version ?? "", key: `${e.version}:${lines.length}`, text, mine: e.seat === me && me >= 0 };
      lines.push(line);
      group = null;
      if (draw) {
        line.counts = { [e.seat]: Number(draw[1]) };
        group = line;
      }
    }
    return lines;
  }

  function drawWords(counts, names, me) {
    const seats = Object.keys(counts).map(Number);
    const same = seats.every((s) => counts[s] === counts[seats[0]]);
    const who = (s) => (s === me ? "you" : names[s] || `seat ${s}`);
    if (same && seats.length === names.length && seats.length > 1) {
      return `Everyone draws ${counts[seats[0]]} card${counts[seats[0]] === 1 ? "" : "s"}`;
    }
    const text = seats.map((s) => `${who(s)} ${counts[s]}`).join(", ");
    return `Cards drawn: ${text}`;
  }

  // Crazy Cultists' machine names read as printed; other games' names already read well.
  function cardName(name) {
    const shown = document.querySelector(`.card[data-card="${CSS.escape(name)}"]`);
    if (shown) return shown.firstChild ? shown.firstChild.textContent.trim() : name;
    return String(name).replace(/_/g, " ");
  }

  // -- the tab's icon: a badge on it while it is your move --------------------------------
  function setFavicon(badge) {
    const link = document.querySelector("link[rel=icon]");
    if (!link) return;
    const want = link.dataset[badge ? "turn" : "plain"];
    if (want && link.getAttribute("href") !== want) link.setAttribute("href", want);
  }

  // -- a card's rules text on tap (hover shows the title) ---------------------------------
  function showCardText(card) {
    let tip = document.getElementById("card-tip");
    if (!tip) {
      tip = document.createElement("div");
      tip.id = "card-tip";
      tip.className = "card-tip";
      tip.setAttribute("role", "status");
      tip.dataset.testid = "card-tip";
      document.body.append(tip);
      document.addEventListener("click", (ev) => {
        if (!ev.target.closest(".card[data-text], #card-tip")) tip.hidden = true;
      });
    }
    tip.textContent = `${card.firstChild ? card.firstChild.textContent.trim() : ""}: ${card.dataset.text}`;
    const box = card.getBoundingClientRect();
    tip.style.left = `${Math.max(4, Math.min(window.innerWidth - 284, box.left + window.scrollX))}px`;
    tip.style.top = `${box.bottom + window.scrollY + 4}px`;
    tip.hidden = false;
  }

  return {
    api, join, saveSeat, forgetSeat, seatsOf, followSeats, playerName, setPlayerName, tablePath,
    nameSeats, logLines, cardName, setFavicon, showCardText,
  };
})();
