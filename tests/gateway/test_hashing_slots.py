"""The host's hashing slots (services/platform/passwords.py): a hashing process hashes only
inside a slot, so with every slot held elsewhere a request waits, and is answered as soon
as the slot is let go. A real hashing process over its pipes, slots in a folder of its own."""

from __future__ import annotations

import fcntl
import json
import os
import select
import subprocess
import sys

from tests.support.celery_worker import ROOT


def test_a_hash_waits_for_a_free_slot(tmp_path):
    slots = tmp_path / "slots"
    slots.mkdir()
    held = os.open(slots / "slot-0", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(held, fcntl.LOCK_EX)  # the host's one slot, taken by "another worker"
    env = {**os.environ, "GATEWAY_HASHING_SLOTS": "1", "GATEWAY_HASHING_SLOTS_DIR": str(slots)}
    child = subprocess.Popen(
        [sys.executable, "-m", "services.platform.passwords"],
        cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(json.dumps({"op": "hash", "password": "staple moon violet"}).encode() + b"\n")
        child.stdin.flush()
        ready, _, _ = select.select([child.stdout], [], [], 5.0)
        assert not ready, "hashed while the only slot was held elsewhere"
        fcntl.flock(held, fcntl.LOCK_UN)
        ready, _, _ = select.select([child.stdout], [], [], 60.0)
        assert ready, "no answer once the slot was free"
        reply = json.loads(child.stdout.readline())
        assert reply["ok"].startswith("$argon2id$"), reply
        child.stdin.write(b"not json\n")
        child.stdin.flush()
        assert "error" in json.loads(child.stdout.readline())  # a bad line: an answer, not a crash
    finally:
        os.close(held)
        child.kill()
        child.wait()


def test_an_unusable_slots_folder_hashes_unbounded_rather_than_refusing(tmp_path, capsys):
    from services.platform.passwords import hashing_slot

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with hashing_slot(1, str(blocker / "slots")) as slot:
        assert slot == -1
    assert "hashing without a bound" in capsys.readouterr().err


def test_hashing_cores_leave_the_first_core_to_the_event_loops():
    """Argon2 verifies with a thread per lane (4), so the slots alone would let one hash
    spread over every core; a hashing process runs on its slots' count of cores only."""
    from services.platform.passwords import hashing_cores

    assert hashing_cores({0, 1}, slots=1) == {1}
    assert hashing_cores({0, 1, 2, 3}, slots=3) == {1, 2, 3}
    assert hashing_cores({2, 5, 7}, slots=1) == {7}
    assert hashing_cores({3}, slots=1) == {3}  # one core: nothing to leave
    assert hashing_cores({0, 1}, slots=4) == {0, 1}  # more slots than cores
