"""Query strings go through pydantic models like bodies do: a bad value is 400 `malformed`
naming the parameter (message and `error.field`), before anything is looked up or asked;
where the document lists the parameters, they are the same models' (`query_parameters`)."""

from __future__ import annotations

import pytest

from services.gateway import replays_api, sweeps_api, tunes_api
from services.gateway.schemas import query_parameters
from tests.support.staff import session_of


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/sweeps?limit=x", "limit"),
        ("/api/sweeps?limit=0", "limit"),
        ("/api/tunes?limit=101", "limit"),
        ("/api/tables?status=finished", "status"),
        ("/ops/data/panels/moves?range=13m", "range"),  # refused before Prometheus is asked
        ("/ops/data/panels/moves?game=crazy_cultists", "game"),  # not a per-game panel
        ("/designer/data/nightly?nights=0", "nights"),
        ("/designer/data/nightly?nights=many", "nights"),
        ("/tables/0123456789abcdef/panel?at=-1", "at"),  # refused before the table is looked up
        ("/api/replays/steps/0?game=trash_cult&seed=1&seat=everyone", "seat"),
    ],
)
def test_a_bad_query_value_is_a_400_naming_the_parameter(client, app, url, field):
    """Asked by an operator, who may call each of these (anyone else is refused first)."""
    reply = client.get(url, headers=session_of(client, app.extensions["cultists"].redis, "operator"))
    assert reply.status_code == 400, url
    error = reply.get_json()["error"]
    assert (error["code"], error["field"]) == ("malformed", field), url
    assert f"'{field}'" in error["message"], url


def test_the_document_lists_the_query_models_parameters(client):
    paths = client.get("/api/openapi.json").get_json()["paths"]
    limit = query_parameters(sweeps_api.RecentQuery)
    assert paths["/api/v1/sweeps"]["get"]["parameters"] == limit
    assert paths["/api/v1/tunes"]["get"]["parameters"] == limit
    assert tunes_api.RecentQuery is sweeps_api.RecentQuery  # one ?limit= for both lists
    step = paths["/api/v1/replays/steps/{step}"]["get"]["parameters"]
    assert replays_api.SEAT_PARAM in step and replays_api.SEAT_PARAM["schema"]["pattern"]
