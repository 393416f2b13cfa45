"""Issue 31, items 1 and 3: a newcomer learns the game in the page, and the cards look like
cards. Real Chromium against the real gateway (real Redis, engines and Celery worker).

- How to play, per game, opened from the lobby and from a table: goal, setup, a turn,
  every card of the engine's own card list described, and the table's variant marked;
- everything on the table explains itself: every card and counter carries its words, and
  the tooltip is reached with the keyboard (Tab) and named to screen readers;
- the guided first game against bots: what to do now and why, until dismissed;
- card faces are SVG pictures naming the card, opponents' hands and decks are backs;
- on a phone (390x844) the actions are a bottom sheet and the board is in view.

Screenshots of each game mid-play, desktop and phone, go to docs/images/ (docs/web.md
shows them); they are rewritten on every run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from services.engines.crazy_cultists.cards import TITLES as CRAZY_TITLES
from services.engines.registry import load_game
from services.engines.trash_cult.cards import KIND_NAMES as TRASH_CARDS
from services.engines.tricky_cultists.cards import AGENDAS, SUIT_NAMES

from .conftest import DESKTOP, PHONE
from .support import PANEL_MOVED, SHORT, open_table, wait_ready
from .test_enjoy import axe_violations

GAMES = ("crazy_cultists", "trash_cult", "tricky_cultists")
BOTS3 = ["human", "bot:heuristic", "bot:heuristic", "bot:heuristic"]
DOC_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
# Every card each engine deals, by the names its rulebook prints (the engines' own lists,
# so a card added to a game without words fails here).
EVERY_CARD = {
    "crazy_cultists": list(CRAZY_TITLES),
    "trash_cult": list(TRASH_CARDS),
    "tricky_cultists": [*SUIT_NAMES, *AGENDAS],
}
# What the short configs of support.SHORT put in force, as How to play names it.
IN_FORCE = {"crazy_cultists": "Beast Mode", "trash_cult": None, "tricky_cultists": "Shorter game"}
CHANGED = {"crazy_cultists": "variant", "trash_cult": "food_needed_4p", "tricky_cultists": "rounds"}
NO_COACH = {"cultists:pace": "0", "cultists:auto-pass": "0", **{f"cultists:coached:{g}": "1" for g in GAMES}}


def play_moves(page, moves: int) -> None:
    """Click the first legal action `moves` times (or until the game ends)."""
    for _ in range(moves):
        facts = wait_ready(page)
        if facts["terminal"]:
            return
        page.locator("[data-testid=panel] button[data-action]:not([disabled])").first.click()
        page.wait_for_function(PANEL_MOVED, arg=str(facts["version"]), timeout=60_000)
    wait_ready(page)


@pytest.mark.parametrize("game", GAMES)
def test_how_to_play_from_the_lobby_and_a_table(new_context, game):
    page = new_context(settings=NO_COACH).new_page()
    page.goto("/")
    page.get_by_test_id(f"how-to-play-{game}").click()
    page.wait_for_url(f"**/games/{game}/how-to-play")
    for part in ("rules-goal", "rules-setup", "rules-turn", "rules-cards", "rules-options"):
        assert len(page.get_by_test_id(part).inner_text()) > 40, part
    described = page.locator("[data-testid=rule-card]")
    titles = described.locator("h3").all_inner_texts()
    for name in EVERY_CARD[game]:
        assert any(name in t for t in titles), f"{name} is not described"
    for text in described.locator("p:not(.muted)").all_inner_texts():
        assert len(text) > 15, text  # every card with its effect, not a bare name
    # Every face on the page is a loaded SVG picture.
    assert page.evaluate(
        "() => [...document.querySelectorAll('[data-testid=rule-card] img.face')]"
        ".every(i => i.complete && i.naturalWidth > 0 && i.src.includes('.svg'))"
    )
    assert page.get_by_test_id("rules-table").count() == 0  # no table: nothing marked
    assert axe_violations(page) == []

    open_table(page, game, BOTS3, SHORT[game], seed=7)
    wait_ready(page)
    page.get_by_test_id("how-to-play").click()
    page.wait_for_url(f"**/games/{game}/how-to-play?table=*")
    assert page.get_by_test_id("rules-table").is_visible()
    marked = page.locator("[data-testid=rule-option][data-on='1']").all_inner_texts()
    if IN_FORCE[game]:
        assert any(IN_FORCE[game] in m for m in marked), marked
    off = page.locator("[data-testid=rule-option][data-on='0']").count()
    assert off >= (3 if game == "crazy_cultists" else 0)  # the variants not played are marked off
    assert CHANGED[game] in page.get_by_test_id("rules-changed").inner_text()
    page.get_by_test_id("back-to-table").click()
    page.wait_for_url("**/tables/*")
    wait_ready(page)


def focus_by_tab(page, selector: str, presses: int = 250) -> dict:
    """Press Tab until the focused element matches `selector`; what it and its tip say."""
    page.locator("body").focus()
    for _ in range(presses):
        page.keyboard.press("Tab")
        found = page.evaluate(
            """(sel) => {
              const el = document.activeElement;
              if (!el || !el.matches(sel)) return null;
              const tip = document.getElementById('focus-tip');
              return {tip: el.dataset.tip || el.dataset.text, described: el.getAttribute('aria-describedby'),
                      shown: !!tip && !tip.hidden, words: tip ? tip.textContent : ''};
            }""",
            selector,
        )
        if found:
            return found
    raise AssertionError(f"Tab never reached {selector}")


@pytest.mark.parametrize("game", GAMES)
def test_everything_on_the_table_explains_itself(new_context, game):
    page = new_context(settings=NO_COACH).new_page()
    open_table(page, game, BOTS3, SHORT[game], seed=3)
    play_moves(page, 2)  # past the first decisions: cults picked, agendas drafted
    board = page.get_by_test_id("board")
    # Every card on the table and in the hand has its words; every counter named below too.
    untold = page.eval_on_selector_all(
        "[data-testid=panel] .card.faced", "els => els.filter(e => !(e.dataset.text || '').trim()).length"
    )
    assert untold == 0
    counters = {
        "crazy_cultists": ["stack-count-0", "stack-count-1", "candles-1", "deck-pile"],
        "trash_cult": ["shrine-count-0", "cult-tip-0", "deck-pile", "chaos-deck-pile"],
        "tricky_cultists": ["suspicion-tip-0", "team-score-0", "agenda-tip-1"],
    }[game]
    for testid in counters:
        assert len(board.get_by_test_id(testid).get_attribute("data-tip") or "") > 15, testid
    if game == "trash_cult":  # the cult chip says what the cult worships and its perk
        assert "worships" in board.get_by_test_id("cult-tip-0").get_attribute("data-tip")
    if game == "tricky_cultists":  # an agenda names its points
        tip = board.get_by_test_id("agenda-tip-1").get_attribute("data-tip")
        assert "VP" in tip or "secret" in tip, tip
    # The keyboard reaches them: Tab to a counter, then to a card on the board.
    counter = focus_by_tab(page, "[data-testid=board] [data-tip]")
    assert counter["shown"] and counter["words"] == counter["tip"] and counter["described"] == "focus-tip"
    card = focus_by_tab(page, "[data-testid=panel] .card[data-text]:not(.playable)")
    assert card["shown"] and card["tip"] in card["words"] and card["described"] == "focus-tip"
    page.keyboard.press("Escape")
    assert page.get_by_test_id("tip").is_hidden()


@pytest.mark.parametrize("game", GAMES)
def test_card_faces_backs_and_the_phone_board(new_context, game):
    page = new_context(settings=NO_COACH).new_page()
    open_table(page, game, BOTS3, SHORT[game], seed=5)
    play_moves(page, 3)
    hand = page.locator("[data-testid=hand] .card.faced")
    assert hand.count() >= 1
    first = hand.first
    name = first.locator(".card-name").inner_text().strip()
    src = first.locator("img.face").get_attribute("src")
    svg = page.request.get(src)
    assert svg.ok and svg.headers["content-type"].startswith("image/svg+xml")
    body = svg.text()
    assert body.startswith("<svg") and f"<title>{name.split(' ')[0]}" in body.replace("&#x27;", "'")
    assert "http" not in body.replace("http://www.w3.org/2000/svg", "")  # no external asset
    assert page.evaluate(
        "() => [...document.querySelectorAll('[data-testid=panel] img.face, [data-testid=panel] img.back')]"
        ".every(i => i.complete && i.naturalWidth > 0)"
    )
    # The hand is fanned (the cards turn), opponents' hands are backs, as many as they hold.
    angles = hand.evaluate_all("els => els.map(e => getComputedStyle(e).getPropertyValue('--fan-a').trim())")
    if len(angles) > 1:
        assert len(set(angles)) > 1, angles
    for seat in (1, 2, 3):
        held = int(page.get_by_test_id(f"hand-size-{seat}").inner_text())
        backs = page.get_by_test_id(f"backs-{seat}")
        assert int(backs.get_attribute("data-count")) == held
        assert backs.locator("img.back").count() == min(held, 8)
    assert page.get_by_test_id("backs-0").count() == 0  # your own hand is face up, in the hand
    back = page.request.get(page.locator("img.back").first.get_attribute("src"))
    assert back.ok and "card back" in back.text()

    # On the phone: the actions are a sheet at the bottom, hand and board above it.
    phone = new_context(viewport=PHONE, settings=NO_COACH).new_page()
    open_table(phone, game, BOTS3, SHORT[game], seed=6)
    play_moves(phone, 2)  # past Trash Cult's cult pick: the cards are dealt
    rects = None
    for _ in range(10):  # measured in one go, on a settled panel (bots may still be moving)
        wait_ready(phone)
        rects = phone.evaluate(
            """() => {
              const r = (id) => { const e = document.querySelector(`[data-testid=panel] [data-testid=${id}]`);
                                  if (!e) return null; const b = e.getBoundingClientRect();
                                  return {y: b.top, height: b.height, bottom: b.bottom}; };
              return {sheet: r('actions'), board: r('board'), hand: r('private')};
            }"""
        )
        if rects["sheet"] and rects["sheet"]["height"] > 0:
            break
    box, board, hand_box = rects["sheet"], rects["board"], rects["hand"]
    assert box["bottom"] <= PHONE["height"] + 1  # the sheet sits at the bottom
    assert box["height"] <= PHONE["height"] * 0.31
    assert hand_box["y"] < box["y"], "the hand is above the sheet"
    assert board["y"] + 100 < box["y"], f"the board starts at {board['y']}, the sheet at {box['y']}"
    buttons = phone.get_by_test_id("actions").locator("button[data-action]")
    assert buttons.count() >= 1 and buttons.first.is_visible()
    edges = phone.locator("[data-testid=hand] .card.faced").evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.left, r.right]; })"
    )
    assert edges, "a hand is shown"
    assert min(a for a, _ in edges) >= 0, edges  # the whole hand fits the phone
    assert max(b for _, b in edges) <= PHONE["width"], edges


def test_the_first_game_against_bots_is_guided(new_context):
    """Trash Cult's first decision is the cult: the coach says which and why; dismissed, it
    stays away (and a finished game counts as the first one)."""
    context = new_context(settings={"cultists:pace": "0", "cultists:auto-pass": "0"})
    page = context.new_page()
    open_table(page, "trash_cult", BOTS3, SHORT["trash_cult"], seed=2)
    wait_ready(page)
    coach = page.get_by_test_id("coach")
    coach.wait_for(state="visible")
    assert "Pick a cult" in page.get_by_test_id("coach-what").inner_text()
    assert "Shrine" in page.get_by_test_id("coach-why").inner_text()
    assert axe_violations(page) == []  # the coach, the faces and the tips included
    for cult, food in (("Raccoon", "Pizza"), ("Skunk", "Pie"), ("Squirrel", "Cookie"), ("Rat", "Donut")):
        tip = page.get_by_test_id(f"cult-choice-{cult}").get_attribute("data-tip")
        assert food in tip and "perk" in tip, tip  # each cult on offer says what it worships and does
    play_moves(page, 1)
    coach.wait_for(state="visible")
    what = page.get_by_test_id("coach-what").inner_text()
    assert what and "Pick a cult" not in what  # the advice follows the decision
    page.get_by_test_id("coach-done").click()
    assert coach.is_hidden()
    play_moves(page, 1)
    assert page.get_by_test_id("coach").is_hidden()
    page.reload()
    wait_ready(page)
    assert page.get_by_test_id("coach").is_hidden()
    # Another title is still a first game.
    open_table(page, "crazy_cultists", BOTS3, SHORT["crazy_cultists"], seed=2)
    wait_ready(page)
    page.get_by_test_id("coach").wait_for(state="visible")


@pytest.mark.parametrize("game", GAMES)
def test_screenshots_mid_play_for_the_docs(new_context, screenshots, game):
    """docs/web.md shows each game mid-play at 1280x800 and 390x844, from these shots (and
    its How to play page goes to artifacts/screenshots/ for a person to look at)."""
    DOC_IMAGES.mkdir(parents=True, exist_ok=True)
    rules = new_context(settings=NO_COACH).new_page()
    rules.goto(f"/games/{game}/how-to-play")
    rules.wait_for_function("() => [...document.images].every(i => i.complete)")
    rules.screenshot(path=str(screenshots / f"learn-how-to-play-{game}.png"))
    for size, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page = new_context(viewport=viewport, settings=NO_COACH).new_page()
        open_table(page, game, BOTS3, SHORT[game], seed=9)
        play_moves(page, 4)
        page.mouse.move(0, 0)
        page.wait_for_function("() => [...document.images].every(i => i.complete)")
        page.screenshot(path=str(DOC_IMAGES / f"web-{game}-{size}.png"))
    assert load_game(game).presentation.guide.title  # the guide the pictures are drawn from
