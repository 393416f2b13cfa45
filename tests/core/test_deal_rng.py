"""The live tables' generator (core/deal_rng.py): ChaCha20 itself, the `Rng` interface, the
state that records it, and a deal under it as fair as SplitMix64's (docs/fairness.md)."""

from __future__ import annotations

import random

import pytest

from services.engines.core.deal_rng import DealRng, _keystream
from services.engines.core.errors import BadState
from services.engines.core.rng import Rng
from services.engines.core.serial import state_from_bytes, state_to_bytes
from services.engines.registry import available_games, load_game
from tests.support.fairness import SEEDS, assert_uniform_positions

KEY = bytes(range(32))


def test_the_keystream_is_rfc_7539_chacha20() -> None:
    """RFC 7539 section 2.4.2's key, nonce and block counter 1, through our block numbering:
    the low 32 bits of a block's number are the counter, the rest the nonce."""
    nonce = bytes.fromhex("000000000000004a00000000")
    block = int.from_bytes(nonce, "little") << 32 | 1
    stream = _keystream(KEY, block, 2)
    # The first keystream bytes, as the RFC's ciphertext XOR its plaintext gives them.
    plaintext = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it."
    ciphertext = bytes.fromhex(
        "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0bf91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d807ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab77937365af90bbf74a35be6b40b8eedf2785e42874d"
    )
    assert bytes(a ^ b for a, b in zip(stream, plaintext, strict=False)) == ciphertext[: len(stream)]


def test_the_interface_of_rng_draws_the_same_way() -> None:
    """`shuffle` is Fisher-Yates over `below(i + 1)`, exactly as SplitMix64's is; `below`
    stays in range; a copy or a restored position goes on with the same numbers."""
    a, b = DealRng(KEY), DealRng(KEY)
    items = list(range(50))
    a.shuffle(items)
    expected = list(range(50))
    for i in range(49, 0, -1):
        j = b.below(i + 1)
        expected[i], expected[j] = expected[j], expected[i]
    assert items == expected and sorted(items) == list(range(50)) and a.state == b.state == 49
    assert all(0 <= a.below(6) < 6 for _ in range(200))
    c, d = a.copy(), DealRng.from_state(KEY, a.state)
    assert (
        [a.next_u64() for _ in range(20)]
        == [c.next_u64() for _ in range(20)]
        == [d.next_u64() for _ in range(20)]
    )
    e = DealRng(KEY)
    e.fork(1).next_u64()
    assert e.state == 0 and e.fork(1).key != e.fork(2).key
    assert DealRng(bytes(32)).next_u64() != DealRng(KEY).next_u64()
    with pytest.raises(ValueError):
        DealRng(b"short")


def test_a_keyed_deal_is_uniform() -> None:
    """The same positions test as every game's shuffles, over 2,000 keys."""
    orders = []
    for i in range(SEEDS):
        items = list(range(40))
        DealRng(random.Random(i).randbytes(32)).shuffle(items)
        orders.append(items)
    assert_uniform_positions("core.deal_rng_shuffle", orders, range(40))


@pytest.mark.parametrize("game", available_games())
def test_a_keyed_state_records_its_generator_and_keeps_to_it(game: str) -> None:
    """The state names its generator and key; it survives bytes, JSON and clones; the deal
    differs from the seed's own; and random play stays within the 4 KB state budget."""
    spec = load_game(game)
    players = spec.default_players
    keyed = spec.new_state(None, players, 5, KEY)
    doc = keyed.to_json()
    assert doc["generator"] == "chacha20" and doc["deal_key"] == KEY.hex()
    plain = spec.new_state(None, players, 5).to_json()
    assert "generator" not in plain and "deal_key" not in plain
    assert {k: v for k, v in doc.items() if k not in ("rng", "generator", "deal_key")} != {
        k: v for k, v in plain.items() if k != "rng"
    }, "a keyed deal is not the seed's deal"
    pick = random.Random(game)
    largest = 0
    for _ in range(300):
        if keyed.is_terminal():
            break
        data = state_to_bytes(keyed)
        largest = max(largest, len(data))
        restored = state_from_bytes(data)
        assert restored == keyed and type(restored.rng) is DealRng and restored.clone() == keyed
        seat = keyed.to_act()[0]
        action = pick.choice(keyed.legal_actions(seat))
        twin = restored.clone()
        keyed.apply(seat, action)
        twin.apply(seat, action)
        assert twin == keyed, "a restored or cloned keyed state draws what the original draws"
    assert largest <= 4096


def test_older_and_malformed_generator_fields() -> None:
    """A document without the fields reads as SplitMix64 at `rng` (every state stored before
    keyed deals); a named generator must be ChaCha20 with a 64-digit key, else BadState."""
    spec = load_game("trash_cult")
    doc = spec.new_state(None, 3, 9).to_json()
    old = spec.state_class.from_json(doc)
    assert type(old.rng) is Rng and old.rng.state == doc["rng"]
    keyed = spec.new_state(None, 3, 9, KEY).to_json()
    for field, value in [
        ("generator", "mt19937"),
        ("generator", None),
        ("deal_key", "00" * 31),
        ("deal_key", "zz" * 32),
        ("deal_key", KEY.hex().upper()),
        ("deal_key", 7),
    ]:
        with pytest.raises(BadState):
            spec.state_class.from_json({**keyed, field: value})
    with pytest.raises(BadState):
        spec.state_class.from_json({k: v for k, v in keyed.items() if k != "generator"})
