"""One answer to each question about a game (mafiascope.logs.game_facts): the analytics loader, the app's game
list and the audit read a game's language the same way, on every bundled corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from mafiascope.logs import game_index_row, game_language, iter_games, list_game_dirs
from mafiascope.logs.game_facts import INDEX_COLUMNS

ROOT = Path(__file__).resolve().parents[1]
CORPORA = [ROOT / "data" / "demo", ROOT / "data" / "corpus", ROOT / "data" / "arena", ROOT / "tests" / "fixtures" / "logs"]


def test_declared_language_wins_then_the_config_then_the_seats():
    assert game_language({"language": "ru", "config": {"language": "en"}}) == "ru"
    assert game_language({"config": {"language": "ru"}, "players": [{"name": "A", "language": "en"}]}) == "ru"
    assert game_language({"players": [{"name": "A"}, {"name": "B", "language": "ru"}]}) == "ru"


def test_an_undeclared_language_is_read_from_two_texts():
    setup = {"players": [{"name": "A"}]}
    one = [{"kind": "day_discuss", "response": "Я думаю, это Боб."}]
    two = one + [{"kind": "night_analysis", "night_result": "Ночью никто не погиб."}]
    assert game_language(setup, one) == "en"  # one Cyrillic text may be a name or a quote
    assert game_language(setup, two) == "ru"
    assert game_language(setup, [{"kind": "setup", "response": "Привет"}, {"kind": ["x"], "response": "Привет"}] + one) == "en"


def test_the_original_corpora_read_as_their_language():
    langs = {log.game_id: game_language(log.raw_setup, log.records) for log in iter_games(ROOT / "data" / "corpus")}
    assert langs["050b6221-42db-4c45-8e1b-b656c5560541"] == "ru"  # mafiascope_ru_legacy states no language
    assert sorted(set(langs.values())) == ["en", "ru"]


@pytest.mark.slow
def test_the_app_list_and_the_analytics_tables_agree_on_every_bundled_game(tmp_path):
    from mafiascope.analytics.corpus import load_corpus

    for root in CORPORA:
        games = load_corpus(root, cache_dir=tmp_path / root.name, probed_only=False, include_forks=True).games
        by_path = dict(zip(games["path"], games["language"]))
        for d in list_game_dirs(root):
            row = game_index_row(d)
            assert row is not None and list(row) == INDEX_COLUMNS
            assert by_path[str(d.resolve())] == row["language"], d
