"""The Arena report's tables as the page shows them: words for columns, rates and intervals as text, "—" for no
data, and whether a leaderboard can rank anything at all (a one-game-per-rule run cannot)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from mafiascope.lexicon import glossary

RULE_NAMES = {"sport": "Sport", "open_table": "Open table", "imbalanced": "Imbalanced"}

PAIR_COLUMNS = {
    "teammates": {"a": "model A", "b": "model B", "games": "games together", "mafia_games": "as Mafia",
                  "town_games": "as town", "total": "won above the side's rate", "per_game": "per game",
                  "ranked": "ranked"},
    "rivals": {"a": "model A", "b": "model B", "games": "games against", "clashes": "clashes", "a_wins": "won by A",
               "accusations": "accusations", "total": "total", "per_game": "per game", "ranked": "ranked"},
    "mismatches": {"a": "model A (its side)", "b": "model B", "games": "games against", "wins": "won by A's side",
                   "total": "won above A's side's rate", "per_game": "per game", "ranked": "ranked"},
}
PAIR_NOTES = {
    "teammates": "Pairs of models on the same side in a game: how much more often that side won than its usual rate "
                 "under those rules.",
    "rivals": "Pairs on opposite sides that accused each other (a nomination or a day vote) in the same game.",
    "mismatches": "Model A on one side, model B on the other: how much more often A's side won than its usual rate.",
}


def pairs_table(kind: str, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """One kind of pairs (teammates, rivals, mismatches) with its columns named in words."""
    names = PAIR_COLUMNS[kind]
    df = pd.DataFrame(rows, columns=list(names) if not rows else None)
    return df.rename(columns=names)


def _pct(v: Any) -> str | None:
    return None if v is None else f"{float(v):.0%}"


def _interval(ci: Any) -> str | None:
    return f"{ci[0]:.0%}–{ci[1]:.0%}" if isinstance(ci, (list, tuple)) and len(ci) == 2 and None not in ci else None


def _of(k: Any, n: Any) -> str | None:
    return None if k is None or not n else f"{k}/{n}"


# (row label, how to read it from one rule set's measures)
MEASURES: list[tuple[str, Any]] = [
    ("games", lambda m: m.get("games")),
    ("Mafia wins", lambda m: _of(m.get("mafia_wins"), m.get("games"))),
    ("Mafia win rate", lambda m: _pct(m.get("mafia_win_rate"))),
    ("Mafia win rate, 95% interval (Wilson)", lambda m: _interval(m.get("mafia_win_ci"))),
    ("draws", lambda m: m.get("draws")),
    ("town ballots", lambda m: m.get("town_ballots")),
    ("share of town ballots on Mafia", lambda m: _pct(m.get("town_ballots_on_mafia"))),
    ("day turns per game", lambda m: m.get("day_turns_per_game")),
    ("first votes that removed a town player", lambda m: _of(m.get("first_vote_removed_town"), m.get("first_votes"))),
    ("town wins after such a first vote", lambda m: m.get("town_wins_after_wrong_first_vote")),
    ("night shots", lambda m: m.get("night_shots")),
    ("night shots missed", lambda m: m.get("night_shots_missed")),
    ("mean rounds", lambda m: m.get("mean_rounds")),
    ("games with a best-move bonus", lambda m: m.get("best_move_bonus_games")),
]


def rule_measures_table(measures: list[dict[str, Any]]) -> pd.DataFrame:
    """What the rules do: one row per measure, one column per rule set (three narrow columns, nothing cut)."""
    cols = {RULE_NAMES.get(str(m.get("rules")), str(m.get("rules"))): m for m in measures}
    rows = [{"measure": label, **{c: ("—" if (v := read(m)) is None else str(v)) for c, m in cols.items()}}
            for label, read in MEASURES]
    return pd.DataFrame(rows)


def _won(cell: dict[str, Any]) -> str:
    """``3/5``, or ``—`` when the model never played that side or role."""
    return f"{cell['wins']}/{cell['games']}" if cell.get("games") else "—"


def _found(k: Any, n: Any) -> str:
    return f"{k}/{n}" if n else "—"


def models_table(rep: dict[str, Any]) -> pd.DataFrame:
    """Models by side and role, short cells (games won of played, checks that found their target): a column per rule
    set that was played, none for one that was not."""
    rows = []
    for m in rep["models"]:
        row: dict[str, Any] = {"model": m["model"]}
        for rs in rep["rule_sets"]:
            row[f"Mafia: {RULE_NAMES.get(rs, rs)}"] = _won(m["mafia_win_rate"].get(rs) or {})
        if "imbalanced" in rep["rule_sets"]:
            row["town: Imbalanced"] = _won(m["town_imbalanced"])
        don, sheriff = m["don"], m["sheriff"]
        row["Don: won"] = _won(don)
        row["Don: hits"] = _found(don.get("sheriff_found"), don.get("checks"))
        row["Sheriff: won"] = _won(sheriff)
        row["Sheriff: hits"] = _found(sheriff.get("mafia_found"), sheriff.get("checks"))
        rows.append(row)
    return pd.DataFrame(rows)


def town_side_note(rep: dict[str, Any]) -> str:
    """The town side's win rate under the imbalanced rules (what "town won · Imbalanced" compares with)."""
    avg = next((m["town_imbalanced"].get("side_average") for m in rep["models"] if m["town_imbalanced"].get("side_average") is not None), None)
    return f"Under the imbalanced rules the town side won {avg:.0%} of its games." if avg is not None else ""


def board_problem(board: list[dict[str, Any]]) -> str | None:
    """Why a leaderboard cannot rank its models, or None. Points vs side compares a seat with its side's average in the
    same rule set: when no score differs (one game per rule set, or games where every seat of a side scored alike)
    every model ties at 0 ± 0, which is not a ranking."""
    scores = {round(float(r.get("score") or 0.0), 9) for r in board}
    if len(board) < 2 or len(scores) > 1:
        return None
    games = max((int(r.get("games") or 0) for r in board), default=0)
    return (f"Not enough games to rank: over {games} game{'s' if games != 1 else ''} every seat scored exactly its side's "
            f"average, so every model has {glossary.BY_KEY['points vs side'].name.lower()} 0 ± 0. Play more games per "
            "rule set.")


BOARD_HELP = {"score": glossary.tip("score"), "se": glossary.tip("se"), "rank": "Position by score (ties share a rank).",
              "wins": "Seats of the model whose side won.", "seats": "Seats the model played (a game may seat it more than once)."}
