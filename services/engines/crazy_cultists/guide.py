"""Crazy Cultists told to its players: the rulebook's words for the How-to-play page, the
card faces, the table's tips and the guided first turn (see core/guide.py).

The card texts are the rulebook's (Dark Powers read from the player's side, CC-10); where
the rulings decide what the book leaves open (CC-5 targets, CC-7 Counter-Spell chains) the
words say what the engine does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.guide import Colours, Face, Guide, Option, Section
from .cards import NAMES, TITLES

_DARK = "Dark Powers"
# Every card in the rulebook's order, with its deck count (CC-1, CC-10).
_CARDS: tuple[tuple[str, str, str, str, str], ...] = (
    # key, type, family, count, text
    ("favor_1", "Favor", "favor", "15", "Add this card to your Favor Stack: 1 Favor Point."),
    ("favor_2", "Favor", "favor", "15", "Add this card to your Favor Stack: 2 Favor Points."),
    ("favor_3", "Favor", "favor", "15", "Add this card to your Favor Stack: 3 Favor Points."),
    ("favor_4", "Favor", "favor", "15", "Add this card to your Favor Stack: 4 Favor Points."),
    ("fall_from_grace", "Hijinx", "hijinx", "4", "Discard the most recent card played in your Favor Stack."),
    ("polymorphization", "Hijinx", "hijinx", "3", "Skip your next turn. Discard after your turn is skipped."),
    ("infernal_inferno", "Hijinx", "hijinx", "3", "Discard the 2 most recent cards played in your Favor Stack."),
    ("toiling_trouble", "Hijinx", "hijinx", "3",
     "Discard 2 cards of the same value from your Favor Stack. You pick the pair."),
    ("hex_o_rama", "Hijinx", "hijinx", "3", "Discard the 3 most recent cards played in your Favor Stack."),
    ("evil_eye", "Hijinx", "hijinx", "3",
     "Show your hand to the player that dealt you this card. They may take a card from it."),
    ("beelze_beatdown", "Hijinx", "hijinx", "2", "Discard your entire Favor Stack."),
    ("nerdronomicon", "Hijinx", "hijinx", "3",
     "Look at the top 3 cards of the deck. Put 1 in your hand, return the other 2 on top in any order."),
    ("counter_spell", "Hijinx", "counter", "4",
     "Negate the effects of a single Hijinx card. Can be played at any time, even off your turn."),
    ("switcheroo", "Hijinx", "hijinx", "2",
     "Trade the last card played in your Favor Stack with that of the player that dealt you this card."),
    ("dark_favor_4", _DARK, "dark", "2", "Add this card to your Favor Stack for a mega boost: 4 Favor Points."),
    ("life_siphon", _DARK, "dark", "1", "Take the last card played in another player's Favor Stack onto your own."),
    ("black_spire", _DARK, "dark", "1",
     "Target player must stack 3 or more Favor Points on this card before resuming their own Favor Stack."),
    ("necromancy", _DARK, "dark", "1", "Search the main deck's discard pile and put any 1 card into your hand."),
    ("dark_baptism", _DARK, "dark", "1",
     "Until your next turn no Hijinx card may target you. Immediately take another turn."),
    ("ouija", _DARK, "dark", "1",
     "Target player shows you their hand. Swap hands with them, or make them discard their hand."),
    ("fear_the_reaper", _DARK, "dark", "1", "All other players discard their hands."),
    ("puppet_master", _DARK, "dark", "1", "All players give their hands to the player on their right."),
    ("forbidden_alchemy", _DARK, "dark", "1", "Draw 3 cards. Return any 2 cards from your hand to the top of the deck."),
    ("scrying_bones", _DARK, "dark", "1", "Search the main deck for a card. Show it to everyone, then add it to your hand."),
    ("hail_yourself", _DARK, "dark", "1",
     "All other players reveal their hands. Take 1 card from any of them into your hand."),
    ("voodoo", _DARK, "dark", "1",
     "Discard any cards from your hand (this one included). The target removes as many from their Favor Stack."),
    ("heavy_metal", _DARK, "dark", "1", "Discard the last card played in every other player's Favor Stack."),
)  # fmt: skip

_TITLE = dict(zip(NAMES, TITLES, strict=True))
_VALUE = {"favor_1": "1", "favor_2": "2", "favor_3": "3", "favor_4": "4", "dark_favor_4": "4"}


def _glyph(key: str, kind: str) -> str:
    if key in _VALUE:
        return _VALUE[key]
    return "CS" if key == "counter_spell" else ("DP" if kind == _DARK else "HX")


FACES = tuple(
    Face(key, _TITLE[key], kind, family, text, _VALUE.get(key, ""), count, _glyph(key, kind))
    for key, kind, family, count, text in _CARDS
)

SCHEME = {
    "favor": Colours(fill="#fff6dc", edge="#b8901c", ink="#3d2f00", band="#8a6500"),
    "hijinx": Colours(fill="#f6ecff", edge="#7a43a8", ink="#2a1040", band="#6a2c91"),
    "counter": Colours(fill="#e6f1fd", edge="#2f6db0", ink="#0d2a4a", band="#1f5a99"),
    "dark": Colours(fill="#2b2433", edge="#000000", ink="#f2e9ff", band="#5a1010"),
    "plain": Colours(fill="#ffffff", edge="#888888", ink="#1d1a24", band="#555555"),
    "back": Colours(fill="#3a1450", edge="#1a0826", ink="#f7c948", band="#6a2c91"),
}


def _variant(name: str):
    return lambda config: config.get("variant") == name


OPTIONS = (
    Option("Devilish Mode", "Once anyone earns a candle, everyone discards their Favor Stack and starts again.",
           _variant("devilish")),
    Option("Fiendish Mode", "You must hit the Favor Points needed exactly; going over discards your whole stack.",
           _variant("fiendish")),
    Option("Beast Mode", "A candle needs only 6 Favor Points, and the first to 3 candles wins.", _variant("beast")),
    Option("Dark Powers expansion", "When you earn a candle you may draw the top Dark Powers card instead of your "
           "next main-deck card. Dark Powers read from your side and go to their own discard pile.",
           lambda config: bool(config.get("dark_powers"))),
    Option("Dark Powers' optional setup", "The main deck loses 2 Fall From Grace, 1 Infernal Inferno, 1 Hex-O-Rama, "
           "1 Evil Eye and 1 Counter-Spell.", lambda config: bool(config.get("optional_setup"))),
    Option("Two players", "A two-player table (the book says 3-6; allowed here as a variant).",
           lambda config: bool(config.get("two_players"))),
)  # fmt: skip

TIPS = {
    "stack": "Favor Stack: the Favor Points you have stacked / the points you need for your next candle "
    "(10 minus the candles you hold). Reach it and the stack is discarded for a candle.",
    "candles": "Candles lit on this player's pentagram. Light them all to summon The Dark One and win.",
    "hand": "Cards in this player's hand (hidden). Nobody holds more than 3.",
    "deck": "Cards left in the main deck. When it runs out the discard pile is shuffled into a new deck.",
    "dark_deck": "Cards left in the Dark Powers deck: drawn instead of a main-deck card when you earn a candle.",
    "discard": "The main discard pile, face up: every card played or discarded so far.",
    "turn": "Turns played so far.",
    "variant": "The rules variant this table plays (see How to play).",
    "candles_to_win": "Candles needed to win.",
    "polymorphed": "Polymorphization: this player skips their next turn.",
    "spire": "Black Spire: this player's next Favor cards go here until they total 3 or more.",
    "baptized": "Dark Baptism: no Hijinx may target this player until their next turn.",
}


def coach(view: Mapping[str, Any], seat: int) -> tuple[str, str] | None:
    """The first turn, explained: what this seat should do now and why."""
    pending = view.get("pending") or {}
    if pending.get("kind"):
        if pending.get("seat") != seat:
            return None
        if pending["kind"] == "counter":
            return (
                "Answer with a Counter-Spell, or let the card happen.",
                "A Counter-Spell cancels the Hijinx just played. There are only 4 in the deck: "
                "keep yours for a card that would wreck a big stack.",
            )
        return (
            "Make the choice the card asks of you.",
            "The card played needs your decision before play goes on.",
        )
    if view.get("active") != seat or view.get("over"):
        return None
    me: dict[str, Any] = next((p for p in view.get("players", []) if p.get("seat") == seat), {})
    hand = [str(c) for c in view.get("hand", [])]
    total, need = me.get("stack_total", 0), me.get("need", 10)
    if any(c in _VALUE for c in hand):
        return (
            "Play a Favor card on your own Favor Stack.",
            f"Your stack holds {total} of the {need} Favor Points you need. When it reaches {need} "
            "it becomes a candle, and lighting every candle wins the game.",
        )
    if hand:
        return (
            "Play a Hijinx on the rival with the biggest stack.",
            "You hold no Favor card, so slow down whoever is closest to their next candle. "
            "You draw back up to 3 cards after you play.",
        )
    return None


GUIDE = Guide(
    game="crazy_cultists",
    title="Crazy Cultists",
    players="3-6 players",
    goal="Be the first to light all 5 candles on your pentagram. You earn a candle each time your "
    "Favor Stack reaches 10 Favor Points; every candle you hold lowers the next target by one "
    "(9 with one candle, 8 with two, and so on).",
    setup=(
        "Everyone gets a pentagram (shown as candles on the table) and 3 cards.",
        "The main deck is shuffled face down; seat 0 plays first, then play goes clockwise.",
    ),
    turn=(
        "Play exactly one card: a Favor card onto your own Favor Stack, or a Hijinx card at a rival.",
        "Then draw back up to 3 cards. Drawing ends your turn; nobody ever holds more than 3.",
        "If you cannot play any card, discard one instead.",
        "Favor cards are stacked in the order played and cannot be rearranged. When your stack reaches "
        "the points you need, it is discarded and you take a candle.",
        'Hijinx target another player; the card is read from the target\'s side ("you" is the target, '
        '"the player that dealt you this card" is whoever played it). A Hijinx that would do nothing '
        "cannot be played on that player.",
    ),
    faces=FACES,
    scheme=SCHEME,
    options=OPTIONS,
    sections=(
        Section(
            "Counter-Spells",
            (
                "After any Hijinx or Dark Power is played, every other player in turn may answer with a "
                "Counter-Spell. A Counter-Spell can itself be countered, by anyone, without limit: an odd "
                "number of Counter-Spells cancels the card.",
                "Afterwards everyone draws back up to 3 cards.",
            ),
        ),
        Section("When the deck runs out", ("Shuffle the discard pile into a new deck and keep playing.",)),
    ),
    tips=TIPS,
    coach=coach,
    back_mark="CC",
)
