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

  function tablePath(table, seat) {
    return `/tables/${table}` + (seat === undefined || seat === null ? "" : `?seat=${seat}`);
  }

  return { api, join, saveSeat, forgetSeat, seatsOf, playerName, setPlayerName, tablePath };
})();
