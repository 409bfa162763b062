"""report.md and provenance (issue 34 item 3): the selection, the study spec with its name and hash, one
configuration hash per arm (not one per game), the model identity and dates an OpenAI-compatible API reported
per backend, and the project version and commit."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from mafiascope.analytics.corpus import load_corpus
from mafiascope.analytics.manifest import analysis_provenance
from mafiascope.analytics.modes import Mode
from mafiascope.analytics.report_dir import build_dir_report, write_report_dir
from mafiascope.cli import main
from tests.servers import threaded_devserver
from tests.studies import three_model_study

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_study_spec_and_one_config_hash_per_arm_in_report_md(tmp_path):
    study = three_model_study(tmp_path, games=3, arms=(("mixed", "en", "none"), ("mixed-ru", "ru", "none")))
    c = load_corpus(study, cache_dir=tmp_path / "cache", probed_only=False)
    prov = analysis_provenance(c, Mode(boot=0))
    header = json.loads((study / "ledger.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert len(prov["config_sha256"]) == 2  # two arms, six games: one hash per arm (the seat order varies per game)
    assert [(s["name"], s["spec_sha256"], s["games"], s["arms"]) for s in prov["studies"]] == [
        ("three", header["spec_hash"], 6, {"mixed": 3, "mixed-ru": 3})]
    assert sorted((a["study_arms"][0]["arm"], a["games"], a["language"]) for a in prov["arms"]) == [
        ("mixed", 3, "en"), ("mixed-ru", 3, "ru")]
    rep = build_dir_report(c, Mode(boot=0))
    write_report_dir(rep, tmp_path / "out", figures=False)
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "## Selection" in md and "6 games found, 6 analysed." in md
    assert header["spec_hash"] in md and all(h in md for h in prov["config_sha256"])
    assert prov["git_commit"] is None or prov["git_commit"].split("+")[0] in md
    assert f"mafiascope {prov['mafiascope_version']}" in md


def test_selection_lists_every_reason_and_list_it_holds(tmp_path):
    from mafiascope.analytics.report_dir import render_markdown

    sel = {"n_found": 9, "n_selected": 5, "excluded": {"invalid": 2, "fork": 0, "duplicate_game_id": 2},
           "filters": {"language": "en", "include_forks": False, "min_games": 3},
           "duplicate_games": [{"game_id": "g-7"}, {"game_id": "g-8"}], "doubled_games": [],
           "models_left_out": {"tiny-model": 1}}
    rep = {"n_games": 5, "mode": "default", "boot": 0, "seed": 0, "audit": {"selection": sel}, "outcome": {}}
    md = render_markdown(rep, {"outcome": pd.DataFrame(), "by_model": pd.DataFrame(), "f4": pd.DataFrame()}, {})
    assert "9 games found, 5 analysed." in md and "| game over its fault budget (--include-invalid counts them) | 2 |" in md
    assert "| copy of a game id an earlier folder holds (the earlier folder's copy is counted) | 2 |" in md
    assert "| fork" not in md  # a reason that left nothing out is not listed
    assert "duplicate games" in md and "`g-7`" in md and "tiny-model (1)" in md and "language = en" in md


@pytest.mark.slow
def test_api_reported_model_and_dates_per_backend(tmp_path):
    cfg = yaml.safe_load((ROOT / "configs" / "classic.yaml").read_text(encoding="utf-8"))
    with threaded_devserver() as srv:
        cfg["backends"] = {"api": {"type": "openai", "base_url": srv.base_url, "model": "bot-balanced", "timeout": 10}}
        cfg["seats"] = [{"backend": "api"}] * len(cfg["seats"])
        (tmp_path / "game.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
        assert main(["run", "-c", str(tmp_path / "game.yaml"), "--logs", str(tmp_path / "logs"), "--seed", "2", "-q",
                     "--json"]) == 0
    over = [json.loads(x) for x in next((tmp_path / "logs").glob("*/game.jsonl")).read_text().splitlines()][-1]
    reported = over["backends"]["api"]["api_reported"]  # recorded in the game log from now on
    assert reported["models"] and set(reported["models"]) == {"bot-balanced-devserver"}
    assert reported["system_fingerprints"] and reported["created_first"] <= reported["created_last"]
    c = load_corpus(tmp_path / "logs", cache_dir=tmp_path / "cache", probed_only=False)
    [b] = analysis_provenance(c, Mode(boot=0))["backends"]
    assert (b["backend"], b["type"], b["model"], b["games"]) == ("api", "openai", "bot-balanced", 1)
    assert set(b["served_models"]) == {"bot-balanced-devserver"} and b["created_first_utc"].endswith("UTC")
    write_report_dir(build_dir_report(c, Mode(boot=0)), tmp_path / "out", figures=False)
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "bot-balanced-devserver" in md and "fp_devserver_bot-balanced" in md and b["created_first_utc"] in md
