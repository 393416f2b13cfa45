"""Trash Cult told to its players: the rulebook's words for the How-to-play page, the card
faces, the table's tips and the guided first turn (see core/guide.py).

Card texts are the rulebook's; the chaos cards' effects are the rulings' (TC-11), the perks
TC-8's, since the book prints only their names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.guide import Colours, Face, Guide, Option, Section
from .cards import CULTS

FOOD_OF = {"Raccoon": "Pizza", "Skunk": "Pie", "Squirrel": "Cookie", "Rat": "Donut"}  # TC-2
_PERK = {
    "Raccoon": "steal your food of worship from an enemy's Stash into your Shrine",
    "Skunk": "steal a food from an enemy's Shrine into your Stash",
    "Squirrel": "dig through the active deck and take any card you need",
    "Rat": "summon one of your food of worship from the trash pile into your Shrine",
}
_GLYPH = {
    "Raccoon": "Rc", "Skunk": "Sk", "Squirrel": "Sq", "Rat": "Rt",
    "Pizza": "Pz", "Pie": "Pi", "Cookie": "Ck", "Donut": "Dn",
}  # fmt: skip


def _animal(cult: str) -> Face:
    text = (
        f"Animal. Recruit it as a Cult Member if you lead the {cult}s, else hold it as a Hostage. "
        f"{cult}s worship {FOOD_OF[cult]}. Snackrifice perk: {_PERK[cult]}."
    )
    return Face(cult, cult, "Animal", "animal", text, "", "7", _GLYPH[cult])


def _food(cult: str) -> Face:
    food = FOOD_OF[cult]
    text = (
        f"Food, worshipped by the {cult}s: into your Shrine if it is your food, else into your Stash. "
        f"Snackrifice 2 to {_PERK[cult]}."
    )
    return Face(food, food, "Food", "food", text, "", "10", _GLYPH[food])


_OTHERS = (
    ("Pigeon Thief", "Action", "action", "6",
     "Blindly snatch a card from an enemy's hand. You may play what you stole at once as a free action.", "PT"),
    ("Poison Their Punch", "Action", "action", "4",
     "An enemy loses all their Cult Members (natural and converted). Their Hostages are safe.", "PP"),
    ("Opossum Plushie", "Action", "action", "2",
     "Use any cult's Snackrifice perk without paying for it and without drawing chaos.", "OP"),
    ("Convert Hostage", "Action", "action", "9", "Turn one of your Hostages into a Cult Member.", "CH"),
    ("Protection Spell", "Defense", "answer", "3",
     "Play from your hand when someone plays Poison Their Punch or Snackrifices: the poison, or the perk, "
     "has no effect (the cost and the chaos still happen).", "PS"),
    ("Hide", "Defense", "answer", "4", "Play from your hand when a chaos card is drawn: you do not take part in it.",
     "Hd"),
    ("Hungry Bear", "Chaos", "chaos", "2", "Every player trashes 2 animals or 1 food.", "HB"),
    ("Rat Poison", "Chaos", "chaos", "2", "Every player trashes 1 animal or 2 food.", "RP"),
    ("Animal Control", "Chaos", "chaos", "2", "Every player trashes all their Hostages.", "AC"),
    ("Trashnado", "Chaos", "chaos", "2", "Every player trashes all the food in their Stash.", "Tn"),
    ("Garbage Trucks Broke Down", "Chaos", "chaos", "2", "Every player draws 2 cards.", "GT"),
    ("Lunar Eclipse", "Chaos", "chaos", "2", "Converted Cult Members turn back into Hostages.", "LE"),
    ("Trash Swap", "Chaos", "chaos", "2", "Every hand passes to the player on the left.", "TS"),
    ("Thunderstorm", "Chaos", "chaos", "2", "Every player trashes 1 food from their Shrine.", "Th"),
)  # fmt: skip

FACES = (
    *(_animal(c) for c in CULTS),
    *(_food(c) for c in CULTS),
    *(
        Face(name, name, kind, family, text, "", count, glyph)
        for name, kind, family, count, text, glyph in _OTHERS
    ),
)

SCHEME = {
    "animal": Colours(fill="#e9f6ec", edge="#3f7f50", ink="#112a18", band="#2e6b3e"),
    "food": Colours(fill="#fff1e0", edge="#c07a26", ink="#3a2105", band="#9a5a10"),
    "action": Colours(fill="#e8f0fe", edge="#4a6fb8", ink="#0e2148", band="#2f55a0"),
    "answer": Colours(fill="#fff8c4", edge="#a08a10", ink="#332b00", band="#6f5f00"),
    "chaos": Colours(fill="#fde8e8", edge="#b84a4a", ink="#3d0b0b", band="#9c2b2b"),
    "plain": Colours(fill="#ffffff", edge="#888888", ink="#1d1a24", band="#555555"),
    "back": Colours(fill="#27402b", edge="#0f1d11", ink="#f5e2a8", band="#3f6b45"),
}

OPTIONS = (
    Option("Cults dealt by the table", "Each seat's cult is fixed by the table, so there is no pick phase.",
           lambda config: bool(config.get("cults"))),
)  # fmt: skip

TIPS = {
    **{
        cult: f"The {cult} cult worships {FOOD_OF[cult]}. Its Snackrifice perk: {_PERK[cult]}."
        for cult in CULTS
    },
    "shrine": "Shrine: the food of worship this player has collected / the food needed to win.",
    "stash": "Stash: food of other cults. Snackrifice 2 of a kind to use that cult's perk.",
    "members": "Cult Members: your own animals (natural) and converted Hostages. You need at least one to win.",
    "hostages": "Hostages: other cults' animals. A Convert Hostage card turns one into a Cult Member.",
    "hand": "Cards in this player's hand (hidden).",
    "deck": "Cards left in the active deck. When it runs out the trash pile is shuffled into a new deck.",
    "chaos_deck": "Chaos cards left: one is drawn after every Snackrifice and hits the whole table.",
    "trash": "The trash pile, face up: discarded, played and trashed cards.",
    "chaos_discard": "Chaos cards already drawn.",
    "actions": "Actions left this turn: every turn has exactly two.",
    "food_needed": "Food of worship in your Shrine needed to win (with at least one Cult Member).",
    "turn": "Turns played so far.",
}


def coach(view: Mapping[str, Any], seat: int) -> tuple[str, str] | None:
    """The first turn, explained: what this seat should do now and why."""
    pending = view.get("pending") or {}
    hand = [str(c) for c in view.get("hand", [])]
    step = pending.get("step")
    if step:
        if pending.get("seat") != seat:
            return None
        if step == "cult":
            counts = {c: hand.count(c) + hand.count(FOOD_OF[c]) for c in CULTS}
            best = max(counts, key=lambda c: counts[c])
            return (
                f"Pick a cult: the {best}s look good for your hand.",
                "You win with enough of your cult's food in your Shrine and one Cult Member. Raccoons worship "
                f"Pizza, Skunks Pie, Squirrels Cookies, Rats Donuts; your hand holds {counts[best]} {best} or "
                f"{FOOD_OF[best]} card{'' if counts[best] == 1 else 's'}.",
            )
        if step == "protect":
            return (
                "Answer with a Protection Spell, or let it happen.",
                "A Protection Spell stops a poison or a perk aimed at the table; you have few, so use one "
                "when the move would cost you or help the leader.",
            )
        if step == "chaos":
            return (
                "Resolve the chaos card (or Hide from it).",
                "Chaos hits every player after a Snackrifice.",
            )
        return ("Make the choice the card asks of you.", "The move needs your decision before play goes on.")
    if view.get("active") != seat or view.get("over"):
        return None
    seats = view.get("seats", [])
    mine = seats[seat] if 0 <= seat < len(seats) else {}
    cult = mine.get("cult", "")
    food = FOOD_OF.get(cult, "")
    left = view.get("actions_left", 2)
    if cult and cult in hand and not mine.get("members"):
        return (
            f"Recruit your {cult} as a Cult Member.",
            f"You need at least one Cult Member to win, and it can pay for a Snackrifice later. "
            f"You have {left} action{'' if left == 1 else 's'} left this turn.",
        )
    if food and food in hand:
        return (
            f"Add your {food} to your Shrine.",
            f"Your Shrine holds {len(mine.get('shrine', []))} of the {view.get('food_needed')} {food} you need to win.",
        )
    return (
        "Add a card to your cult, play an action card, or discard.",
        "Other cults' animals become Hostages and their food goes to your Stash: both can pay for "
        "Snackrifices. Discarding is an action too, when nothing helps.",
    )


GUIDE = Guide(
    game="trash_cult",
    title="Trash Cult",
    players="2-4 players",
    goal="Be the first to collect enough of the food your cult worships in your Shrine, with at least "
    "one active Cult Member (your own animal or a converted Hostage) to worship it, at the end of your "
    "own turn. Food needed: 6 with 2 players, 5 with 3, 4 with 4.",
    setup=(
        "Each player picks a different cult: Raccoons worship Pizza, Skunks Pie, Squirrels Cookies, Rats Donuts. "
        "The dealer picks first, then clockwise.",
        "The chaos cards are shuffled into their own face-down deck. Everyone is dealt 5 cards from the active deck.",
        "The table has the active deck, the trash pile (face up), the chaos deck and the chaos discard.",
    ),
    turn=(
        "Draw: with fewer than 6 cards in hand, draw up to 6; with 6 or more, draw 1.",
        "Take exactly 2 actions (the same one twice is fine):",
        "1. Add one card to your cult: your animal as a Cult Member, another cult's animal as a Hostage, "
        "your food to your Shrine, another cult's food to your Stash.",
        "2. Snackrifice: trash 1 Cult Member, 2 like Hostages or 2 like food already in play to use the perk "
        "of that animal or food (whichever cult it belongs to). Then a chaos card is drawn.",
        "3. Play an action card from your hand (Convert Hostage, Opossum Plushie, Pigeon Thief, Poison Their Punch).",
        "4. Discard a card from your hand.",
        "Your turn ends; the player on your left goes next. You win if your Shrine is full and you have a "
        "Cult Member at the end of your turn.",
    ),
    faces=FACES,
    scheme=SCHEME,
    options=OPTIONS,
    sections=(
        Section(
            "Snackrifice perks",
            (
                *(f"{c} or {FOOD_OF[c]}: {_PERK[c]}." for c in CULTS),
                '"Your food" is always the food your own cult worships, whichever perk you use.',
            ),
        ),
        Section(
            "Chaos",
            (
                "Every Snackrifice draws a chaos card; each player must do what it says, or play Hide.",
                "Either/or cards: choose an option you can pay in full; if you can pay neither, pay as much as you can.",
                "Trash means from the table in front of you, not from your hand.",
            ),
        ),
        Section(
            "Answers off your turn",
            (
                "Protection Spell answers a Snackrifice, an Opossum Plushie or a Poison Their Punch.",
                "Hide answers a chaos card. Neither counts as an action.",
            ),
        ),
    ),
    tips=TIPS,
    coach=coach,
    back_mark="TC",
)
