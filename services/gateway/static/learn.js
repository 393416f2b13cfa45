// Learning in the page (issue 31): every card, cult, agenda and counter explains itself on
// keyboard focus and on tap (hover has its `title`), the hand is laid out as a fan, and the
// first game of a title against bots shows the guided turn (templates/coach.html).
//
// The words are the server's (each game's guide, rendered into `data-tip` / `data-text`);
// this file only shows them. It follows the panel as table.js swaps it in (table.js's
// `cultists:panel-shown` event, sent before a move's pace starts counting, so laying out
// the fan never eats into the time a bot's move stays up) and as replay.js swaps its panel
// in (a MutationObserver). No inline styles: positions and the fan's angles are set through
// the CSSOM, which the CSP allows.
"use strict";

(() => {
  const TIPPED = "[data-tip], .card[data-text]";
  const COACHED = (game) => `cultists:coached:${game}`;

  // -- tooltips on focus and tap ------------------------------------------------------------
  let tip = null;
  let owner = null;

  function tipBox() {
    if (!tip) {
      tip = document.createElement("div");
      tip.id = "focus-tip";
      tip.className = "card-tip focus-tip";
      tip.setAttribute("role", "tooltip");
      tip.dataset.testid = "tip";
      tip.hidden = true;
      document.body.append(tip);
    }
    return tip;
  }

  function words(el) {
    if (el.dataset.tip) return el.dataset.tip;
    const name = el.querySelector(".card-name") || el.firstChild;
    const title = name ? name.textContent.trim() : "";
    return title ? `${title}: ${el.dataset.text}` : el.dataset.text;
  }

  function show(el) {
    const box = tipBox();
    box.textContent = words(el);
    const at = el.getBoundingClientRect();
    box.hidden = false;
    const left = Math.max(4, Math.min(window.innerWidth - box.offsetWidth - 4, at.left + window.scrollX));
    box.style.left = `${left}px`;
    box.style.top = `${at.bottom + window.scrollY + 6}px`;
    if (owner && owner !== el) owner.removeAttribute("aria-describedby");
    owner = el;
    el.setAttribute("aria-describedby", box.id);
  }

  function hide() {
    if (tip) tip.hidden = true;
    if (owner) owner.removeAttribute("aria-describedby");
    owner = null;
  }

  // Shown on keyboard focus only (`:focus-visible`): the page itself moves focus to your first
  // playable card when your turn comes, and a tip popping up then would cover the board.
  document.addEventListener("focusin", (ev) => {
    const el = ev.target.closest && ev.target.closest(TIPPED);
    if (el && el.matches(":focus-visible")) show(el);
    else hide();
  });
  document.addEventListener("focusout", (ev) => {
    if (ev.target === owner) hide();
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") hide();
  });
  // A tap on a counter or token shows its words (cards have their own tap tip in table.js).
  document.addEventListener("click", (ev) => {
    const el = ev.target.closest && ev.target.closest("[data-tip]");
    if (el) show(el);
    else if (!ev.target.closest(".card")) hide();
  });

  // -- the hand as a fan ---------------------------------------------------------------------
  function fan(root) {
    for (const hand of root.querySelectorAll(".cards.look-fan")) {
      const cards = [...hand.querySelectorAll(":scope > .card")];
      const mid = (cards.length - 1) / 2;
      const step = cards.length > 7 ? 3 : 5;
      // Overlap the cards just enough for the whole hand to fit its box (a phone's width).
      const width = cards.length ? cards[0].offsetWidth : 0;
      const room = hand.clientWidth - 24;
      const overlap = cards.length > 1 ? Math.max(width * 0.3, (cards.length * width - room) / (cards.length - 1)) : 0;
      cards.forEach((card, i) => {
        const off = i - mid;
        card.style.setProperty("--fan-a", `${off * step}deg`);
        card.style.setProperty("--fan-y", `${Math.abs(off) * Math.abs(off) * 0.9}px`);
        card.style.setProperty("--fan-m", i ? `${-Math.min(overlap, width * 0.8)}px` : "0px");
      });
    }
  }

  // -- the guided first game -----------------------------------------------------------------
  function coach(root) {
    const panel = root.querySelector("[data-testid=panel]");
    if (!panel) return;
    const box = panel.querySelector("[data-testid=coach]");
    const game = (box && box.dataset.game) || document.querySelector("[data-game]")?.dataset.game;
    let done = false;
    try {
      done = localStorage.getItem(COACHED(game)) === "1";
      // A game of this title seen to its end from a seat: the next one is not a first game.
      if (panel.dataset.terminal === "1" && panel.dataset.past !== "1" && Number(panel.dataset.seat) >= 0) {
        localStorage.setItem(COACHED(game), "1");
      }
    } catch (e) {
      done = false;
    }
    if (box) box.hidden = done;
  }

  document.addEventListener("click", (ev) => {
    const button = ev.target.closest && ev.target.closest("[data-testid=coach-done]");
    if (!button) return;
    const box = button.closest("[data-testid=coach]");
    try {
      localStorage.setItem(COACHED(box.dataset.game), "1");
    } catch (e) {
      /* storage refused: the tips just stay */
    }
    box.hidden = true;
  });

  function refresh() {
    fan(document);
    coach(document);
  }

  document.addEventListener("cultists:panel-shown", refresh);
  const replayBox = document.querySelector("[data-testid=replay-panel-box]");
  if (replayBox) new MutationObserver(() => fan(replayBox)).observe(replayBox, { childList: true });
  window.addEventListener("resize", () => fan(document));
  refresh();
})();
