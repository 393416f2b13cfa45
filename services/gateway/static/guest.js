// Signs this browser in as a guest player without asking (issue 15), and sends the
// player's session with every request of the page to its own gateway.
//
// The browser makes a random device id once and keeps it (localStorage); the gateway
// gives that device the same guest player every time (POST /api/players/guest) and a
// session that expires. `fetch` is wrapped so that every same-origin request carries
// `X-Player-Token`: seats taken and tickets queued from the pages are then bound to the
// player, and the other scripts need no change. A session the gateway calls expired is
// renewed once, on the spot. Once the device's guest has a username (the account page,
// /account), the device id no longer signs in: the guest sign-in is then not tried again,
// and the session comes from signing in with the password (CultistsPlayer.use).
"use strict";

(() => {
  const DEVICE_KEY = "cultists:device";
  const SESSION_KEY = "cultists:session";
  const UPGRADED_KEY = "cultists:device-upgraded";
  const GUEST_PATH = "/api/players/guest";
  const original = window.fetch.bind(window);

  function randomHex(bytes) {
    const buf = new Uint8Array(bytes);
    crypto.getRandomValues(buf);
    return Array.from(buf, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function device() {
    let id = localStorage.getItem(DEVICE_KEY);
    if (!id) {
      id = randomHex(24);
      localStorage.setItem(DEVICE_KEY, id);
    }
    return id;
  }

  function stored() {
    try {
      const session = JSON.parse(localStorage.getItem(SESSION_KEY) || "null");
      if (session && session.token && session.expires * 1000 > Date.now() + 60000) return session;
    } catch (_) {
      /* a damaged entry: sign in again */
    }
    return null;
  }

  let pending = null;
  function signIn(fresh) {
    const known = fresh ? null : stored();
    if (known) return Promise.resolve(known);
    if (localStorage.getItem(UPGRADED_KEY)) return Promise.resolve(null);
    if (!pending) {
      pending = original(GUEST_PATH, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ device: device() }),
      })
        .then((reply) => {
          if (reply.status === 409) localStorage.setItem(UPGRADED_KEY, "1"); // sign in with the password
          return reply.ok ? reply.json() : null;
        })
        .catch(() => null)
        .then((session) => {
          pending = null;
          if (session) localStorage.setItem(SESSION_KEY, JSON.stringify(session));
          return session;
        });
    }
    return pending;
  }

  function ownPath(input) {
    const url = new URL(typeof input === "string" ? input : input.url, location.href);
    return url.origin === location.origin ? url.pathname : null;
  }

  function withSession(input, init, session) {
    const options = { ...(init || {}) };
    const headers = new Headers(options.headers || (typeof input === "string" ? undefined : input.headers));
    if (session) headers.set("X-Player-Token", session.token);
    options.headers = headers;
    return options;
  }

  window.fetch = async (input, init) => {
    const path = ownPath(input);
    if (path === null || path === GUEST_PATH) return original(input, init);
    const session = await signIn(false);
    let reply = await original(input, withSession(input, init, session));
    if (reply.status === 401 && session) {
      const body = await reply.clone().json().catch(() => null);
      if (body && body.error && body.error.code === "session_expired") {
        localStorage.removeItem(SESSION_KEY);
        reply = await original(input, withSession(input, init, await signIn(true)));
      }
    }
    return reply;
  };

  // For scripts and tests: the player this browser is signed in as; `use` keeps a session
  // got by signing in with a password (the account page), `forget` drops it (signing out).
  window.CultistsPlayer = {
    signIn: () => signIn(false),
    use: (session) => localStorage.setItem(SESSION_KEY, JSON.stringify(session)),
    forget: () => localStorage.removeItem(SESSION_KEY),
  };
  signIn(false);
})();
