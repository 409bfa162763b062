"""Nothing on screen needs the source code to understand (issue 35 items 5 and 6): no None, raw lists or snake_case
column names in tables, a probed game is not badged "transcript only", people are not counted as models, charts'
labels and axes read in full, and the glossary's sentences are where the terms are."""

from __future__ import annotations

import json
import re
import shutil

import pytest

pytest.importorskip("streamlit")

from mafiascope.lexicon import glossary  # noqa: E402

from .app_support import DEMO, assert_clean, copy_demo, new_app, plain, texts, use_logs  # noqa: E402


def internals(at) -> list[str]:
    """Table columns in snake_case and cells that are a raw list or the word None."""
    out = []
    for d in at.dataframe:
        cols = [str(c) for c in d.value.columns]
        out += [f"column {c}" for c in cols if re.search(r"[a-z]_[a-z]", c)]
        out += [f"cell {c}" for c in (str(v) for v in d.value.to_numpy().ravel()) if re.fullmatch(r"\[[-\d.e, ]+\]", c) or c in ("None", "nan")]
    return out


def helps(at) -> str:
    """Every help text and caption the run sent (tooltips included, the tables' column help too)."""
    from .injection import rendered_markdown

    columns = [json.dumps(json.loads(d.proto.columns or "{}"), ensure_ascii=False) for d in at.dataframe]
    return plain("\n".join(rendered_markdown(at))) + "\n".join(columns)


@pytest.fixture()
def bundled(tmp_path, monkeypatch):
    use_logs(monkeypatch, "", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("params", [dict(page="calibration"), dict(page="calibration", mode="model"),
                                    dict(page="dashboard", tab="Calibration per model"), dict(page="dashboard", tab="Belief dynamics"),
                                    dict(page="dashboard", tab="Matchups")], ids=lambda p: "-".join(p.values()))
def test_analysis_tables_show_words_not_internals(bundled, params):
    at = new_app(**params).run()
    assert_clean(at)
    assert not internals(at), internals(at)


@pytest.mark.slow
def test_glossary_sentences_are_where_the_terms_are(bundled):
    at = new_app(page="dashboard", tab="Calibration per model").run()
    said = helps(at)
    for key in ("ECE", "Brier", "parse rate"):
        assert glossary.BY_KEY[key].text in said, key
    at = new_app(page="second_order").run()
    said = helps(at)
    for key in ("spotlight ratio", "tau", "majority baseline"):
        assert glossary.BY_KEY[key].text in said, key
    at = new_app(page="episodes").run()
    assert glossary.BY_KEY["D"].text in helps(at) and glossary.BY_KEY["K"].text in helps(at)
    at = new_app(page="arena", tab="Leaderboards").run()
    said = helps(at)
    assert glossary.BY_KEY["points vs side"].text in said and glossary.BY_KEY["se"].text in said


@pytest.mark.slow
def test_a_probed_game_whose_answers_are_not_in_is_not_transcript_only(tmp_path, monkeypatch):
    """A game launched with probes, before its first answer: its setup names the battery, no introspection.jsonl yet."""
    logs = tmp_path / "logs"
    gdir = logs / "demo-classic-01"
    shutil.copytree(DEMO / "demo-classic-01", gdir)
    (gdir / "introspection.jsonl").unlink()
    lines = [ln for ln in (gdir / "game.jsonl").read_text().splitlines() if '"game_over"' not in ln][:12]
    (gdir / "game.jsonl").write_text("\n".join(lines) + "\n")
    use_logs(monkeypatch, logs, tmp_path)
    at = new_app(game="demo-classic-01").run()
    assert_clean(at)
    head = next(m.value for m in at.markdown if m.value.startswith("### Live Game"))
    assert "transcript only" not in head and "probed · no answers yet" in head
    assert "transcript only" not in at.selectbox(key="sb_game").format_func("demo-classic-01")
    assert "Transcript-only game" not in texts(at)


@pytest.mark.slow
def test_a_person_at_the_table_is_not_counted_as_a_model(tmp_path, monkeypatch):
    logs = copy_demo(tmp_path / "logs", 4)
    gdir = next(d for d in sorted(logs.iterdir()) if (d / "game.jsonl").is_file())
    lines = (gdir / "game.jsonl").read_text().splitlines()
    setup = json.loads(lines[0])
    setup["players"][0]["model"], setup["players"][0]["backend"] = "human", "app_human"
    (gdir / "game.jsonl").write_text("\n".join([json.dumps(setup), *lines[1:]]) + "\n")
    use_logs(monkeypatch, logs, tmp_path)
    at = new_app(page="dashboard", tab="Compare models").run()
    assert_clean(at)
    assert "human" not in at.selectbox(key="db_cmp_a").options
    tile = next(m for m in at.metric if m.label == "Models")
    assert "human" not in plain(tile.help).split("(")[0] and "people who played a seat are not counted" in plain(tile.help)


def test_forest_plot_labels_and_first_order_axis_read_in_full():
    import pandas as pd

    from mafiascope.analytics import figures as F

    df = pd.DataFrame({"metric": ["f1.accuracy", "f3.diff"], "label": ["F1 committed accuracy", "F3 accuracy − majority baseline"],
                       "a": [0.6, 0.3], "b": [0.4, 0.3], "diff": [0.2, 0.0], "diff_lo": [0.1, -0.1], "diff_hi": [0.3, 0.1],
                       "p": [0.01, 0.9], "p_holm": [0.02, 0.9], "n_a": [5, 5], "n_b": [5, 5], "holm_family_size": [2, 2]})
    spec = F.comparison_chart(df, "A", "B").to_dict()
    assert spec["vconcat"][0]["layer"][0]["encoding"]["y"]["axis"]["labelLimit"] >= 400
    f1 = pd.DataFrame({"model": ["m", "m"], "round": [1, 2], "accuracy": [0.95, 0.05], "ci_lo": [0.8, -0.2], "ci_hi": [1.3, 0.3],
                       "n": [10, 10], "chance": [0.3, 0.3]})
    y = F.f1_per_model_chart(f1).to_dict()["layer"][0]["encoding"]["y"]
    assert y["scale"]["domain"] == [0, 1]
