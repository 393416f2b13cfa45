"""Tricky Cultists told to its players: the rulebook's words for the How-to-play page, the
card faces, the table's tips and the guided first turn (see core/guide.py).

Agenda points are TK-3's, suit abilities TK-7's. A cult card reaches the page as an object
(`{"id", "suit", "rank", "value", "name"}`), so its face is made from that object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.guide import Colours, Face, Guide, Option, Section
from .cards import AGENDAS, SUIT_NAMES

ABILITY = {
    "Red": "set the trump suit to any suit (once there is a trump it can change, never go)",
    "Green": "take one card from the Codex into the hand",
    "Blue": "swap a card in the hand with one in the Codex",
    "Purple": "give one Suspicion to any player (self included; this one is a must)",
}
AGENDA_TEXT = {
    "Lead First Trick": "You lead the first trick and take 1 Suspicion at once. Always met: +1 VP.",
    "Choose Bonus Suit": "You choose the Round Bonus suit. Win at least one trick of that suit: +1 VP, else -1.",
    "Win Most Tricks": "Win strictly the most tricks this round: +3 VP, else -2.",
    "Win No Tricks": "Win no trick at all: +2 VP and steal one trick from an opponent; else -2.",
    "Win Last Trick": "Win the round's final trick: +2 VP, else -1.",
    "Win Exactly Three": "Win exactly 3 tricks: +3 VP, else -1.",
    "Trigger Most Abilities": "Trigger strictly the most suit abilities: +2 VP, else -1.",
    "Clean Hands": "Hold strictly the fewest Suspicion at scoring: +2 VP, else -1.",
}
assert set(AGENDA_TEXT) == set(AGENDAS)


def _suit_text(suit: str) -> str:
    return (
        f"{suit} suit, ranks 1-13 (13 is high). Lower cards are worth more points: value (14 - rank) / 2, "
        f"rounded down. {suit} led: the second-highest {suit} card's player may {ABILITY[suit]}."
    )


FACES = (
    *(Face(s, f"{s} 1-13", f"{s} suit", s.lower(), _suit_text(s), "", "13", s[0]) for s in SUIT_NAMES),
    *(Face(a, a, "Agenda", "agenda", AGENDA_TEXT[a], "", "1", "A") for a in AGENDAS),
    Face("Suspicion", "Suspicion", "Suspicion card", "token",
         "Worth -1 VP at scoring, unless you hold strictly the most: then you discard it all first.", "-1", "", "S"),
    Face("Round Bonus", "Round Bonus", "Round Bonus card", "token",
         "Shows the bonus suit: each trick won in that suit is worth +1 point at scoring.", "+1", "4", "B"),
    Face("Trump", "Trump", "Trump card", "token",
         "Shows the trump suit: the highest trump played wins the trick. No trump at a round's start.", "", "4", "T"),
)  # fmt: skip


def face_of_card(card: Mapping[str, Any]) -> Face:
    """A cult card as a view carries it: its suit's colours, rank, value and ability."""
    suit = str(card.get("suit", ""))
    value = int(card.get("value", 0) or 0)  # the points the card is worth on top of a trick
    text = f"{suit} led: the second-highest {suit} card may {ABILITY.get(suit, 'do nothing')}."
    return Face(
        str(card.get("id", "")), str(card.get("name", "")), f"{suit} suit", suit.lower() or "plain", text,
        str(value), "", str(card.get("rank", "")),
    )  # fmt: skip


SCHEME = {
    "blue": Colours(fill="#e3ecff", edge="#2b5cd6", ink="#0b1f4f", band="#2b5cd6"),
    "red": Colours(fill="#ffe5e5", edge="#c62828", ink="#4a0b0b", band="#b71c1c"),
    "green": Colours(fill="#e2f6e4", edge="#2e7d32", ink="#0c2e10", band="#2e7d32"),
    "purple": Colours(fill="#f3e3ff", edge="#7b1fa2", ink="#2e0a40", band="#7b1fa2"),
    "agenda": Colours(fill="#f5f1e6", edge="#7d6a3a", ink="#2b2410", band="#5d4e26"),
    "token": Colours(fill="#f0f0f0", edge="#666666", ink="#1d1a24", band="#444444"),
    "plain": Colours(fill="#ffffff", edge="#888888", ink="#1d1a24", band="#555555"),
    "back": Colours(fill="#14324a", edge="#07141f", ink="#e9d9a6", band="#1f4f73"),
}

OPTIONS = (
    Option("Shorter game", "Fewer than four rounds are played (each round has its own Start Player).",
           lambda config: int(config.get("rounds", 4)) < 4),
)  # fmt: skip

TIPS = {
    **{a: AGENDA_TEXT[a] for a in AGENDAS},
    **{s: f"{s} led: the second-highest {s} card's player may {ABILITY[s]}." for s in SUIT_NAMES},
    "suspicion": "Suspicion: -1 VP each at scoring, unless this player holds strictly the most (then it is "
    "discarded). Suspicion left carries into the next round.",
    "score": "This player's points so far (agendas, tricks, bonus, Suspicion).",
    "team": "Partners sit opposite: seats 0 and 2 against seats 1 and 3. Team points are added together.",
    "trump": "Trump suit: the highest trump played wins the trick. A Red ability sets it.",
    "bonus_suit": "Round Bonus suit: +1 point for each trick won in that suit.",
    "codex": "Codex: 3 face-down cards only you may look at. Green and Blue abilities use it.",
    "tricks": "Tricks won this round: each is worth the value of its top (winning) card.",
    "agenda": "This player's agenda: secret while drafting, revealed when every agenda is taken.",
    "hand": "Cards in this player's hand (hidden).",
    "round": "Round played / rounds in the game; each player is Start Player once.",
    "abilities": "Suit abilities this player has triggered this round (Trigger Most Abilities counts them).",
}


def coach(view: Mapping[str, Any], seat: int) -> tuple[str, str] | None:
    """The first turn, explained: what this seat should do now and why."""
    if view.get("actor") != seat:
        return None
    phase = view.get("phase")
    if phase == "draft":
        return (
            "Keep one agenda, or decline it and take a Suspicion.",
            "An agenda met at the round's end scores its points, a failed one loses points. With many high "
            "cards, Win Most Tricks pays well; with low ones, Win No Tricks.",
        )
    if phase == "bonus":
        return (
            "Choose the Round Bonus suit.",
            "Pick the suit you hold most of: each trick of it won is +1 point.",
        )
    if phase == "play":
        trick = view.get("trick") or []
        if not trick:
            return (
                "Lead a card: its suit is the led suit.",
                "The highest card of the led suit wins unless a trump is played. Low cards are worth more "
                "points, high cards win tricks.",
            )
        led = trick[0].get("suit", "")
        return (
            f"Follow suit: play a {led} card if you have one.",
            f"You must follow the led suit when you can. The second-highest {led} card triggers {led}'s "
            "ability, so a near-miss is worth something too.",
        )
    if phase in ("red", "green", "blue", "purple"):
        suit = phase.capitalize()
        return (
            f"Use the {suit} ability.",
            f"You played the second-highest {suit} card: you may {ABILITY[suit]}.",
        )
    if phase == "steal":
        return (
            "Steal a trick from an opponent.",
            "Win No Tricks succeeded: take the opponents' most valuable trick.",
        )
    return None


GUIDE = Guide(
    game="tricky_cultists",
    title="Tricky Cultists",
    players="4 players in two partnerships",
    goal="Score more points than the other team over four rounds. Partners sit opposite (seats 0 and 2 "
    "against 1 and 3) and add their points together. Points come from the tricks you win (lower cards "
    "are worth more), your secret agenda, the Round Bonus suit and Suspicion (-1 each).",
    setup=(
        "Each round everyone is dealt 10 cards in hand and 3 face down as their Codex (only you may look at yours).",
        "Draft agendas: the Start Player gets 5 agenda cards, keeps one (or declines it and takes a Suspicion) "
        "and passes the rest left, until everyone has chosen. Agendas are revealed together.",
        "Lead First Trick leads the first trick (else the Start Player does); Choose Bonus Suit picks the "
        "Round Bonus suit.",
    ),
    turn=(
        "The leader plays a card; its suit is the led suit. Each player in turn must follow the led suit if "
        "able, else may play any card.",
        "The highest card of the led suit wins, unless trump was played: then the highest trump wins. There "
        "is no trump at the start of a round.",
        "The player of the second-highest led-suit card triggers that suit's ability (the leader, if nobody "
        "followed): Red sets trump, Green takes a Codex card, Blue swaps a hand card with a Codex card, "
        "Purple gives a Suspicion.",
        "The winner leads the next trick. The round ends after the trick in which someone plays their last card.",
    ),
    faces=FACES,
    scheme=SCHEME,
    options=OPTIONS,
    sections=(
        Section(
            "Scoring a round",
            (
                "1. Agendas: met ones score, failed ones lose points; a tie resolves nothing. Win No Tricks steals a trick.",
                "2. Tricks: each trick is worth the value of its top (winning) card.",
                "3. Round Bonus: +1 per trick won in the bonus suit.",
                "4. The player with strictly the most Suspicion discards all of it.",
                "5. Everyone loses 1 point per Suspicion still held; it carries into the next round.",
            ),
        ),
        Section(
            "Card values",
            tuple(
                f"Rank {r}: {(14 - r) // 2} point{'' if (14 - r) // 2 == 1 else 's'}" for r in range(1, 14)
            ),
        ),
    ),
    tips=TIPS,
    coach=coach,
    back_mark="TK",
    face_of_object=face_of_card,
)
