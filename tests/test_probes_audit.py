"""``mafiascope audit`` / ``cost`` / ``probes validate``: clean games pass, leaked contexts are caught."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mafiascope.engine.snapshots import iter_snapshots
from mafiascope.cli import main
from mafiascope.config import load_game_config
from mafiascope.play.game import play_game
from mafiascope.logs.io import iter_probe_records, read_jsonl
from mafiascope.probes.audit import audit_logs
from mafiascope.probes.cost import cost_logs

pytest.importorskip("mafiascope.backends.bot")
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("logs")
    for seed, config in ((1, "configs/classic.yaml"), (2, "configs/classic_sheriff.yaml")):
        asyncio.run(play_game(load_game_config(REPO / config), logs_dir=root, seed=seed, game_id=f"g{seed}", probes=True))
    return root


def _rewrite_state(src: Path, dst: Path, mutate) -> None:
    dst.mkdir(parents=True)
    for name in ("game.jsonl", "introspection.jsonl"):
        (dst / name).write_text((src / name).read_text(encoding="utf-8"), encoding="utf-8")
    snaps = list(iter_snapshots(src / "state.jsonl"))
    mutate(snaps)
    (dst / "state.jsonl").write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in snaps), encoding="utf-8")


@pytest.mark.slow
def test_clean_games(logs, capsys):
    res = audit_logs(logs)
    assert res["games"] == 2 and res["leaks"] == 0 and res["messages_checked"] > 1000
    assert main(["audit", str(logs), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"games", "messages_checked", "leaks"} <= set(out) and out["leaks"] == 0


@pytest.mark.slow
def test_leaked_probe_answer_and_question(logs, tmp_path, capsys):
    probe = list(iter_probe_records(logs / "g1"))[5]

    def leak(snaps):
        last = snaps[-1]["players"][0]["messages"]
        last.append({"role": "user", "content": "[PRIVATE PROBE - answer honestly]\n" + probe["question"]})
        last.append({"role": "assistant", "content": probe["answer_raw"]})

    _rewrite_state(logs / "g1", tmp_path / "leaky", leak)
    res = audit_logs(tmp_path / "leaky")
    kinds = res["per_game"][0]["by_kind"]
    assert kinds.get("probe_header") == 1 and kinds.get("probe_question") == 1 and kinds.get("probe_answer") == 1
    assert main(["audit", str(tmp_path / "leaky")]) == 1
    assert "leaks=3" in capsys.readouterr().out


@pytest.mark.slow
def test_leaked_private_event(logs, tmp_path):
    events = read_jsonl(logs / "g2" / "game.jsonl")
    private = next(e for e in events if e.get("visible_to") and e.get("kind") == "night_doctor" and len(e["response"]) >= 12)
    outsider = next(e["player"] for e in events if e.get("kind") == "intro" and e["player"] not in private["visible_to"])

    def leak(snaps):
        p = next(p for p in snaps[-1]["players"] if p["name"] == outsider)
        p["messages"].append({"role": "user", "content": "Rumour: " + private["response"]})

    _rewrite_state(logs / "g2", tmp_path / "leaky2", leak)
    res = audit_logs(tmp_path / "leaky2")
    assert res["per_game"][0]["by_kind"] == {"private_event": 1}


def test_cost(logs, capsys):
    res = cost_logs(logs)
    assert res["games"] == 2
    t = res["totals"]
    assert t["probe_calls"] > 500 and t["act_calls"] > 20 and t["multiplier"] > 10
    assert set(t["by_probe"]) == {"role_assessment", "suspicion_ranking", "social_map", "personality_profile", "planned_action"}
    assert main(["cost", str(logs), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["totals"]["probe_calls"] == t["probe_calls"]
    assert main(["cost", str(logs / "g1")]) == 0
    assert "probe calls=" in capsys.readouterr().out


def test_cost_of_original_corpus_is_an_estimate():
    corpus = REPO / "data" / "corpus" / "mafiascope_en_demo"  # the bundled copy of the original corpus
    g = cost_logs(corpus)["per_game"][0]
    assert g["source"] == "introspection.jsonl" and g["tokens_estimated"] and g["probe_calls"] > 100


def test_validate_cli(tmp_path, capsys):
    assert main(["probes", "validate", str(REPO / "configs/probes/chained_en.yaml")]) == 0
    assert capsys.readouterr().out.startswith("OK")
    bad = tmp_path / "bad.yaml"
    bad.write_text("probes:\n  - id: p\n    question: 'Hi {who}'\n", encoding="utf-8")
    assert main(["probes", "validate", str(bad), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and any("{who}" in e and "'p'" in e for e in out["errors"])
    assert main(["probes", "validate", str(tmp_path / "missing.yaml")]) == 2
    assert main(["audit", str(tmp_path / "nothing")]) == 2
