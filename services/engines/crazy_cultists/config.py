"""Crazy Cultists' config: every number the CC rulings name, with the ruling's default.

A balance sweep changes any of these without touching the rules, so nothing in `rules.py`
hard-codes a count, a threshold or a hand size. `validate()` refuses a config that could
not be dealt or could never be scored, in words a sweep author can act on.

No `from __future__ import annotations` here: real (not string) annotations keep the core's
`get_type_hints` cheap, and it runs on every state restore.
"""

from dataclasses import dataclass, fields
from typing import ClassVar

from services.engines.core.errors import BadConfig

from .cards import DARK_KINDS, MAIN_FAVORS, MAIN_KINDS, NAMES, OPTIONAL_REMOVALS

VARIANTS = ("base", "devilish", "fiendish", "beast")  # CC-9
MIN_PLAYERS = 2  # CC-2: 2 players only as a variant for sweeps, behind `two_players`


# Slots: the rules read config fields on every turn (hand limit, turn cap, threshold), and a
# slot is read through its descriptor without an instance-dict lookup.
@dataclass(frozen=True, slots=True)
class CrazyCultistsConfig:
    # CC-1 main deck: how many of each card.
    favor_1: int = 15
    favor_2: int = 15
    favor_3: int = 15
    favor_4: int = 15
    fall_from_grace: int = 4
    polymorphization: int = 3
    infernal_inferno: int = 3
    toiling_trouble: int = 3
    hex_o_rama: int = 3
    evil_eye: int = 3
    beelze_beatdown: int = 2
    nerdronomicon: int = 3
    counter_spell: int = 4
    switcheroo: int = 2
    # CC-2: the game is for 3-6; 2 players is a variant for sweeps, refused unless this is on.
    two_players: bool = False
    # CC-2 hands.
    hand_limit: int = 3
    starting_hand: int = 3
    # CC-4 candles (base, devilish and fiendish).
    threshold: int = 10
    candles_to_win: int = 5
    # CC-9 variants: "base", "devilish", "fiendish" or "beast" (flat threshold, fewer candles).
    variant: str = "base"
    beast_threshold: int = 6
    beast_candles_to_win: int = 3
    # CC-10 Dark Powers expansion: 14 cards, one each except 4 Favor Points (2).
    dark_powers: bool = False
    dark_favor_4: int = 2
    life_siphon: int = 1
    black_spire: int = 1
    necromancy: int = 1
    dark_baptism: int = 1
    ouija: int = 1
    fear_the_reaper: int = 1
    puppet_master: int = 1
    forbidden_alchemy: int = 1
    scrying_bones: int = 1
    hail_yourself: int = 1
    voodoo: int = 1
    heavy_metal: int = 1
    black_spire_points: int = 3  # CC-10: favor points the Spire must collect
    # CC-11 optional setup: cards taken out of the main deck.
    optional_setup: bool = False
    remove_fall_from_grace: int = 2
    remove_infernal_inferno: int = 1
    remove_hex_o_rama: int = 1
    remove_evil_eye: int = 1
    remove_counter_spell: int = 1
    # G-5 turn cap: the game ends as a draw when it is reached.
    max_turns: int = 500

    # The least value each field takes where its rules need more than 0 (validate below).
    LEAST: ClassVar[dict[str, int]] = {
        "hand_limit": 1,
        "candles_to_win": 1,
        "beast_candles_to_win": 1,
        "beast_threshold": 1,
        "black_spire_points": 1,
        "max_turns": 1,
    }

    def main_counts(self) -> list[int]:
        """Cards of each main-deck kind after CC-11's removals."""
        counts = [getattr(self, NAMES[k]) for k in MAIN_KINDS]
        if self.optional_setup:
            for kind, field in OPTIONAL_REMOVALS:
                counts[kind] -= getattr(self, field)
        return counts

    def dark_counts(self) -> list[int]:
        """Cards of each Dark Powers kind; none unless the expansion is on (CC-10)."""
        return [getattr(self, NAMES[k]) if self.dark_powers else 0 for k in DARK_KINDS]

    def validate(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if type(value) is int and value < 0:
                raise BadConfig(f"{f.name} must not be negative, got {value}")
        if self.variant not in VARIANTS:
            raise BadConfig(f"variant must be one of {', '.join(VARIANTS)}, got {self.variant!r}")
        if self.optional_setup:
            for kind, field in OPTIONAL_REMOVALS:
                have, remove = getattr(self, NAMES[kind]), getattr(self, field)
                if remove > have:
                    raise BadConfig(
                        f"optional setup removes {remove} {NAMES[kind]} but the deck has only {have}"
                    )
        if self.hand_limit < 1:
            raise BadConfig("hand_limit must be at least 1")
        if self.starting_hand > self.hand_limit:
            raise BadConfig(
                f"starting_hand ({self.starting_hand}) must not exceed hand_limit ({self.hand_limit})"
            )
        if self.candles_to_win < 1 or self.beast_candles_to_win < 1:
            raise BadConfig("candles_to_win and beast_candles_to_win must be at least 1")
        # CC-4 lowers the threshold by one per candle held; the last candle must still need favor.
        if self.threshold < self.candles_to_win:
            raise BadConfig(
                f"threshold ({self.threshold}) must be at least candles_to_win ({self.candles_to_win})"
            )
        if self.beast_threshold < 1:
            raise BadConfig("beast_threshold must be at least 1")
        if sum(self.main_counts()[k] for k in MAIN_FAVORS) == 0:
            raise BadConfig("the main deck needs at least one favor card, or nobody can earn a candle")
        if self.black_spire_points < 1:
            raise BadConfig("black_spire_points must be at least 1")
        if self.max_turns < 1:
            raise BadConfig("max_turns must be at least 1")
        smallest = MIN_PLAYERS * self.starting_hand
        if sum(self.main_counts()) < smallest:
            raise BadConfig(
                f"the main deck has {sum(self.main_counts())} cards, too few to deal "
                f"{self.starting_hand} to each of {MIN_PLAYERS} players"
            )
