"""Issue 31: the engines' log lines, as read by the seat they name, are in the second person
("You go over 9 and lose the stack", not "you goes ... loses"), on the end screen and in the
move words and log, which the page names with common.js's `nameSeats` (tests/browser/
test_words.py holds the two to the same words).

Every line comes from the engines' own source: each string constant with a "seat {}" in a
game's modules, filled in with the reader's seat."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from services.gateway.pages.history import name_seats, second_person

ENGINES = Path(__file__).resolve().parents[2] / "services" / "engines"
NAMES = ["p0", "Steady bot 1", "Steady bot 2", "Steady bot 3"]


def engine_lines() -> list[str]:
    """Every log template of every game with the reader (seat 0) as each seat it names."""
    lines = set()
    for path in sorted(ENGINES.glob("*/*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
            if "seat {" in text and len(text) < 200 and "\n" not in text:
                lines.add(re.sub(r"seat \{[a-z]*\}", "seat 0", text).replace("{}", "Favor 3"))
    return sorted(lines)


def test_every_engine_line_read_by_its_seat_is_in_the_second_person():
    lines = engine_lines()
    assert len(lines) > 40, "the engines' lines were found"
    for line in lines:
        words = name_seats(line, NAMES, 0)
        assert not re.search(r"\byou ([a-z]+[^s]s|is|has)\b", words, re.I), (line, words)
        assert not re.search(r"^You .*\band (goes|[a-z]+[^s]s)\b", words), (line, words)
        assert "you's" not in words and "its turn" not in words.replace("its owner", ""), (line, words)


def test_second_person_by_example():
    assert (
        name_seats("seat 0 goes over 9 and loses the stack", NAMES, 0) == "You go over 9 and lose the stack"
    )
    assert (
        name_seats("seat 0 is polymorphed and skips its turn", NAMES, 0)
        == "You are polymorphed and skip your turn"
    )
    assert name_seats("seat 0 wins: the Raccoon cult's Shrine is full", NAMES, 0) == (
        "You win: the Raccoon cult's Shrine is full"
    )
    assert name_seats("seat 1 wins the trick with Red 9 (4); seat 0 triggers Red", NAMES, 0) == (
        "Steady bot 1 wins the trick with Red 9 (4); you trigger Red"
    )
    assert name_seats("seat 0 has no cards and passes", NAMES, 0) == "You have no cards and pass"
    assert name_seats("seat 0 searches the active deck and takes a card", NAMES, 0) == (
        "You search the active deck and take a card"
    )
    assert name_seats("seat 0 gives seat 0 a Suspicion", NAMES, 0) == "You give yourself a Suspicion"
    assert name_seats("seat 0's Black Spire falls", NAMES, 0) == "Your Black Spire falls"
    # Another seat's lines keep their verbs; "you" as an object changes nothing.
    assert (
        name_seats("seat 1 plays Infernal Inferno on seat 0", NAMES, 0)
        == "Steady bot 1 plays Infernal Inferno on you"
    )
    assert name_seats("seat 1 holds the most Suspicion and discards it all", NAMES, 0) == (
        "Steady bot 1 holds the most Suspicion and discards it all"
    )
    assert second_person("you holds the most Suspicion and discards it all") == (
        "You hold the most Suspicion and discard it all"
    )
