"""Views that a link reproduces in a new browser: the Dashboard's model comparison, Second-Order's drill-down and the
Live Game launch form (issue 35 item 3; the Studies tab and study: tests/test_app_studies.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from .app_support import assert_clean, errors, new_app, use_logs  # noqa: E402


@pytest.fixture(autouse=True)
def repo_data(tmp_path, monkeypatch):
    """The bundled corpora (data/), a fresh runs directory and cache."""
    use_logs(monkeypatch, "", tmp_path)


def url(at) -> dict[str, str]:
    return {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}


@pytest.mark.slow
def test_compare_picks_are_in_the_url_and_a_link_restores_them():
    at = new_app(page="dashboard", tab="Compare models").run()
    assert_clean(at)
    models = at.selectbox(key="db_cmp_a").options
    assert len(models) >= 3
    # the default picks are written too: a link must not depend on the order of the models in another corpus
    assert url(at)["a"] == models[0] and url(at)["b"] == at.selectbox(key="db_cmp_b").value
    again = new_app(page="dashboard", tab="Compare models", a=models[2], b=models[0]).run()
    assert_clean(again)
    assert again.selectbox(key="db_cmp_a").value == models[2] and again.selectbox(key="db_cmp_b").value == models[0]
    bad = new_app(page="dashboard", tab="Compare models", a="no-such-model").run()
    assert any("a='no-such-model'" in e for e in errors(bad))


@pytest.mark.slow
def test_second_order_drill_down_is_a_link():
    at = new_app(page="second_order", predicted="suspects", mismatches="true").run()
    assert_clean(at)
    assert at.multiselect(key="predicted").value == ["suspects"]
    assert at.toggle(key="mismatches").value is True
    shown = [d for d in at.dataframe if "predictor" in d.value.columns][0].value
    assert len(shown) and set(shown["predicted"]) == {"suspects"} and not shown["match"].any()
    assert url(at).get("predicted") == "suspects" and url(at).get("mismatches") == "true"


@pytest.mark.slow
def test_launch_form_fields_are_a_link():
    at = new_app(page="live", mode="launch", config="classic_sheriff", seed="7", games="3", probes="false").run()
    assert_clean(at)
    assert at.selectbox(key="config").value == "classic_sheriff"
    assert at.number_input(key="seed").value == 7 and at.number_input(key="games").value == 3
    assert at.toggle(key="probes").value is False
    assert url(at).get("config") == "classic_sheriff" and url(at).get("games") == "3"
