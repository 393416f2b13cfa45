"""The docs' figure tables are what bench/docs.py makes from the committed
bench/results.json: a figure edited by hand, or results committed without the docs made
from them, fails here. (`python -m bench.run --docs` makes them again.)"""

from __future__ import annotations

import copy
import json

import pytest

from bench import docs
from bench.run import RESULTS


@pytest.fixture(scope="module")
def results() -> dict:
    assert RESULTS.exists(), "bench/results.json is committed: the docs' tables are made from it"
    return json.loads(RESULTS.read_text())


def test_every_generated_region_equals_what_the_results_make(results):
    pages = docs.pages()
    names = {m["name"] for page in pages for m in docs.REGION.finditer(page.read_text())}
    assert {"gateway", "grpc"} <= names, "the gateway and engine RPC tables are generated"
    for page in pages:
        text = page.read_text()
        assert docs.rewrite(text, results) == text, f"{page.name}: run `python -m bench.run --docs`"


def test_a_changed_figure_changes_the_table_and_says_its_run(results):
    page = "<!-- bench:gateway -->\n<!-- /bench:gateway -->\n"
    made = docs.rewrite(page, results)
    altered = copy.deepcopy(results)
    altered["gateway"]["http"]["paced_half"]["move_p99_ms"] += 1000.0
    assert docs.rewrite(page, altered) != made
    assert "load average" in made and "Run of" in made


def test_missing_figures_are_named_not_guessed(results):
    page = "<!-- bench:grpc -->\n<!-- /bench:grpc -->\n"
    with pytest.raises(docs.MissingFigures, match=r"python -m bench\.run grpc"):
        docs.rewrite(page, {k: v for k, v in results.items() if k != "grpc"})
    with pytest.raises(docs.MissingFigures, match="no generator"):
        docs.rewrite("<!-- bench:nothing -->\nx\n<!-- /bench:nothing -->\n", results)


def test_the_streams_table_has_a_row_per_store_and_says_a_missed_target(results):
    page = "<!-- bench:streams -->\n<!-- /bench:streams -->\n"
    made = docs.rewrite(page, results)
    assert "| single |" in made and "| cluster |" in made, "one Redis and the cluster, each its own row"
    altered = copy.deepcopy(results)
    altered["streams"]["targets"] = {name: False for name in altered["streams"]["targets"]}
    assert "TARGET MISSED: p99_ratio (cluster)" in docs.rewrite(page, altered)
    with pytest.raises(docs.MissingFigures, match="cluster"):
        docs.rewrite(
            page, {**results, "streams": {k: v for k, v in results["streams"].items() if k != "cluster"}}
        )
