"""Corpora from elsewhere (issue 34 item 6): model aliases (a model named by a file path gets a readable name
and a safe file name), a split by game language, and --min-games leaving out models with too few games (counted
in the selection audit), in analyze, compare and report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mafiascope.analytics.corpus import load_corpus
from mafiascope.analytics.model_names import AliasError, ModelNames, file_slug, read_aliases
from mafiascope.analytics.modes import Mode
from mafiascope.analytics.report import build_report
from mafiascope.cli import main

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"  # five bot models, English and Russian games


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("names_cache")


def _seats(rep: dict) -> dict[str, int]:
    return {m: e["seats"] for m, e in rep["by_model"].items()}


def test_file_slug_is_a_safe_unique_file_name():
    path = "/home/me/models/DeepSeek-V3-0324-Q4_K_M.gguf"
    assert file_slug(path).startswith("DeepSeek-V3-0324-Q4_K_M_gguf-") and "." not in file_slug(path)
    assert file_slug("gpt-4o-mini") == "gpt-4o-mini"  # a safe name is kept as it is
    assert file_slug("a/b/model") != file_slug("c/d/model")  # same last part, other path: other slug
    assert all(file_slug(x) and "/" not in file_slug(x) and ".." not in file_slug(x) for x in ("", "../..", "Мафия", "a" * 300))


def test_read_aliases_from_arguments_and_yaml(tmp_path):
    f = tmp_path / "aliases.yaml"
    f.write_text("bot-balanced: Balanced\n'/home/me/m.gguf': DeepSeek-V3\n", encoding="utf-8")
    assert read_aliases(["x/y=z=1", str(f)]) == {"x/y=z": "1", "bot-balanced": "Balanced", "/home/me/m.gguf": "DeepSeek-V3"}
    for bad in (["no-equals"], ["=x"], ["a="]):
        with pytest.raises(AliasError, match="OLD=NEW"):
            read_aliases(bad)
    (tmp_path / "list.yaml").write_text("- a\n- b\n", encoding="utf-8")
    with pytest.raises(AliasError, match="must map"):
        read_aliases([str(tmp_path / "list.yaml")])


@pytest.mark.slow
def test_aliases_rename_and_pool_models(cache):
    plain = build_report(load_corpus(DEMO, cache_dir=cache), Mode(boot=0))
    names = ModelNames({"bot-balanced": "Balanced", "bot-analyst": "Thinkers", "bot-cautious": "Thinkers"})
    c = load_corpus(DEMO, cache_dir=cache, model_names=names)
    rep = build_report(c, Mode(boot=0))
    seats, before = _seats(rep), _seats(plain)
    assert set(seats) == {"Balanced", "Thinkers", "bot-aggressive", "bot-gullible"}
    assert seats["Balanced"] == before["bot-balanced"]
    assert seats["Thinkers"] == before["bot-analyst"] + before["bot-cautious"]  # two names aliased to one: pooled
    only = load_corpus(DEMO, cache_dir=cache, model_names=names, model="Thinkers")  # filters take the new names
    assert 0 < only.m <= c.m and all("Thinkers" in ms.split(",") for ms in only.games["models"])


@pytest.mark.slow
def test_by_language_splits_each_model(cache):
    plain = _seats(build_report(load_corpus(DEMO, cache_dir=cache), Mode(boot=0)))
    rep = build_report(load_corpus(DEMO, cache_dir=cache, model_names=ModelNames(by_language=True)), Mode(boot=0))
    split = _seats(rep)
    assert "bot-balanced (en)" in split and "bot-balanced (ru)" in split
    for m, n in plain.items():
        assert sum(v for k, v in split.items() if k.startswith(m + " (")) == n


@pytest.mark.slow
def test_min_games_leaves_out_models_and_counts_them(cache, capsys):
    c = load_corpus(DEMO, cache_dir=cache, min_games=8)
    games = {m: e["games"] for m, e in build_report(load_corpus(DEMO, cache_dir=cache), Mode(boot=0))["by_model"].items()}
    rep = build_report(c, Mode(boot=0))
    assert set(rep["by_model"]) == {m for m, k in games.items() if k >= 8}
    assert rep["audit"]["selection"]["models_left_out"] == {m: k for m, k in games.items() if k < 8}
    assert rep["audit"]["selection"]["filters"]["min_games"] == 8
    left = sorted(rep["audit"]["selection"]["models_left_out"])[0]
    assert main(["compare", str(DEMO), "--models", f"{left},bot-balanced", "--min-games", "8", "--boot", "0",
                 "--cache-dir", str(cache)]) == 2
    assert "left out by --min-games 8" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_options_in_report(cache, tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["report", str(DEMO), "--out", str(out), "--no-figures", "--boot", "0", "--cache-dir", str(cache),
                 "--alias", "bot-balanced=Balanced model", "--by", "language", "--min-games", "2", "--json"]) == 0
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert "Balanced model (en)" in rep["by_model"]
    assert "Balanced model (en)" in (out / "tables" / "by_model.csv").read_text(encoding="utf-8")
    assert main(["analyze", str(DEMO), "--alias", "nonsense", "--cache-dir", str(cache)]) == 2
    assert "--alias 'nonsense': give OLD=NEW" in capsys.readouterr().err
