// The account page (issue 15): who this browser plays as, a guest's upgrade to a username
// and password, signing in with one on another device, renaming, signing out.
//
// Everything goes through the players API (services/gateway/players_api.py); guest.js
// adds the session header to each call and keeps the session in localStorage, so a
// session got here by signing in is the one every other page then plays with.
"use strict";

(() => {
  const byId = (id) => document.querySelector(`[data-testid=${id}]`);

  function showError(id, message) {
    const box = byId(id);
    box.textContent = message || "";
    box.hidden = !message;
  }

  async function call(method, path, body) {
    const reply = await fetch(path, {
      method,
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await reply.json().catch(() => ({}));
    if (!reply.ok) throw new Error((data.error && data.error.message) || `the gateway answered ${reply.status}`);
    return data;
  }

  function render(player) {
    const status = byId("account-status");
    byId("account-details").hidden = !player;
    byId("rename-box").hidden = !player;
    byId("upgrade-box").hidden = !player || player.kind !== "guest";
    if (!player) {
      status.textContent = "Not signed in. Sign in with your username below.";
      status.dataset.kind = "none";
      return;
    }
    status.dataset.kind = player.kind;
    status.textContent =
      player.kind === "guest"
        ? `You play as a guest of this browser.`
        : `Signed in as ${player.username}.`;
    byId("account-name").textContent = player.name;
    byId("account-player").textContent = player.player;
    byId("account-player").dataset.player = player.player;
    byId("rename-name").value = player.name;
  }

  async function refresh() {
    try {
      render(await call("GET", "/api/players/me"));
    } catch (_) {
      render(null);
    }
  }

  function fields(form) {
    return Object.fromEntries(new FormData(form).entries());
  }

  // Each form: its error line cleared, its request made, the answer shown or the error said.
  function onSubmit(name, send) {
    byId(`${name}-form`).addEventListener("submit", async (event) => {
      event.preventDefault();
      showError(`${name}-error`, "");
      try {
        await send(fields(event.target), event.target);
      } catch (err) {
        showError(`${name}-error`, err.message);
      }
    });
  }

  onSubmit("upgrade", async (body, form) => {
    // The guest's sessions end with the upgrade: keep the new one it answers with.
    const session = await call("POST", "/api/players/me/upgrade", body);
    window.CultistsPlayer.use(session);
    render(session);
    form.reset();
  });
  onSubmit("login", async (body, form) => {
    const session = await call("POST", "/api/sessions", body);
    window.CultistsPlayer.use(session);
    form.reset();
    render(session);
  });
  onSubmit("rename", async (body) => {
    render(await call("PATCH", "/api/players/me", body));
  });

  async function signOut(path) {
    await call("DELETE", path).catch(() => null);
    window.CultistsPlayer.forget();
    render(null);
  }
  byId("logout").addEventListener("click", () => signOut("/api/sessions/current"));
  byId("logout-all").addEventListener("click", () => signOut("/api/sessions"));

  refresh();
})();
