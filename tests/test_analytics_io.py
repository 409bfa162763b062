"""Importer losslessness, cache, bad input, episodes, bootstrap determinism, CLI shape."""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"  # the original's real corpora, bundled
EN = CORPUS / "mafiascope_en_demo"
RU = CORPUS / "mafiascope_ru_legacy"


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("src", [EN, RU], ids=["en", "ru"])
def test_import_is_lossless(src, tmp_path):
    from mafiascope.analytics.original_format import import_corpus, is_original_game

    dest = tmp_path / "out"
    stats = import_corpus(src, dest)
    games = [d for d in src.iterdir() if d.is_dir()]
    assert stats["games"] == len(games)
    for gd in games:
        assert is_original_game(gd) and not is_original_game(dest / gd.name)
        orig, new = _jsonl(gd / "game.jsonl"), _jsonl(dest / gd.name / "game.jsonl")
        assert len(orig) == len(new)
        for a, b in zip(orig, new):
            for k, v in a.items():  # every original field kept, unchanged
                assert b[k] == v
            if a["kind"] == "day_vote":
                assert {"target", "target_valid", "parse_note", "tally_target"} <= set(b)
                if b["tally_target"] is not None and b["target_valid"]:
                    assert b["target"] == b["tally_target"]
        for f in gd.iterdir():
            if f.name != "game.jsonl":
                assert (dest / gd.name / f.name).read_bytes() == f.read_bytes()
    assert stats["parsed"] >= stats["votes"] - 1


def test_vote_parser_reads_markdown_bold():
    from mafiascope.analytics.votes import parse_vote_target

    names = ["Gray", "Bailey", "Logan"]
    assert parse_vote_target("I think so.\n\n**VOTE: Bailey**", names).target == "Bailey"
    assert parse_vote_target("Итак.\n\nГОЛОС: Logan", names).target == "Logan"
    assert not parse_vote_target("no marker here", names).valid


def test_import_recovers_the_stated_votes_the_original_tally_dropped(tmp_path):
    """Replies that state the vote in a sentence are read on import; the tally's own entry is kept beside it."""
    from mafiascope.analytics.original_format import import_corpus

    def vote(player: str, text: str) -> dict:
        return {"game_id": "imp-0", "kind": "day_vote", "round": 1, "player": player, "response": text, "ts": 5.0}

    votes = [vote("Bob", "Ann dodged every question. I'm voting for Ann."), vote("Cid", "Я голосую за Ann."),
             vote("Dee", "VOTE: Ann"), vote("Ann", "I'm not voting for Bob, but Cid? Maybe.")]
    tally = {"game_id": "imp-0", "kind": "vote_tally", "round": 1, "tally": {"Ann": 1}, "votes": {"Dee": "Ann"}, "ts": 6.0}
    _tiny_game(tmp_path / "src" / "imp-0", probes=False, extra=[*votes, tally])
    stats = import_corpus(tmp_path / "src", tmp_path / "out")
    assert (stats["votes"], stats["parsed"], stats["tally_missed"], stats["disagree"]) == (4, 3, 2, 0)
    got = {r["player"]: (r["target"], r["tally_target"]) for r in _jsonl(tmp_path / "out" / "imp-0" / "game.jsonl")
           if r["kind"] == "day_vote"}
    assert got == {"Bob": ("Ann", None), "Cid": ("Ann", None), "Dee": ("Ann", "Ann"), "Ann": (None, None)}


def _tiny_game(d: Path, *, torn: bool = False, probes: bool = True, extra: list[dict] | None = None,
               answers: list | None = None) -> Path:
    d.mkdir(parents=True)
    gid = d.name
    players = [{"name": n, "role": r, "model": "m"} for n, r in
               [("Ann", "Mafia"), ("Bob", "Villager"), ("Cid", "Villager"), ("Dee", "Doctor")]]
    recs = [{"game_id": gid, "kind": "setup", "round": 0, "players": players, "ts": 1.0},
            {"game_id": gid, "kind": "intro", "round": 0, "player": "Ann", "response": "hi", "msg_seq": 1, "ts": 2.0},
            *(extra or []),
            {"game_id": gid, "kind": "game_over", "round": 1, "winner": "Mafia", "ts": 9.0}]
    text = "".join(json.dumps(r) + "\n" for r in recs)
    if torn:
        text += '{"game_id": "' + gid + '", "kind": "night_k'
    (d / "game.jsonl").write_text(text)
    if probes:
        lines = []
        for i, ans in enumerate(answers or []):
            lines.append(json.dumps({
                "timestamp": 3.0 + i, "game_id": gid, "round": 0, "public_msg_seq": 1, "player_idx": 1,
                "player_name": "Bob", "probe_seq": 0, "probe_id": "role_assessment", "question": "q",
                "answer_raw": json.dumps(ans) if not isinstance(ans, str) else ans, "answer_parsed": ans if not isinstance(ans, str) else None,
                "answer_parse_ok": not isinstance(ans, str), "model": "m", "role": "Villager", "phase": "intro",
            }, allow_nan=True))
        (d / "introspection.jsonl").write_text("\n".join(lines) + ("\n" if lines else ""))
    return d


@pytest.mark.slow
def test_bad_input_is_counted_not_crashed(tmp_path):
    from mafiascope.analytics.corpus import load_corpus
    from mafiascope.analytics.f2 import f2
    from mafiascope.analytics.modes import DEFAULT
    from mafiascope.analytics.report import build_report

    root = tmp_path / "logs"
    good = [{"player": "Ann", "guessed_role": "Mafia", "confidence": 80},
            {"player": "Cid", "guessed_role": "Villager", "confidence": 60}]
    _tiny_game(root / "g1", torn=True, answers=[good])
    _tiny_game(root / "g2", answers=[
        {"player": "Ann"},  # non-list answer
        [{"player": "Ann", "guessed_role": "Mafia", "confidence": float("nan")},
         {"player": "Cid", "guessed_role": "Villager", "confidence": 250},
         {"player": "Zed", "guessed_role": "Mafia", "confidence": 90}],
    ], extra=[{"game_id": "g2", "kind": "weird_kind", "round": 0, "ts": 2.5}])
    _tiny_game(root / "g3", probes=False)
    (root / "g4").mkdir()
    (root / "g4" / "game.jsonl").write_text('{"kind": "intro"}\n')  # no setup
    c = load_corpus(root, cache_dir=tmp_path / "cache", probed_only=False)
    rep = build_report(c, DEFAULT.__class__(boot=50))
    t = rep["audit"]["totals"]
    assert t["game.torn_last_line"] == 1
    assert t["probes.missing_file"] == 1
    assert t["game.unknown_kind"] == 1
    assert t["answers.non_list.role_assessment"] == 1
    assert t["answers.nan_confidence"] == 1
    assert t["answers.out_of_range_confidence"] == 1
    assert t["answers.unknown_player"] == 1
    assert rep["audit"]["selection"]["unparseable_games"] == ["g4"] or "g4" in str(rep["audit"])
    # calibration: exactly the in-range confidences of known, committed, non-self targets (80, 60, none of 250/NaN)
    cal = f2(c, DEFAULT.__class__(boot=0), breakdowns=False)
    assert cal["n"] == 2
    assert cal["brier"] == pytest.approx(((0.8 - 1) ** 2 + (0.6 - 1) ** 2) / 2)


@pytest.mark.slow
def test_cache_incremental(tmp_path):
    from mafiascope.analytics.cache import load_dir_games
    from mafiascope.analytics.corpus import find_game_dirs, load_corpus

    root = tmp_path / "logs"
    ans = [[{"player": "Ann", "guessed_role": "Mafia", "confidence": 80}]]
    _tiny_game(root / "a", answers=ans)
    cache = tmp_path / "cache"
    r1 = load_dir_games(root, find_game_dirs(root), cache_dir=cache)
    assert r1.n_parsed == 1
    r2 = load_dir_games(root, find_game_dirs(root), cache_dir=cache)
    assert r2.n_parsed == 0
    _tiny_game(root / "b", answers=ans)
    r3 = load_dir_games(root, find_game_dirs(root), cache_dir=cache)
    assert r3.n_parsed == 1 and set(r3.tables["games"]["game_id"]) == {"a", "b"}
    c = load_corpus(root, cache_dir=cache, manifest=["b"])
    assert c.game_ids == ["b"]


def test_episode_shift_worked_example():
    from mafiascope.analytics.episodes import shift

    before = {1: "Alex", 2: "Alex", 3: "Alex", 4: "Gray", 5: "Gray", 6: "Casey"}
    after = {1: "Gray", 2: "Gray", 3: "Logan", 4: "Gray", 5: "Logan", 6: "Gray"}
    D, K, sw = shift(before, after)
    assert D == Fraction(4, 6)
    assert K == 5 and sw == [1, 2, 3, 5, 6]


@pytest.mark.slow
def test_episode_in_demo_game(tmp_path):
    from mafiascope.analytics.corpus import load_corpus
    from mafiascope.analytics.episodes import find_episodes

    e = find_episodes(load_corpus(EN, cache_dir=tmp_path))
    hit = [x for x in e["candidates"] if x["game_id"].startswith("36594b66") and x["after"] == "R1.7"]
    assert len(hit) == 1
    assert (hit[0]["D_fraction"], hit[0]["K"], hit[0]["speaker"]) == ("2/3", 4, "Logan")
    assert 0 < e["d_positive"] <= e["complete"] <= e["comparisons"]


def test_bootstrap_deterministic_and_seeded():
    from mafiascope.analytics.modes import Mode
    from mafiascope.analytics.intervals import ratio_ci
    from mafiascope.analytics.stats import _multiplicities

    k = np.array([3.0, 5.0, 1.0, 7.0])
    n = np.array([10.0, 10.0, 10.0, 10.0])
    for compat in (None, "mafiascope-2026-07"):
        a = ratio_ci(k, n, Mode(compat=compat)).value()
        _multiplicities.cache_clear()
        assert ratio_ci(k, n, Mode(compat=compat)).value() == a
        assert not np.array_equal(_multiplicities(4, 1000, 1, compat is not None), _multiplicities(4, 1000, 0, compat is not None))
    # compat draws are Python's random.Random(0).randrange sequence
    import random

    rng = random.Random(0)
    first = [rng.randrange(4) for _ in range(4)]
    counts = np.asarray(_multiplicities(4, 1000, 0, True))[0]
    assert counts.tolist() == np.bincount(first, minlength=4).tolist()


def test_wilson():
    from mafiascope.analytics.stats import wilson

    lo, hi = wilson(5, 10)
    assert lo == pytest.approx(0.236593, abs=1e-6) and hi == pytest.approx(0.763407, abs=1e-6)
    assert wilson(0, 0) == (0.0, 1.0)


def test_answer_repair():
    from mafiascope.analytics.answers import extract_json

    assert extract_json('```json\n[{"a": 1}, {"b": 2}, {"c": ') == ([{"a": 1}, {"b": 2}], True)
    assert extract_json("ERROR: connection reset") == (None, False)
    assert extract_json('[1, 2}') == (None, False)


def test_labels():
    from mafiascope.analytics import labels as L

    assert L.normalise_role("Villager or Doctor") == L.VILLAGER
    assert L.normalise_role("Possible Mafia") == L.MAFIA
    assert L.normalise_role("Mafia|Villager") == L.MAFIA
    assert L.normalise_role("мирный житель") == L.VILLAGER
    assert L.normalise_role("Мафия") == L.MAFIA
    assert L.normalise_role("мафия", russian=False) == L.UNUSABLE
    assert L.normalise_role(42) == L.UNUSABLE


@pytest.mark.slow
def test_cli_json_shape(tmp_path, capsys):
    from mafiascope.cli import main

    assert main(["analyze", str(EN), "--boot", "20", "--json", "--cache-dir", str(tmp_path)]) == 0
    d = json.loads(capsys.readouterr().out)
    for path in ["f2.ece", "f2.brier", "f2.n", "f3.ratio", "f3.n_pairs", "f3.ratio_innocent", "f3.ratio_mafia",
                 "f4.innocent.top1.k", "f4.innocent.top1.n", "f4.innocent.committed_set.k",
                 "f4.innocent.committed_set.n", "dynamics.volatility", "dynamics.flip_rate", "dynamics.return_rate",
                 "parse.calls", "parse.parsed", "episodes.complete", "episodes.d_positive"]:
        x = d
        for k in path.split("."):
            x = x[k]
        assert x is not None, path
    out = tmp_path / "edges"
    assert main(["dynamics", str(EN), "--boot", "0", "--export-graph", str(out), "--cache-dir", str(tmp_path)]) == 0
    import pandas as pd

    df = pd.read_parquet(out / "belief_edges.parquet")
    assert list(df.columns)[:5] == ["game_id", "source", "destination", "timestamp", "round"]
    assert main(["analyze", str(tmp_path / "nothing")]) == 2


@pytest.mark.slow
def test_cli_text_report_prints_transcript_baselines(tmp_path, capsys):
    from mafiascope.cli import main

    args = ["analyze", str(EN), "--boot", "0", "--cache-dir", str(tmp_path), "--compat", "mafiascope-2026-07"]
    assert main(args) == 0
    assert "transcript most_mentioned" not in capsys.readouterr().out
    assert main(args + ["--transcripts"]) == 0
    out = capsys.readouterr().out
    assert "mafia    transcript most_mentioned 9/11" in out
    assert "innocent transcript most_accused   16/26" in out


@pytest.mark.slow
def test_cache_lives_outside_the_corpus_keyed_by_its_path(tmp_path, monkeypatch):
    """The default cache is per corpus under $MAFIASCOPE_CACHE_DIR / the XDG cache dir, never in the corpus
    (a .mafiascope_cache in a corpus was later counted as a game and broke a second test run)."""
    from mafiascope.analytics.cache import cache_dir_for, load_dir_games
    from mafiascope.analytics.corpus import find_game_dirs

    ans = [[{"player": "Ann", "guessed_role": "Mafia", "confidence": 80}]]
    for corpus in ("one/logs", "two/logs"):
        _tiny_game(tmp_path / corpus / "a", answers=ans)
    before = {p.relative_to(tmp_path) for p in (tmp_path / "one").rglob("*")}
    monkeypatch.setenv("MAFIASCOPE_CACHE_DIR", str(tmp_path / "env-cache"))
    r1 = load_dir_games(tmp_path / "one/logs", find_game_dirs(tmp_path / "one/logs"))
    r2 = load_dir_games(tmp_path / "two/logs", find_game_dirs(tmp_path / "two/logs"))
    assert r1.cache_path.parent == r2.cache_path.parent == tmp_path / "env-cache"
    assert r1.cache_path != r2.cache_path  # same directory name, different corpora
    assert (r1.cache_path / "manifest.json").is_file()
    assert {p.relative_to(tmp_path) for p in (tmp_path / "one").rglob("*")} == before
    assert load_dir_games(tmp_path / "one/logs", find_game_dirs(tmp_path / "one/logs")).n_parsed == 0

    monkeypatch.delenv("MAFIASCOPE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir_for(tmp_path / "one/logs").parent == tmp_path / "xdg" / "mafiascope"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir_for(tmp_path / "one/logs").parent == tmp_path / "home" / ".cache" / "mafiascope"
