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
