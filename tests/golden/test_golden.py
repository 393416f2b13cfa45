"""The stored golden games replay to the very same positions (tests/golden/record.py).

Fails at the first decision whose state or any view differs: a change to the generator,
a shuffle or a rule's outcome. If the change is meant, `make golden` rewrites the records
and the diff of tests/golden/*.json shows it in review."""

from __future__ import annotations

import orjson
import pytest

from services.engines.registry import load_game
from tests.golden.record import CASES, FOLDER, file_name, replay_digests


def test_every_case_has_its_record_and_no_record_is_stray() -> None:
    wanted = {file_name(*case) for case in CASES}
    assert {p.name for p in FOLDER.glob("*.json")} == wanted


@pytest.mark.parametrize("case", CASES, ids=[file_name(*c).removesuffix(".json") for c in CASES])
def test_a_golden_game_replays_to_the_same_positions(case: tuple) -> None:
    record = orjson.loads((FOLDER / file_name(*case)).read_bytes())
    assert (record["game"], record["players"], record["config"]) == case
    spec = load_game(record["game"])
    got = replay_digests(spec, record)
    for step, (want, have) in enumerate(zip(record["digests"], got, strict=True)):
        assert want == have, (
            f"{file_name(*case)}: position after decision {step} differs from the record "
            f"(action {record['actions'][step - 1] if step else 'none: the deal'}); "
            "if the change is meant, run `make golden` and review the diff"
        )
    state = spec.new_state(record["config"] or None, record["players"], record["seed"])
    for seat, action in record["actions"]:
        state.apply(seat, action)
    assert state.returns() == record["returns"]
