"""Crazy Cultists' cards as data: kinds, names, favor values and the deck compositions.

A card is an id; `kind_table(config)[id]` is its kind. Main-deck ids come first
(0..n_main-1), then the Dark Powers ids, so "which deck does this card belong to" is one
comparison. A kind's name is also the config field holding how many of it are in the deck
(CC-1, CC-10), so a sweep that changes a count never touches this file.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from services.engines.core.decks import build_deck

# Main deck (CC-1).
(
    FAVOR_1,
    FAVOR_2,
    FAVOR_3,
    FAVOR_4,
    FALL_FROM_GRACE,
    POLYMORPHIZATION,
    INFERNAL_INFERNO,
    TOILING_TROUBLE,
    HEX_O_RAMA,
    EVIL_EYE,
    BEELZE_BEATDOWN,
    NERDRONOMICON,
    COUNTER_SPELL,
    SWITCHEROO,
) = range(14)
# Dark Powers deck (CC-10).
(
    DARK_FAVOR_4,
    LIFE_SIPHON,
    BLACK_SPIRE,
    NECROMANCY,
    DARK_BAPTISM,
    OUIJA,
    FEAR_THE_REAPER,
    PUPPET_MASTER,
    FORBIDDEN_ALCHEMY,
    SCRYING_BONES,
    HAIL_YOURSELF,
    VOODOO,
    HEAVY_METAL,
) = range(14, 27)

MAIN_KINDS = range(14)
DARK_KINDS = range(14, 27)
NUM_KINDS = 27

# Machine names: used in views, action details and as the config field of each count.
NAMES = (
    "favor_1",
    "favor_2",
    "favor_3",
    "favor_4",
    "fall_from_grace",
    "polymorphization",
    "infernal_inferno",
    "toiling_trouble",
    "hex_o_rama",
    "evil_eye",
    "beelze_beatdown",
    "nerdronomicon",
    "counter_spell",
    "switcheroo",
    "dark_favor_4",
    "life_siphon",
    "black_spire",
    "necromancy",
    "dark_baptism",
    "ouija",
    "fear_the_reaper",
    "puppet_master",
    "forbidden_alchemy",
    "scrying_bones",
    "hail_yourself",
    "voodoo",
    "heavy_metal",
)
KIND_OF_NAME = {name: kind for kind, name in enumerate(NAMES)}

# As printed, for labels and the event log.
TITLES = (
    "Favor 1",
    "Favor 2",
    "Favor 3",
    "Favor 4",
    "Fall From Grace",
    "Polymorphization",
    "Infernal Inferno",
    "Toiling Trouble",
    "Hex-O-Rama",
    "Evil Eye",
    "Beelze-Beatdown",
    "Nerdronomicon",
    "Counter-Spell",
    "Switcheroo",
    "4 Favor Points",
    "Life Siphon",
    "Black Spire",
    "Necromancy",
    "Dark Baptism",
    "Ouija",
    "Fear The Reaper",
    "Puppet Master",
    "Forbidden Alchemy",
    "Scrying Bones",
    "Hail Yourself",
    "Voodoo",
    "Heavy Metal",
)

# Favor points a card is worth on a stack; 0 for everything that is not a favor card.
VALUE = (1, 2, 3, 4) + (0,) * 10 + (4,) + (0,) * 12

# Favor cards played straight onto the stack, with no Counter-Spell window (only the Dark
# Powers' 4 Favor Points opens one, because every Dark Power can be countered: CC-7).
MAIN_FAVORS = frozenset({FAVOR_1, FAVOR_2, FAVOR_3, FAVOR_4})

# Cards played at another player; the rest are played on yourself or on the whole table.
TARGETED = frozenset(
    {
        FALL_FROM_GRACE,
        POLYMORPHIZATION,
        INFERNAL_INFERNO,
        TOILING_TROUBLE,
        HEX_O_RAMA,
        EVIL_EYE,
        BEELZE_BEATDOWN,
        SWITCHEROO,
        LIFE_SIPHON,
        BLACK_SPIRE,
        OUIJA,
        VOODOO,
    }
)

# How many cards from the top of the target's stack a card discards, as printed.
STRIP = {FALL_FROM_GRACE: 1, INFERNAL_INFERNO: 2, HEX_O_RAMA: 3}

NERDRONOMICON_LOOK = 3  # as printed: look at the top 3, keep 1, return 2
ALCHEMY_DRAW = 3  # Forbidden Alchemy as printed: draw 3, return 2
ALCHEMY_RETURN = 2

# CC-11: (kind, config field with how many of it the optional setup removes).
OPTIONAL_REMOVALS = (
    (FALL_FROM_GRACE, "remove_fall_from_grace"),
    (INFERNAL_INFERNO, "remove_infernal_inferno"),
    (HEX_O_RAMA, "remove_hex_o_rama"),
    (EVIL_EYE, "remove_evil_eye"),
    (COUNTER_SPELL, "remove_counter_spell"),
)


@lru_cache(maxsize=64)
def kind_table(config: Any) -> tuple[tuple[int, ...], int]:
    """(kind of each card id, number of main-deck cards) for a config.

    Cached per config: states are rebuilt often (clones, restores) but configs are few.
    """
    main = build_deck(list(zip(MAIN_KINDS, config.main_counts(), strict=True)))
    dark = build_deck(list(zip(DARK_KINDS, config.dark_counts(), strict=True)))
    return tuple(main + dark), len(main)
