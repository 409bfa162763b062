"""A probe call skipped for lagging (only with probes.max_lag_s) is never a call, a transport error or a
parse failure in the analytics; it is counted per seat and shown per model as probe coverage."""

from __future__ import annotations

import json
from pathlib import Path

from mafiascope.analytics.load import parse_rows
from mafiascope.analytics.report import build_report
from mafiascope.analytics.corpus import load_corpus
from mafiascope.analytics.modes import Mode

from .handbuilt import write_corpus


def _skip_one(gdir: Path, who: str) -> None:
    """Append the record of a call skipped for lagging, as the engine writes it (no answer, ``lagged``)."""
    rec = {"timestamp": 2.4, "game_id": gdir.name, "round": 1, "public_msg_seq": 2, "player_name": who, "probe_seq": 0,
           "probe_id": "role_assessment", "phase": "day_discuss", "question": "", "answer_raw": None, "answer_parsed": None,
           "answer_parse_ok": False, "error": "lagged: the backend's probe queue needs ~9s, over max_lag_s 5s", "lagged": True}
    with open(gdir / "introspection.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec) + "\n")


def test_skipped_calls_are_counted_apart_and_never_as_calls_errors_or_parse_failures(tmp_path, monkeypatch):
    monkeypatch.setenv("MAFIASCOPE_CACHE_DIR", str(tmp_path / "cache"))
    root = write_corpus(tmp_path / "logs")
    before = build_report(load_corpus(root), Mode(boot=50))["parse"]
    for g in sorted(root.iterdir()):
        _skip_one(g, "Bob")
        _skip_one(g, "Bob")
        _skip_one(g, "Cy")
    rows = parse_rows(root / "hb-00")
    assert len(rows.base["probes"]) == 3 and rows.audit["probes.skipped"] == 3
    assert {r[1]: r[-1] for r in rows.base["players"]} == {"Ann": 0, "Bob": 2, "Cy": 1, "Dee": 0}
    rep = build_report(load_corpus(root), Mode(boot=50))
    after = rep["parse"]
    for k in ("calls", "parsed", "transport_errors", "parse_rate"):
        assert after[k] == before[k], k
    m = {model: v["metrics"] for model, v in rep["by_model"].items()}
    # model A: Bob answered 1 and skipped 2 per game; model B: Cy answered 2 (one unparsed) and skipped 1
    assert m["A"]["probes.answered_share"]["point"] == round(1 / 3, 6) and m["A"]["probes.skipped_share"]["point"] == round(2 / 3, 6)
    assert m["B"]["probes.answered_share"]["point"] == round(2 / 3, 6) and m["B"]["probes.skipped_share"]["point"] == round(1 / 3, 6)
    assert m["B"]["parse.parse_rate"]["point"] == 0.5  # the unparsed answer is a parse failure; the skipped call is not
