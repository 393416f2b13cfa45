"""State bytes: JSON form plus an engine MAC that only ever skips re-validation."""

import hmac

import orjson
import pytest

from services.engines.core import serial
from services.engines.core.errors import BadState
from services.engines.core.serial import MAC_MARK, json_from_bytes, state_from_bytes, state_to_bytes
from services.engines.registry import load_game


@pytest.fixture()
def state():
    return load_game("crazy_cultists").new_state(None, 4, seed=2)


def test_bytes_are_the_json_form_with_a_mac_line(state):
    data = state_to_bytes(state)
    body, _, mac = data.rpartition(MAC_MARK)
    assert orjson.loads(body) == state.to_json()
    assert len(mac) == 64
    assert state_from_bytes(data) == state


def test_altered_body_with_the_old_mac_is_checked_in_full(state):
    doc = json_from_bytes(state_to_bytes(state))
    doc["hands"][0] = doc["hands"][0] + doc["hands"][1][:1]  # a card in two places
    forged = orjson.dumps(doc) + MAC_MARK + state_to_bytes(state).rpartition(MAC_MARK)[2]
    with pytest.raises(BadState, match="exactly one place"):
        state_from_bytes(forged)


def test_unsigned_json_is_accepted_after_validation(state):
    plain = orjson.dumps(state.to_json())
    assert state_from_bytes(plain) == state
    doc = state.to_json()
    doc["players"] = 9
    with pytest.raises(BadState):
        state_from_bytes(orjson.dumps(doc))


@pytest.mark.parametrize("junk", [b"", b"\xff\xfe", b"[1,2]", b"null", MAC_MARK + b"00"])
def test_junk_is_bad_state(junk):
    with pytest.raises(BadState):
        state_from_bytes(junk)


def test_the_mac_is_hmac_sha256_of_the_json_under_the_key(state):
    """Computed from precomputed keyed starts, it is still the standard MAC, so any tool
    with the key can check issued bytes."""
    body, _, mac = state_to_bytes(state).rpartition(MAC_MARK)
    assert mac == hmac.digest(serial._KEY, body, "sha256").hex().encode()
