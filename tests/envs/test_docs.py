"""docs/envs.md's PettingZoo example runs as printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("pettingzoo")

DOC = Path(__file__).resolve().parents[2] / "docs" / "envs.md"


def test_the_pettingzoo_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    text = DOC.read_text()
    block = re.search(
        r"<!-- example: tests/envs/test_docs.py runs this block -->\n```python\n(.*?)```", text, re.S
    )
    assert block, "docs/envs.md lost its example block"
    code = block.group(1)
    assert len(code.strip().splitlines()) <= 22
    exec(compile(code, str(DOC), "exec"), {})
    assert "returns: {'player_0'" in capsys.readouterr().out
