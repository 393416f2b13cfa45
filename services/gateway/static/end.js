// The end screen's Rematch (issue 31): a new table of the same game, config, bots and
// seconds per decision, the player sat at the same seat (or the first human one).
"use strict";

(() => {
  document.addEventListener("click", async (ev) => {
    const button = ev.target.closest("[data-testid=rematch]");
    if (!button || button.disabled) return;
    button.disabled = true;
    const was = JSON.parse(button.dataset.rematch);
    try {
      const table = await Cultists.api("POST", "/api/tables", {
        game: was.game,
        seats: was.seats,
        config: was.config,
        decision_seconds: was.decision_seconds,
      });
      const humans = was.seats.map((s, i) => (s.kind === "human" ? i : -1)).filter((i) => i >= 0);
      const seat = humans.includes(was.seat) ? was.seat : humans[0];
      if (seat === undefined) {
        location.href = Cultists.tablePath(table.table);
        return;
      }
      await Cultists.join(table.table, seat);
      location.href = Cultists.tablePath(table.table, seat);
    } catch (err) {
      button.disabled = false;
      button.textContent = `Rematch (${err.message})`;
    }
  });
})();
