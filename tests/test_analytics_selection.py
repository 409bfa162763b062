"""What a load leaves out is counted and said (issue 32 item 5): copies of a game id, transcript-only games."""

from __future__ import annotations

import shutil

from mafiascope.analytics.corpus import load_corpus
from mafiascope.analytics.selection import DUPLICATE, DUPLICATE_IN_FOLDER

from .handbuilt import write_game


def test_a_game_copied_into_a_second_folder_counts_once(tmp_path):
    one = write_game(tmp_path / "a", "g1", "Mafia")
    write_game(tmp_path / "a", "g2", "Villagers")
    shutil.copytree(one, tmp_path / "b" / "g1")
    alone = load_corpus(tmp_path / "a")
    both = load_corpus([tmp_path / "a", tmp_path / "b"])
    assert both.game_ids == ["g1", "g2"]
    # before, both copies' rows were read under the one id: every probe and vote of g1 counted twice
    assert both.n_rows("probes") == alone.n_rows("probes") and both.n_rows("votes") == alone.n_rows("votes")
    sel = both.selection
    assert sel["n_found"] == 3 and sel["n_selected"] == 2 and sel["excluded"][DUPLICATE] == 1
    assert sel["duplicate_games"] == [{"game_id": "g1", "kept": str((tmp_path / "a" / "g1").resolve()),
                                       "left_out": [str((tmp_path / "b" / "g1").resolve())]}]
    assert sel["n_found"] == sel["n_selected"] + sum(sel["excluded"].values())


def test_one_id_in_two_directories_of_a_folder_is_left_out_and_counted(tmp_path):
    one = write_game(tmp_path / "a", "g1", "Mafia")
    shutil.copytree(one, tmp_path / "a" / "g1-copy")
    write_game(tmp_path / "a", "g2", "Villagers")
    shutil.copytree(one, tmp_path / "b" / "g1")  # a later folder's copy cannot be kept either
    c = load_corpus([tmp_path / "a", tmp_path / "b"])
    assert c.game_ids == ["g2"] and c.n_rows("votes") == 4
    sel = c.selection
    assert sel["excluded"][DUPLICATE_IN_FOLDER] == 3 and sel["excluded"][DUPLICATE] == 0
    (dup,) = sel["duplicate_games"]
    assert dup["game_id"] == "g1" and dup["kept"] is None and len(dup["left_out"]) == 3
    assert sel["n_found"] == sel["n_selected"] + sum(sel["excluded"].values())


PROBE_SECTIONS = ("parse", "cost", "f1", "f2", "f3", "f4", "dynamics", "episodes", "personality", "plans")


def _report(sources, compat: bool = False, boot: int = 150):
    from mafiascope.analytics.corpus import load_for_analysis
    from mafiascope.analytics.modes import Mode
    from mafiascope.analytics.report import build_report

    mode = Mode(compat="mafiascope-2026-07" if compat else None, boot=boot, seed=5)
    return build_report(load_for_analysis(sources, compat), mode, transcripts=True)


def test_transcript_only_games_count_where_no_probe_is_needed(tmp_path):
    """A probed corpus mixed with a transcript-only one: outcomes, votes and the per-model outcome and vote
    figures count every game; the probe-based sections are those of the probed games alone (same values and
    intervals). Before, the transcript-only games were dropped from everything."""
    from .handbuilt import write_corpus

    probed = write_corpus(tmp_path / "probed", ("Mafia", "Villagers", "Villagers"))
    plain = tmp_path / "plain"
    for i, w in enumerate(("Mafia", "Mafia")):
        write_game(plain, f"np-{i}", w, probes=False)
    alone, mixed = _report(probed), _report([probed, plain])
    assert (mixed["n_games"], mixed["n_games_probed"]) == (5, 3) and (alone["n_games"], alone["n_games_probed"]) == (3, 3)
    assert mixed["outcome"]["completed"] == 5 and mixed["outcome"]["mafia_wins"] == 3
    assert mixed["votes"]["votes"] == alone["votes"]["votes"] + 8  # four voters in each transcript-only game
    for key in PROBE_SECTIONS:
        assert mixed[key] == alone[key], key
    seats = mixed["by_model"]["A"]["metrics"]
    assert seats["votes.town_on_mafia_rate"]["n"] == alone["by_model"]["A"]["metrics"]["votes.town_on_mafia_rate"]["n"] + 2
    assert seats["f1.accuracy"] == alone["by_model"]["A"]["metrics"]["f1.accuracy"]
    assert mixed["by_model"]["A"]["f1_by_round"] == alone["by_model"]["A"]["f1_by_round"]
    # compat keeps the original's selection: games without probe logs are left out, and counted
    compat = _report([probed, plain], compat=True)
    assert compat["n_games"] == 3 and compat["audit"]["selection"]["excluded"]["no_probes"] == 2
    assert compat["f1"] == _report(probed, compat=True)["f1"]


def test_every_exclusion_is_said_in_the_text_report_and_report_md(tmp_path):
    """The text report and report.md say how many games were found and analysed, and each reason games were
    left out with its count (a fork and a duplicate copy here), and which sections count the transcript-only games."""
    import json

    from mafiascope.analytics.report import format_report
    from mafiascope.analytics.report_dir import write_report_dir

    from .handbuilt import write_corpus

    root = write_corpus(tmp_path / "a", ("Mafia", "Villagers"))
    fork = write_game(tmp_path / "a", "fork-1", "Villagers")
    lines = (fork / "game.jsonl").read_text().splitlines()
    setup = json.loads(lines[0])
    setup["forked_from"] = "hb-00"
    (fork / "game.jsonl").write_text("\n".join([json.dumps(setup), *lines[1:]]) + "\n")
    shutil.copytree(root / "hb-00", tmp_path / "b" / "hb-00")
    write_game(tmp_path / "b", "np-0", "Mafia", probes=False)
    rep = _report([tmp_path / "a", tmp_path / "b"], boot=0)
    text = format_report(rep)
    assert "Selection: 5 games found, 3 analysed (2 with probe logs" in text and "1 transcript-only" in text
    assert "1 fork (--include-forks counts them)" in text and "1 copy of a game id an earlier folder holds" in text
    write_report_dir({**rep, "comparisons": [], "provenance": {}}, tmp_path / "out", figures=False)
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "| fork (--include-forks counts them) | 1 |" in md and "3 analysed" in md and "transcript-only" in md
    assert "| copy of a game id an earlier folder holds (the earlier folder's copy is counted) | 1 |" in md
