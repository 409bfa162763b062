"""The analytics' outputs on the bundled corpora equal their golden fixtures (``tests/report_goldens.py``
says what is kept and how to regenerate it): the full report (lean and not, and again on a corpus
that already computed it), the ``--model`` seat filter, every model comparison, the episodes, the
belief-edge stream, the text rendering and the report directory's Markdown and CSV tables, in the
default mode (to the printed precision) and in compat mode (exactly)."""

from __future__ import annotations

import hashlib
import os

import pytest

from . import report_goldens as G

# the ten-game demo corpus takes a few seconds a case: in the slow lane
CASES = [pytest.param(name, mode, marks=[pytest.mark.slow] if name in ("demo", "mixed") else [])
         for name in G.CORPORA for mode in G.MODES]
RENDERED_CASES = [c for c in CASES if c.values[0] in G.BUNDLED]


@pytest.fixture(scope="module")
def computed(tmp_path_factory):
    """Each case's outputs, computed once for the module."""
    cache = tmp_path_factory.mktemp("golden-cache")
    got: dict = {}

    def get(name: str, mode: str) -> dict:
        if (name, mode) not in got:
            got[(name, mode)] = G.as_json(G.outputs(name, mode, cache))
        return got[(name, mode)]

    return get


@pytest.mark.parametrize("name,mode", CASES)
def test_outputs_equal_the_golden_fixture(computed, name, mode):
    mine = computed(name, mode)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        G.fixture_path(name, mode).write_text(G.dump(G.fixture(mine)), encoding="utf-8")
        return
    gold = G.read(name, mode)
    assert not set(gold["statistics"]) - set(mine["statistics"]), "a statistic of the fixture is gone"
    computed_keys = [k for k in gold if k not in G.RENDERED and k != "statistics"]
    assert [k for k in mine if k != "statistics"] == computed_keys
    for key in computed_keys:
        diff = G.mismatches(mine[key], gold[key], gold["statistics"], mode, key)
        assert not diff, f"{name} {mode}: {len(diff)} differences (first ones):\n" + "\n".join(diff)


@pytest.mark.parametrize("name,mode", RENDERED_CASES)
def test_renderings_of_the_golden_report(name, mode):
    """The text report and the report directory rendered from the fixture's report are the fixture's."""
    gold = G.read(name, mode)
    mine = G.renderings(gold)
    for key in G.RENDERED:
        diff = G.differences(mine[key], gold[key], 0.0, key)
        assert not diff, f"{name} {mode}: {len(diff)} differences (first ones):\n" + "\n".join(diff)


@pytest.mark.parametrize("name,mode", CASES)
def test_lean_and_reused_corpus_give_the_same_report(tmp_path, name, mode):
    """The report's memory policy never changes a figure: the non-lean report, and a second report on
    a corpus that has built every intermediate already, equal the golden report exactly."""
    gold = G.read(name, mode)
    c = G.load(name, tmp_path, mode)
    m = G.mode_of(mode)
    for lean in (False, True, False):
        mine = G.as_json(G.report(c, m, transcripts=True, lean=lean))
        diff = G.mismatches(mine, gold["report"], gold["statistics"], mode, f"report(lean={lean})")
        assert not diff, "\n".join(diff)


@pytest.mark.parametrize("name,mode", [pytest.param("demo", "default", marks=pytest.mark.slow),
                                       ("en_demo", "mafiascope-2026-07")])
def test_dashboard_sections_are_the_reports(tmp_path, name, mode):
    """The app's report (the Dashboard's sections only, not lean) holds the same figures as the full report."""
    from mafiascope.analytics.metric import Place
    from mafiascope.analytics.sections import section_keys

    DASHBOARD_SECTIONS = section_keys(Place.DASHBOARD)
    assert DASHBOARD_SECTIONS == ("parse", "outcome", "f1", "f2", "f3", "f4", "dynamics")
    gold = G.read(name, mode)
    c = G.load(name, tmp_path, mode)
    mine = G.as_json(G.report(c, G.mode_of(mode), sections=DASHBOARD_SECTIONS))
    for key in (*DASHBOARD_SECTIONS, "cost"):
        diff = G.mismatches(mine[key], gold["report"][key], gold["statistics"], mode, key)
        assert not diff, "\n".join(diff)


def test_the_fixtures_cover_both_modes_every_corpus_and_the_filters():
    """Every bundled corpus has a fixture per mode; the mixed-model corpora carry the seat filter and the
    comparisons, the probed ones the episodes and edge stream, the transcript-only one its absent sections."""
    for name in G.CORPORA:
        for mode in G.MODES:
            gold = G.read(name, mode)
            assert gold["report"]["mode"] == mode
            assert gold["report"]["n_games"] > 0
    demo = G.read("demo", "default")
    assert {"seat_filter", "comparisons", "compare_villagers", "episodes", "edges", "report_dir"} <= set(demo)
    assert demo["comparisons"] and demo["seat_filter"]["seat_filter"]["seats"] > 0
    arena = G.read("arena", "default")["report"]
    assert arena["probe_logs"] is False and arena["f1"] == {"absent": "no probe logs in the selected games"}


def test_edge_digest_is_of_the_csv(tmp_path):
    """The edge stream's golden is a digest of its CSV: a changed edge changes it."""
    from mafiascope.analytics.dynamics import edge_stream

    c = G.load("en_demo", tmp_path)
    edges = edge_stream(c, G.mode_of("default"))
    csv = edges.to_csv(index=False)
    assert hashlib.sha256(csv.encode()).hexdigest() == G.read("en_demo", "default")["edges"]["sha256"]
    edges.loc[edges.index[0], "confidence"] += 0.5
    assert hashlib.sha256(edges.to_csv(index=False).encode()).hexdigest() != G.read("en_demo", "default")["edges"]["sha256"]
