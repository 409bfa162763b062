"""The graphs' datasets are built without pandas and sent as Arrow bytes built by app/vega_data.py: the rows and
the Arrow tables must be what the pandas round trip (``json.loads(pd.DataFrame(rows).to_json(orient="records"))``)
and Streamlit's own conversion (``convert_anything_to_arrow_bytes``) gave, on every graph of every step of real games."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal
from streamlit.dataframe_util import convert_anything_to_arrow_bytes, convert_arrow_bytes_to_pandas_df

from .app_support import DEMO

GAMES = ("demo-classic-01", "demo-ru-01", "demo-sport-01")


def _pandas_records(rows: list[dict]) -> list[dict]:
    """The graph datasets as the app built them before (graph._records of a DataFrame)."""
    df = pd.DataFrame(rows)
    return [] if df.empty else json.loads(df.to_json(orient="records"))


@pytest.fixture(scope="module")
def graph_rows() -> list[list[dict]]:
    """Every dataset handed to vega_data.records while drawing each graph of each step of three demo games."""
    from app import graph, vega_data
    from app.data import load_raw
    from app.gamemodel import assessment, build_model, personality_guesses, suspicion, toward_me

    seen: list[list[dict]] = []
    orig = vega_data.records

    def spy(rows):
        seen.append([dict(r) for r in rows])
        return orig(rows)

    vega_data.records = spy
    try:
        for gid in GAMES:
            gm = build_model(load_raw(str(DEMO / gid)))
            pers = {p["name"]: p.get("personality") or {} for p in gm.players}
            for i, s in list(enumerate(gm.steps))[::3]:
                alive = gm.alive_at(i)
                graph.ground_truth(gm.names, gm.roles, gm.models, alive, s.speaker,
                                   {n: (k % 3) / 3 if k % 4 else None for k, n in enumerate(gm.names)}, pers)
                for name in gm.names[: 3 if i % 5 else len(gm.names)]:
                    ass, carried = assessment(gm, name, i)
                    sus, _ = suspicion(gm, name, i)
                    graph.belief_graph(name, gm.names, ass, sus, alive, threshold=i % 11, carried=carried, speaker=s.speaker,
                                       personality=personality_guesses(gm, name, i), true_roles=gm.roles if i % 2 else None)
                    tm, _ = toward_me(gm, name, i)
                    others = [{"name": n, "attitude": v["attitude"], "confidence": v["confidence"], "reason": v["reason"]}
                              for n, v in tm.items()]
                    graph.ego_graph(name, others, kind="believed", mismatched=set(list(tm)[:1]))
    finally:
        vega_data.records = orig
    return seen


def test_rows_match_the_pandas_round_trip(graph_rows):
    from app.vega_data import records

    assert len(graph_rows) > 1000 and any(graph_rows) and any(not r for r in graph_rows)
    for rows in graph_rows:
        assert records(rows) == _pandas_records(rows), rows


def test_arrow_tables_match_streamlits_conversion(graph_rows):
    from app.vega_data import arrow_bytes, records

    distinct = list({json.dumps(r, default=str): r for r in graph_rows}.values())
    for rows in distinct[:: max(1, len(distinct) // 120)]:  # Streamlit's conversion takes ~20 ms a dataset
        rec = records(rows)
        ours = convert_arrow_bytes_to_pandas_df(arrow_bytes(rec))
        theirs = convert_arrow_bytes_to_pandas_df(convert_anything_to_arrow_bytes(rec))
        assert_frame_equal(ours, theirs, check_exact=True)


def test_edge_cases_match():
    from app.vega_data import arrow_bytes, records

    cases = [
        [{"a": 1, "b": "x"}, {"a": 2.5, "c": None}],  # mixed int/float, a key missing from the first row
        [{"a": float("nan"), "b": True}, {"a": 1 / 3, "b": False}],
        [{"w": 1 + 3 * 2 / 7, "s": "✝ Ана"}],
        [{"n": None}],
        [],
    ]
    for rows in cases:
        rec = records(rows)
        assert rec == _pandas_records(rows)
        ours = convert_arrow_bytes_to_pandas_df(arrow_bytes(rec))
        theirs = convert_arrow_bytes_to_pandas_df(convert_anything_to_arrow_bytes(rec))
        assert_frame_equal(ours, theirs, check_exact=True)
    assert records([{"a": float("nan")}]) == [{"a": None}] and not math.isnan(records([{"a": 0.1}])[0]["a"])


def test_arrow_bytes_are_memoised_by_content():
    from app.vega_data import arrow_bytes

    a = arrow_bytes([{"x": 1, "y": "a"}])
    assert arrow_bytes([{"x": 1, "y": "a"}]) is a  # an unchanged dataset reaches the browser byte-identical
    assert arrow_bytes([{"x": 2, "y": "a"}]) != a
