"""Game logs as pandas DataFrames for notebooks (after Inspect AI's ``evals_df`` / ``samples_df``).

Five tidy frames, each read from the columnar analytics cache (:mod:`mafiascope.analytics.cache`:
the first load of a corpus parses it, later loads read Parquet), never by parsing the logs again:

* :func:`games_df` -- one row per game;
* :func:`seats_df` -- one row per seat of a game;
* :func:`votes_df` -- one row per counted day vote;
* :func:`probes_df` -- one row per probe call, its parsed scalar answer fields as ``answer_*`` columns;
* :func:`beliefs_df` -- one row per assessed player per probe call (role guesses, suspicion
  scores, attitudes, personality estimates).

Every frame carries the game's ``game_id``, ``language``, ``rule_set``, ``study`` and ``arm`` (the
study, arena or batch ledger that scheduled the game; for a fork, the replay experiment or fork batch
that made it and its arm: ``pre``/``post`` of an attribution, ``variant-<i>`` of a bifurcation,
``fork``; else empty), and the seat-level ones the
seat's ``model``, ``role`` and ``side`` (for beliefs: the observer's, and the assessed player's as
``target_*``). Each function takes logs (a directory, a game directory, a glob or a list of them:
the selection of ``mafiascope analyze``) or an already loaded corpus (:func:`load`), so a notebook
loads once and asks for several frames. docs/logs.md has a worked example.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .analytics import labels as L
from .analytics.corpus import Corpus, load_corpus
from .analytics.custom import custom_probe_ids, custom_records
from .analytics.row_values import NO_SEQ
from .logs.steps import step_label

Logs = str | Path | Sequence[str | Path] | Corpus
MAFIA_SIDE, TOWN_SIDE = "Mafia", "Town"
GAME_COLUMNS = ("game_id", "language", "rule_set", "study", "arm")


def load(logs: str | Path | Sequence[str | Path], *, include_forks: bool = False, include_invalid: bool = True,
         probed_only: bool = False, **selection: Any) -> Corpus:
    """The corpus behind the frames: every played game by default (games over their fault budget and games
    without probe logs included; the frames say which is which). Forks -- replay branches: fork batches,
    an attribution's PRE/POST rerolls, a bifurcation's variants -- continue another game's first steps, so
    they join only when asked (``include_forks=True``), named by ``study``/``arm``. ``selection``: the other
    :func:`~mafiascope.analytics.corpus.load_corpus` filters (``language``, ``model``, ``rule_set``,
    ``completed_only``, ``manifest``, ``cache_dir``, ...)."""
    return load_corpus(logs if isinstance(logs, (str, Path)) else list(logs), include_forks=include_forks,
                       include_invalid=include_invalid, probed_only=probed_only, **selection)


def _corpus(logs: Logs) -> Corpus:
    return logs if isinstance(logs, Corpus) else load(logs)


# ----------------------------------------------------------------------------- shared columns


class _Seats:
    """(game, seat) -> a players column as categorical codes, and the game columns by game index."""

    def __init__(self, c: Corpus):
        self.c = c
        p = c.cols("players", ["g", "seat", "name", "role", "role_code", "model"])
        self.g, self.seat = p["g"].to_numpy(np.int64), p["seat"].to_numpy(np.int64)
        self.width = int(self.seat.max()) + 1 if len(p) else 0
        side = _side(p["role_code"].to_numpy(np.int64))
        self._cols = {"name": p["name"], "role": p["role"], "model": p["model"], "side": pd.Series(side, dtype=object)}
        self._codes: dict[str, tuple[np.ndarray, pd.Index]] = {}
        self.games = _game_columns(c)

    def _table(self, col: str) -> tuple[np.ndarray, pd.Index]:
        if col not in self._codes:
            cat = pd.Categorical(self._cols[col].astype(object).where(self._cols[col].notna(), None))
            codes = np.full((self.c.m, self.width), -1, dtype=np.int32)
            codes[self.g, self.seat] = cat.codes
            self._codes[col] = (codes, cat.categories)
        return self._codes[col]

    def pick(self, col: str, g: np.ndarray, seat: np.ndarray) -> pd.Categorical:
        """The column of each (game, seat) row; missing for a seat index that names no seat (-1)."""
        codes, cats = self._table(col)
        ok = (seat >= 0) & (seat < self.width)
        out = np.full(len(g), -1, dtype=np.int32)
        out[ok] = codes[g[ok], seat[ok]]
        return pd.Categorical.from_codes(out, categories=cats)

    def game(self, col: str, g: np.ndarray) -> pd.Categorical:
        cat = self.games[col]
        return pd.Categorical.from_codes(cat.codes[g], categories=cat.categories)


def _game_columns(c: Corpus) -> dict[str, pd.Categorical]:
    """The game-level columns every frame carries, one categorical per column in game order."""
    study, arm = _ledger_arms(c)
    g = c.games
    return {"game_id": pd.Categorical(g["game_id"]), "language": pd.Categorical(g["language"]),
            "rule_set": pd.Categorical(g["rule_set"]), "study": pd.Categorical(study), "arm": pd.Categorical(arm)}


def _ledger_arms(c: Corpus) -> tuple[list[str | None], list[str | None]]:
    """(study name, arm) per game from the ledger that scheduled it: a study directory's ``ledger.jsonl``
    (games under ``<study>/games/``), an arena run's ``.study/`` or a batch's ``.batches/<prefix>/``
    (games beside them); (None, None) for a game no ledger names."""
    from .analytics.manifest import scheduled_by

    found = {gid: (header.get("name"), arm) for gid, (header, arm) in scheduled_by(list(c.games["path"])).items()}
    g = c.games
    pairs = [found.get(gid) or (_fork_arm(path) if parent else (None, None))
             for gid, path, parent in zip(g["game_id"], g["path"], g["forked_from"].fillna(""))]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _fork_arm(game_path: str) -> tuple[str | None, str | None]:
    """(experiment or fork batch, arm) of a fork, from its setup record: an attribution's ``pre``/``post``,
    a bifurcation's ``variant-<i>``, else ``fork``."""
    from .logs.io import GAME_FILE, loads_line

    try:
        with open(Path(game_path) / GAME_FILE, "rb") as fh:
            setup = loads_line(fh.readline())
    except (OSError, ValueError):
        return None, "fork"
    if not isinstance(setup, dict):
        return None, "fork"
    iv = setup.get("intervention") if isinstance(setup.get("intervention"), dict) else {}
    batch = setup.get("fork_batch_id")
    study = setup.get("experiment") or (f"fork-{batch}" if batch else None)
    arm = setup.get("arm") or (f"variant-{iv['variant_idx']}" if iv.get("variant_idx") is not None else "fork")
    return (str(study) if study else None), str(arm)


def _side(codes: np.ndarray) -> np.ndarray:
    """Role codes as sides (Mafia for Mafia and Don, else Town); None for no usable role."""
    return np.where(codes < 0, None, np.where(np.isin(codes, [L.MAFIA, L.DON]), MAFIA_SIDE, TOWN_SIDE))


def _role_names(codes: np.ndarray) -> pd.Categorical:
    """Role codes as names (Mafia, Villager, Doctor, Sheriff, Unknown, Don); missing for a negative code."""
    cats = [L.CODE_NAMES[k] for k in sorted(L.CODE_NAMES)]
    pos = {k: i for i, k in enumerate(sorted(L.CODE_NAMES))}
    lut = np.full(max(pos) + 2, -1, dtype=np.int32)
    for k, i in pos.items():
        lut[k] = i
    ok = (codes >= 0) & (codes <= max(pos))
    out = np.full(len(codes), -1, dtype=np.int32)
    out[ok] = lut[codes[ok]]
    return pd.Categorical.from_codes(out, categories=cats)


def _msg_seq(pms: np.ndarray) -> pd.arrays.IntegerArray:
    """The public message of a step (-1: the round's end), missing when the record named none."""
    return pd.arrays.IntegerArray(np.where(pms == NO_SEQ, 0, pms).astype(np.int64), pms == NO_SEQ)


def _frame(seats: _Seats, g: np.ndarray, columns: dict[str, Any]) -> pd.DataFrame:
    """The game columns for rows of games ``g``, then ``columns``."""
    out: dict[str, Any] = {k: seats.game(k, g) for k in GAME_COLUMNS}
    out.update(columns)
    return pd.DataFrame(out)


def _step(rnd: np.ndarray, pms: np.ndarray) -> pd.Categorical:
    """Step labels (``R1.5``, ``R1.end``) of (round, public message) pairs, the categories in the order
    the steps happened (a round's end after its messages)."""
    order = np.where(pms >= 0, pms, np.where(pms == -1, _LAST, -1))  # -1: the round's end; NO_SEQ: the round itself
    key = rnd.astype(np.int64) * (2 * _LAST) + order
    uniq, first, codes = np.unique(key, return_index=True, return_inverse=True)
    labels = [step_label(int(rnd[i]), int(pms[i])) if pms[i] != NO_SEQ else f"R{int(rnd[i])}" for i in first]
    return pd.Categorical.from_codes(codes.astype(np.int32), categories=labels)


_LAST = 1 << 30


def _rows_of(g: np.ndarray, rec: np.ndarray, at_g: np.ndarray, at_rec: np.ndarray) -> np.ndarray:
    """For each (game, record) of ``at_g``/``at_rec``, its row in the table of ``g``/``rec`` (-1: none)."""
    key = (g.astype(np.int64) << 32) | rec.astype(np.int64)
    want = (at_g.astype(np.int64) << 32) | at_rec.astype(np.int64)
    order = np.argsort(key, kind="stable")
    pos = np.searchsorted(key[order], want)
    pos = np.minimum(pos, max(len(key) - 1, 0))
    hit = (key[order][pos] == want) if len(key) else np.zeros(len(want), dtype=bool)
    return np.where(hit, order[pos] if len(key) else -1, -1)


# ----------------------------------------------------------------------------- the frames


def games_df(logs: Logs) -> pd.DataFrame:
    """One row per game: its selection columns, outcome (``winner`` side, ``end_reason``, ``completed``,
    ``invalid``, ``last_round``; ``winning_side``: Mafia or Town), the ``models`` seated (comma-separated) and ``model`` when one model
    holds every seat, seat and Mafia counts, probe calls, fork origin and log path."""
    c = _corpus(logs)
    seats = _Seats(c)
    g = c.games
    models = g["models"].fillna("").astype(str)
    single = models.where(~models.str.contains(",") & (models != ""), None)
    return _frame(seats, np.arange(c.m), {
        "models": models.to_numpy(), "model": single.to_numpy(), "n_players": g["n_players"].to_numpy(),
        "n_mafia": g["n_mafia"].to_numpy(), "completed": g["completed"].to_numpy(), "winner": g["winner"].to_numpy(),
        "winning_side": winner_side(g["winner"].to_numpy(dtype=object)),
        "end_reason": g["end_reason"].to_numpy(), "invalid": g["invalid"].to_numpy(), "last_round": g["last_round"].to_numpy(),
        "n_probes": g["n_probes"].to_numpy(), "forked_from": g["forked_from"].replace("", None).to_numpy(),
        "format": g["format"].to_numpy(), "path": g["path"].to_numpy()})


def seats_df(logs: Logs) -> pd.DataFrame:
    """One row per seat: ``seat``, ``name``, ``model``, ``backend``, true ``role`` and ``side``, whether
    its side ``won`` (completed games; a draw is no win), how it left (``death_round``, ``death_kind``;
    -1 and empty when it survived) and its personality (O, C, E, A, N: the generating values)."""
    c = _corpus(logs)
    seats = _Seats(c)
    p = c.cols("players", ["g", "seat", "name", "backend", "O", "C", "E", "A", "N", "death_round", "death_kind"])
    g, seat = p["g"].to_numpy(np.int64), p["seat"].to_numpy(np.int64)
    side = seats.pick("side", g, seat)
    winner = c.games["winner"].to_numpy(dtype=object)[g]
    won = c.games["completed"].to_numpy()[g] & (np.asarray(side, dtype=object) == winner_side(winner))
    return _frame(seats, g, {
        "seat": seat, "name": seats.pick("name", g, seat), "model": seats.pick("model", g, seat),
        "backend": p["backend"].to_numpy(), "role": seats.pick("role", g, seat), "side": side, "won": won,
        "death_round": p["death_round"].to_numpy(), "death_kind": p["death_kind"].replace("", None).to_numpy(),
        **{t: p[t].to_numpy() for t in ("O", "C", "E", "A", "N")}})


def winner_side(winner: np.ndarray) -> np.ndarray:
    """A game's ``winner`` as a side (Mafia, Town); None for a draw or a game that did not finish."""
    w = np.asarray(winner, dtype=object)
    return np.where(w == "Mafia", MAFIA_SIDE, np.where(np.isin(w, ["Villagers", "Town", "town"]), TOWN_SIDE, None))


def votes_df(logs: Logs) -> pd.DataFrame:
    """One row per counted day vote (the tally's): ``round``, the voter's ``seat``, ``name``, ``model``,
    ``role``, ``side``, and the target's (``target_*``; missing for a name that is no seat)."""
    c = _corpus(logs)
    seats = _Seats(c)
    v = c.cols("votes", ["g", "round", "voter", "target", "ts"])
    g, voter, target = v["g"].to_numpy(np.int64), v["voter"].to_numpy(np.int64), v["target"].to_numpy(np.int64)
    return _frame(seats, g, {
        "round": v["round"].to_numpy(), "seat": voter, "name": seats.pick("name", g, voter),
        "model": seats.pick("model", g, voter), "role": seats.pick("role", g, voter), "side": seats.pick("side", g, voter),
        "target_seat": target, "target_name": seats.pick("name", g, target), "target_role": seats.pick("role", g, target),
        "target_side": seats.pick("side", g, target), "ts": v["ts"].to_numpy()})


_PROBE_COLUMNS = ["g", "rec", "round", "pms", "seat", "probe_id", "phase", "parse_ok", "repaired", "transport",
                  "latency_ms", "tokens_prompt", "tokens_completion", "q_chars", "a_chars", "timestamp"]


def probes_df(logs: Logs, *, custom_answers: bool = True) -> pd.DataFrame:
    """One row per probe call: its step (``round``, ``msg_seq``: -1 at a round's end; ``step``: the
    label the app's URLs use), ``probe_id``, ``phase``, the probed seat's ``seat``, ``name``, ``model``,
    ``role``, ``side``, whether the answer parsed (``parse_ok``; ``repaired``: after a JSON repair;
    ``transport_error``), ``latency_ms``, token counts and text lengths, and the parsed answer's scalar
    fields as ``answer_*`` columns: the planned action (``answer_action``, ``answer_target``) and, with
    ``custom_answers`` (read from the logs, custom probes only), every top-level field of a custom
    probe's answer (its normalised form when the probe declared a schema). The standard probes' lists
    of per-player answers are the rows of :func:`beliefs_df`."""
    c = _corpus(logs)
    seats = _Seats(c)
    if not c.n_rows("probes"):
        return _frame(seats, np.zeros(0, np.int64), {})
    p = c.cols("probes", _PROBE_COLUMNS)
    g, seat = p["g"].to_numpy(np.int64), p["seat"].to_numpy(np.int64)
    rnd, pms = p["round"].to_numpy(np.int64), p["pms"].to_numpy(np.int64)
    out = _frame(seats, g, {
        "round": rnd, "msg_seq": _msg_seq(pms), "step": _step(rnd, pms),
        "probe_id": p["probe_id"].to_numpy(), "phase": p["phase"].to_numpy(), "seat": seat,
        "name": seats.pick("name", g, seat), "model": seats.pick("model", g, seat), "role": seats.pick("role", g, seat),
        "side": seats.pick("side", g, seat), "parse_ok": p["parse_ok"].to_numpy(), "repaired": p["repaired"].to_numpy(),
        "transport_error": p["transport"].to_numpy(), "latency_ms": p["latency_ms"].to_numpy(),
        "tokens_prompt": p["tokens_prompt"].to_numpy(), "tokens_completion": p["tokens_completion"].to_numpy(),
        "question_chars": p["q_chars"].to_numpy(), "response_chars": p["a_chars"].to_numpy(),
        "timestamp": p["timestamp"].to_numpy()})
    if c.n_rows("pa"):
        pa = c.cols("pa", ["g", "rec", "action", "tgt"])
        at = _rows_of(pa["g"].to_numpy(), pa["rec"].to_numpy(), g, p["rec"].to_numpy())
        hit = at >= 0
        action = np.full(len(out), None, dtype=object)
        action[hit] = pa["action"].to_numpy(dtype=object)[at[hit]]
        tgt = np.full(len(out), -1, dtype=np.int64)
        tgt[hit] = pa["tgt"].to_numpy(np.int64)[at[hit]]
        out["answer_action"] = action
        out["answer_target"] = seats.pick("name", g, tgt)
    if custom_answers:
        _add_custom_answers(c, out, g, p)
    return out


def _add_custom_answers(c: Corpus, out: pd.DataFrame, g: np.ndarray, p: pd.DataFrame) -> None:
    """``answer_<field>`` columns of the custom probes' calls (records read from the logs, those only)."""
    pids = custom_probe_ids(c)
    if not pids:
        return
    where = {key: i for i, key in enumerate(zip(g.tolist(), p["round"].tolist(), p["pms"].tolist(), p["seat"].tolist(),
                                                 p["probe_id"].astype(str).tolist()))}
    cols: dict[str, np.ndarray] = {}
    for pid in pids:
        recs = custom_records(c, pid)
        for gg, rnd, pms, s, fields in zip(recs["g"], recs["round"], recs["pms"], recs["seat"], recs["fields"]):
            i = where.get((int(gg), int(rnd), int(pms), int(s), pid))
            if i is None or not isinstance(fields, dict):
                continue
            for k, val in fields.items():
                col = cols.setdefault(f"answer_{k}", np.full(len(out), None, dtype=object))
                col[i] = val
    for k, col in cols.items():
        out[k] = col


# beliefs: the item tables (one row per assessed player of a probe call) and what each holds
_BELIEF_TABLES = {
    "ra": ("role_assessment", ["role", "exact", "conf"]),
    "sr": ("suspicion_ranking", ["pos", "score"]),
    "sm": ("social_map", ["att", "conf"]),
    "pp": ("personality_profile", ["O", "C", "E", "A", "N"]),
}


def beliefs_df(logs: Logs, probes: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per assessed player per probe call of the standard battery: the step (``round``,
    ``msg_seq``, ``step``), ``probe_id``, the observer (``seat``, ``name``, ``model``, ``role``,
    ``side``), the assessed player (``target_seat``, ``target_name``, true ``target_role`` and
    ``target_side``, ``target_is_self``, ``target_alive`` at the probe's time) and what the probe
    says of them:

    * role assessment: ``guessed_role`` (the normalised label: Mafia, Villager, Doctor, Sheriff,
      Don, Unknown; missing when unusable), ``guessed_role_exact`` (the label only when written
      exactly so), ``confidence`` (0-100) and ``correct`` (guessed side equals the true side;
      missing for Unknown or unusable);
    * suspicion ranking: ``rank`` (1 = most suspected) and ``score``;
    * social map: ``attitude`` (trusts, neutral, suspects: how the target sees the observer) and
      ``confidence``;
    * personality profile: the estimated ``O``, ``C``, ``E``, ``A``, ``N``.

    Columns another probe fills are missing on a row. ``probes``: only these probe ids (less memory:
    at 1,000 games the four give ~3.8 million rows)."""
    c = _corpus(logs)
    seats = _Seats(c)
    if not c.n_rows("probes"):
        return _frame(seats, np.zeros(0, np.int64), {})
    p = c.cols("probes", ["g", "rec", "round", "pms", "timestamp"])
    unknown = set(probes or ()) - {v[0] for v in _BELIEF_TABLES.values()}
    if unknown:
        raise ValueError(f"beliefs_df: no such probe {sorted(unknown)}; one of {[v[0] for v in _BELIEF_TABLES.values()]}")
    tables = [t for t, (pid, _) in _BELIEF_TABLES.items() if probes is None or pid in probes]
    steps = (p, _step(p["round"].to_numpy(np.int64), p["pms"].to_numpy(np.int64)))
    parts = [part for t in tables if c.n_rows(t) and (part := _belief_rows(c, seats, t, steps)) is not None]
    if not parts:
        return _frame(seats, np.zeros(0, np.int64), {})
    return pd.concat(parts, ignore_index=True, sort=False)


def _belief_rows(c: Corpus, seats: _Seats, table: str, probes: tuple[pd.DataFrame, pd.Categorical]) -> pd.DataFrame | None:
    probe_id, fields = _BELIEF_TABLES[table]
    p, steps = probes
    it = c.cols(table, ["g", "rec", "src", "tgt", *fields])
    g, rec = it["g"].to_numpy(np.int64), it["rec"].to_numpy(np.int64)
    at = _rows_of(p["g"].to_numpy(), p["rec"].to_numpy(), g, rec)
    keep = at >= 0
    if not keep.any():
        return None
    it, g, at = it[keep], g[keep], at[keep]
    src, tgt = it["src"].to_numpy(np.int64), it["tgt"].to_numpy(np.int64)
    rnd, pms = p["round"].to_numpy(np.int64)[at], p["pms"].to_numpy(np.int64)[at]
    ts = p["timestamp"].to_numpy(np.float64)[at]
    death = c.seat_array("death_ts", np.inf)
    ok = (tgt >= 0) & (tgt < death.shape[1])
    alive = pd.array(np.zeros(len(g), dtype=bool), dtype="boolean")
    alive[ok] = ts[ok] < death[g[ok], tgt[ok]]
    alive[~ok] = pd.NA
    cols: dict[str, Any] = {
        "round": rnd, "msg_seq": _msg_seq(pms),
        "step": pd.Categorical.from_codes(steps.codes[at], categories=steps.categories),
        "probe_id": pd.Categorical.from_codes(np.full(len(g), list(_BELIEF_TABLES).index(table), dtype=np.int8),
                                              categories=[v[0] for v in _BELIEF_TABLES.values()]), "seat": src, "name": seats.pick("name", g, src), "model": seats.pick("model", g, src),
        "role": seats.pick("role", g, src), "side": seats.pick("side", g, src), "target_seat": tgt,
        "target_name": seats.pick("name", g, tgt), "target_role": seats.pick("role", g, tgt),
        "target_side": seats.pick("side", g, tgt), "target_is_self": src == tgt, "target_alive": alive}
    cols.update(_belief_fields(table, it, seats.pick("side", g, tgt)))
    return _frame(seats, g, cols)


def _belief_fields(table: str, it: pd.DataFrame, target_side: pd.Categorical) -> dict[str, Any]:
    if table == "ra":
        role = it["role"].to_numpy(np.int64)
        guessed_side = np.where(role == L.UNKNOWN, None, _side(role))
        true_side = np.asarray(target_side, dtype=object)
        correct = pd.array(guessed_side == true_side, dtype="boolean")
        correct[pd.isna(guessed_side) | pd.isna(true_side)] = pd.NA
        return {"guessed_role": _role_names(role), "guessed_role_exact": _role_names(it["exact"].to_numpy(np.int64)),
                "confidence": it["conf"].to_numpy(np.float64), "correct": correct}
    if table == "sr":
        return {"rank": it["pos"].to_numpy(np.int64) + 1, "score": it["score"].to_numpy(np.float64)}
    if table == "sm":
        att = it["att"].to_numpy(np.int64)
        names = np.array([None, *L.ATTITUDES], dtype=object)
        return {"attitude": pd.Categorical(names[np.clip(att + 1, 0, len(L.ATTITUDES))], categories=list(L.ATTITUDES)),
                "confidence": it["conf"].to_numpy(np.float64)}
    return {t: it[t].to_numpy(np.float64) for t in ("O", "C", "E", "A", "N")}


__all__ = ["beliefs_df", "games_df", "load", "probes_df", "seats_df", "votes_df"]
