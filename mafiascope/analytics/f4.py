"""F4 -- belief-vote coupling (docs/metrics.md §7).

Published pre-vote rule: for each vote, the voter's last parse-ok probe answers (raw
mode) strictly before its own ``day_vote``; top-1 = first player of the stored suspicion
ranking among the other alive players; committed-Mafia set = others labelled Mafia in
the role assessment; size-matched chance baselines. Post-vote variant: the last ranking
before the tally. Transcript baselines: most-mentioned and most-accused other player in
the round's public messages before the vote.

compat: alive set = voters in the tally (the original's QUIRK), exact ``Mafia`` label.
default: alive set = seats alive at the tally, normalised labels (Russian, Don).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from ..logs import kinds as K
from . import labels as L
from .corpus import Cached, Corpus
from .frames import death_ts, eq, mafia_mask
from .executor import by_games, seat_memo
from .last_before import distinct_pairs, first_min, last_probe_before, others, raw_items, record_index
from .load import K_LIST
from ..lexicon.names import russian_spellings
from .modes import Mode
from .intervals import ci_list as _ci, pooled_entry, ratio_ci
from .stats import round_or_none

F4_UNITS = Cached("f4_units")

ACCUSATION_CUES = (
    # English stems
    "suspic", "mafia", "vote", "voting", "accus", "lying", "liar", "lie ", "deflect", "eliminat", "sketchy",
    "guilty", "red flag", "scum", "not trust", "don't trust", "distrust", "shady", "fishy", "blame",
    # Russian stems
    "подозр", "мафи", "голос", "лж", "вра", "обвин", "исключ", "не довер", "виноват", "странн",
)


@lru_cache(maxsize=4096)
def _default_stems(name: str) -> tuple[str, ...]:
    """The Cyrillic stems a mention of ``name`` starts with: its Russian spellings (the shared
    table), else a letter-by-letter transliteration; the last letter may change with the case."""
    return tuple(sp[:-1] if len(sp) > 3 else sp for sp in russian_spellings(name) or (_translit(name),) if sp)


@lru_cache(maxsize=4096)
def _stem_pattern(name: str) -> re.Pattern[str]:
    alts = [re.escape(name)] + [re.escape(st) + r"[а-яё]{0,3}" for st in _default_stems(name)]
    return re.compile(r"(?<![\w])(?:" + "|".join(alts) + r")(?![\w])", re.IGNORECASE)


_TR = {
    "a": "а", "b": "б", "c": "к", "d": "д", "e": "е", "f": "ф", "g": "г", "h": "х", "i": "и", "j": "дж", "k": "к",
    "l": "л", "m": "м", "n": "н", "o": "о", "p": "п", "q": "к", "r": "р", "s": "с", "t": "т", "u": "у", "v": "в",
    "w": "у", "x": "кс", "y": "и", "z": "з",
}


def _translit(name: str) -> str:
    return "".join(_TR.get(ch, ch) for ch in name.lower())


# compat ("mafiascope-2026-07") transcript rule, restated from the original's observed behaviour:
# cue stems matched case-insensitively anywhere in a sentence; sentences end after . ! ? or an
# ellipsis followed by whitespace, or at line breaks; Latin names match case-sensitively between
# non-letters; Russian spellings of the name pool (lexicon.names; a final -а dropped) take up to
# three lowercase Cyrillic letters of inflection.
_COMPAT_CUES = re.compile("|".join((
    "suspect", "suspici", "mafia", "vote", "accus", "lynch", "guilty",
    "подозр", "мафи", "голос", "обвин", "виновн", "линчев")), re.IGNORECASE)
_COMPAT_SENTENCES = re.compile(r"(?<=[.!?\u2026])\s+|\n+")


def _compat_stems(name: str) -> tuple[str, ...]:
    """The original's stems: a spelling of the shared table, without a final -а (Дан, Грей, Алекс)."""
    return tuple(sp[:-1] if sp.endswith("а") else sp for sp in russian_spellings(name))


_LETTER = "A-Za-zА-Яа-яЁё"


@lru_cache(maxsize=4096)
def _compat_name_pattern(name: str) -> re.Pattern[str]:
    alts = [re.escape(name)] + [re.escape(st) + "[а-яё]{0,3}" for st in _compat_stems(name)]
    return re.compile(f"(?<![{_LETTER}])(?:{'|'.join(alts)})(?![{_LETTER}])")


_DEFAULT_SENTENCES = re.compile(r"(?<=[.!?\n])\s*")


_DEFAULT_CUES = re.compile("|".join(map(re.escape, ACCUSATION_CUES)))  # searched in lower-cased sentences


@lru_cache(maxsize=4096)
def _name_needles(name: str, compat: bool) -> tuple[str, ...]:
    """Literal substrings one of which every match of the seat's name pattern contains."""
    if compat:
        return (name, *_compat_stems(name))
    return tuple(x.casefold() for x in (name, *_default_stems(name)) if x)


def _units(text: str, splitter: re.Pattern[str]) -> list[tuple[int, str]]:
    """``splitter.split(text)`` with each piece's offset in ``text``."""
    starts, ends = [0], []
    for m in splitter.finditer(text):
        ends.append(m.start())
        starts.append(m.end())
    ends.append(len(text))
    return [(a, text[a:b]) for a, b in zip(starts, ends)]


def _message_counts(texts: list[str], names: list[str], compat: bool) -> tuple[np.ndarray, ...]:
    """Per message and seat: mentions, mentions in accusation sentences, and the text offset
    of the last of each (-1 if none). Counted once per message, shared by every vote of the round."""
    n, S = len(texts), len(names)
    ment, acc = np.zeros((n, S), dtype=np.int64), np.zeros((n, S), dtype=np.int64)
    ment_pos, acc_pos = np.full((n, S), -1, dtype=np.int64), np.full((n, S), -1, dtype=np.int64)
    pats = [(_compat_name_pattern if compat else _stem_pattern)(nm) for nm in names]
    needles = [_name_needles(nm, compat) for nm in names]
    for i, text in enumerate(texts):
        folded = text if compat else text.casefold()
        present = [s for s, nd in enumerate(needles) if any(x in folded for x in nd)]
        if not present:  # every match contains one of the seat's literal forms
            continue
        if compat:
            cue_units = [(o, u) for o, u in _units(text, _COMPAT_SENTENCES) if u and _COMPAT_CUES.search(u)]
        else:
            cue_units = [(o, u) for o, u in _units(text, _DEFAULT_SENTENCES) if _DEFAULT_CUES.search(u.lower())]
        for s in present:
            pat = pats[s]
            for mt in pat.finditer(text):
                ment[i, s] += 1
                ment_pos[i, s] = mt.start()
            for o, u in cue_units:
                for mt in pat.finditer(u):
                    acc[i, s] += 1
                    acc_pos[i, s] = o + mt.start()
    return ment, acc, ment_pos, acc_pos


def _pick(counts: np.ndarray, seen: np.ndarray, pos: np.ndarray, others: list[int], names: list[str],
          compat: bool) -> int | None:
    """Most-counted seat among ``others`` over the given messages (rows), or None.

    Ties: default -- the seat whose counted mention comes latest in the text. compat (the
    original's rule) -- the seat mentioned at all in the latest message, and within one message
    the name that sorts last (the original walks candidates in name order).
    """
    if not others or not len(counts):
        return None
    tot = counts[:, others].sum(0)
    best = int(tot.max())
    if best <= 0:
        return None
    top = [s for s, v in zip(others, tot.tolist()) if v == best]
    if len(top) == 1:
        return top[0]

    def key(s: int) -> tuple[Any, ...]:
        rows = np.flatnonzero(seen[:, s] > 0)
        last = int(rows[-1]) if len(rows) else -1
        return (last, names[s]) if compat else (last, int(pos[last, s]) if last >= 0 else -1)

    return max(top, key=key)


def _transcript_picks(texts: list[str], others: list[int], names: list[str], compat: bool) -> tuple[int | None, int | None]:
    """(most-mentioned, most-accused) over ``texts`` (in order) among ``others``."""
    ment, acc, mpos, apos = _message_counts(texts, names, compat)
    return (_pick(ment, ment, mpos, others, names, compat),
            _pick(acc, ment if compat else acc, apos, others, names, compat))


def vote_units(c: Corpus, mode: Mode, transcripts: bool = True) -> pd.DataFrame:
    """One row per counted vote with the predictions and baselines of every F4 variant.

    Rows: games in order, then tallies by (ts, ev), then the tally's votes in log order.
    """

    def build() -> pd.DataFrame:
        # without transcripts a unit is one game's vote: built a block of games at a time on large corpora
        r = by_games(c, lambda view, lo, hi: _unit_rows(view, mode, False), _unit_tables(mode), seat_memo(c)) \
            if not transcripts else _unit_rows(c, mode, True)
        return pd.DataFrame([]) if not r else pd.DataFrame(r)

    return c.memo(F4_UNITS.key(mode, transcripts), build)


def _unit_tables(mode: Mode) -> dict[str, tuple[str, ...]]:
    """What :func:`_unit_rows` reads without transcripts, besides the seats' roles and death times."""
    return {"events": ("ev", "kind", "round", "ts", "player", "msg_seq"), "votes": ("ev", "voter", "target"),
            "probes": ("seat", "timestamp", "probe_id", "parse_ok", "stored_kind"),
            "sr": ("rec", "src", "pos", "tgt"), "ra": ("rec", "src", "tgt", "exact" if mode.is_compat else "role")}


def _unit_rows(c: Corpus, mode: Mode, transcripts: bool) -> dict[str, list[Any]]:
    """:func:`vote_units`' columns as lists ({} without counted votes)."""
    maf = mafia_mask(c)
    dts = death_ts(c)
    S = dts.shape[1]
    ev = c.event_texts() if transcripts else c.cols("events", ["g", "ev", "kind", "round", "ts", "player", "msg_seq"])
    kind = ev["kind"].to_numpy()
    tal = ev.loc[kind == K.VOTE_TALLY, ["g", "ev", "round", "ts"]].sort_values(["g", "ts", "ev"], kind="stable")
    tal = tal.reset_index(drop=True).assign(t=lambda d: np.arange(len(d)))
    vv = c.cols("votes", ["g", "ev", "voter", "target"]).merge(tal, on=["g", "ev"])  # votes of each tally, log order
    vv = vv[vv["voter"].to_numpy() >= 0].sort_values("t", kind="stable").reset_index(drop=True)
    if not len(vv):
        return {}
    t_all, voter_all, target_all = vv["t"].to_numpy(), vv["voter"].to_numpy(), vv["target"].to_numpy()
    # alive set of each tally: its voters (compat QUIRK) or the seats alive at the tally (default)
    if mode.is_compat:
        alive = np.zeros((len(tal), S), dtype=bool)
        alive[t_all, voter_all] = True
    else:
        alive = dts[tal["g"].to_numpy()] > tal["ts"].to_numpy()[:, None]
    # plurality of each tally (None on a tie or without votes); a unit sees its game's previous tally's
    cnt = vv.groupby(["t", "target"], sort=False).size().rename("n").reset_index()
    cnt = cnt.sort_values(["t", "n"], ascending=[True, False], kind="stable")
    ct, top_n = cnt["t"].to_numpy(), cnt["n"].to_numpy()
    first = np.r_[True, ct[1:] != ct[:-1]]
    next_same = np.r_[ct[1:] == ct[:-1], False]
    unique_top = first & (~next_same | (np.r_[top_n[1:], 0] < top_n))
    plur = np.full(len(tal), -2, dtype=np.int64)  # -2 = none
    plur[cnt["t"].to_numpy()[unique_top]] = cnt["target"].to_numpy()[unique_top]
    tg = tal["g"].to_numpy()
    prev_plur = np.r_[-2, plur[:-1]]
    prev_plur[np.r_[True, tg[1:] != tg[:-1]]] = -2
    if transcripts and not mode.is_compat:  # (default) each tally's previous tally's counts, most votes first
        counts = {int(k): list(zip(grp["target"].tolist(), grp["n"].tolist())) for k, grp in cnt.groupby("t", sort=False)}
        prev_counts = [[] if i == 0 or tg[i] != tg[i - 1] else counts.get(i - 1, []) for i in range(len(tal))]
    # counted votes: target alive; the voter's last day_vote reply of that round
    keep = (target_all >= 0) & alive[t_all, np.maximum(target_all, 0)]
    u = vv[keep].reset_index(drop=True)
    dv = ev.loc[kind == K.DAY_VOTE, ["g", "player", "round", "ts", "msg_seq"]]
    dv = dv.drop_duplicates(["g", "player", "round"], keep="last").rename(
        columns={"player": "voter", "ts": "v_ts", "msg_seq": "v_seq"})
    u = u.merge(dv, on=["g", "voter", "round"], how="inner")  # keeps the left (vote) order
    if not len(u):
        return {}
    u["u"] = np.arange(len(u))
    t, voter, g_u = u["t"].to_numpy(), u["voter"].to_numpy(), u["g"].to_numpy()

    def in_others(ui: np.ndarray, tgt: np.ndarray) -> np.ndarray:
        return (tgt >= 0) & (tgt != voter[ui]) & alive[t[ui], np.maximum(tgt, 0)]

    # pre-vote and post-vote probe states: last parse-ok record strictly before the reply / the tally
    p = c.cols("probes", ["g", "seat", "timestamp", "probe_id", "parse_ok", "stored_kind"])
    ok = p["parse_ok"].to_numpy()
    stored_list = p["stored_kind"].to_numpy() == K_LIST
    pc = {k: p[k].to_numpy() for k in ("g", "seat", "timestamp")}
    recs = {k: record_index({**{c: v.take(at) for c, v in pc.items()}, "pi": at})  # each kind's rows found once
            for k in ("suspicion_ranking", "role_assessment") for at in [np.flatnonzero(ok & eq(p["probe_id"], k))]}
    u = u.rename(columns={"ts": "tally_ts"})
    find_sr = raw_items(c, "sr", ["pos", "tgt"], g_u)
    lab_col, mafia_labels = ("exact", [L.MAFIA]) if mode.is_compat else ("role", [L.MAFIA, L.DON])
    find_ra = raw_items(c, "ra", ["tgt", lab_col], g_u)
    r: dict[str, Any] = {
        "g": u["g"].tolist(), "round": u["round"].tolist(), "voter": voter.tolist(), "target": u["target"].tolist(),
        "mafia_voter": maf[u["g"].to_numpy(), voter].tolist(), "n_others": (alive[t].sum(1) - alive[t, voter]).tolist(),
    }
    for tag, t_col in (("top1", "v_ts"), ("post_top1", "tally_ts")):
        pis = last_probe_before(g_u, voter, u[t_col].to_numpy(), recs["suspicion_ranking"])
        unit, it = others(find_sr(_listed(pis, stored_list)), in_others)
        first = first_min(unit, it["pos"])  # the item of the smallest position, the first of ties
        pred: list[Any] = [None] * len(u)
        for ui, tgt in zip(unit[first].tolist(), it["tgt"][first].tolist()):
            pred[ui] = tgt
        r[tag] = pred
    pis = last_probe_before(g_u, voter, u["v_ts"].to_numpy(), recs["role_assessment"])
    unit, it = others(find_ra(_listed(pis, stored_list)), in_others)
    mafia = np.isin(it[lab_col], mafia_labels)
    csets: list[Any] = [None] * len(u)
    for ui, grp in zip(*_segments(*distinct_pairs(unit[mafia], it["tgt"][mafia]))):
        csets[ui] = grp
    r["committed_set"] = csets
    if transcripts:
        r.update(_transcript_baselines(c, ev, u, alive, prev_plur if mode.is_compat else prev_counts, mode))
    return r


def _listed(pis: np.ndarray, stored_list: np.ndarray) -> np.ndarray:
    """Probe indices whose stored answer is a list, else -1 (every index -1 without probe logs)."""
    if not len(stored_list):
        return np.full(len(pis), -1, dtype=np.int64)
    return np.where((pis >= 0) & stored_list[np.maximum(pis, 0)], pis, -1)


def _segments(keys: np.ndarray, vals: np.ndarray) -> tuple[list[int], list[list[int]]]:
    """Group ``vals`` by runs of equal ``keys`` (keys sorted): (keys, value lists)."""
    if not len(keys):
        return [], []
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    bounds = np.r_[starts, len(keys)]
    vl = vals.tolist()
    return keys[starts].tolist(), [vl[a:b] for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]


def _previous_plurality(counts: list[tuple[int, int]], others: list[int]) -> int | None:
    """(default) The voter's other most voted for in the previous tally (``counts``: target, votes, most votes
    first), or None when none of them got a vote there or two tie for the most."""
    live = [(t, n) for t, n in counts if t in others]
    if not live or (len(live) > 1 and live[1][1] == live[0][1]):
        return None
    return int(live[0][0])


def _transcript_baselines(c: Corpus, ev: pd.DataFrame, u: pd.DataFrame, alive: np.ndarray,
                          prev: Any, mode: Mode) -> dict[str, list[Any]]:
    """Most-mentioned / most-accused other player in the round's public messages before the
    voter's reply, and the previous tally's plurality: (default, ``prev`` each tally's previous tally's counts)
    the voter's other with the most votes there; (compat, ``prev`` each tally's previous plurality) the
    tally's plurality when it is one of the voter's others -- rarely, since it was usually eliminated."""
    msgs = ev[ev["kind"].isin([K.INTRO, K.DAY_DISCUSS, K.DAY_VOTE]).to_numpy()]
    rounds: dict[tuple[int, int], tuple[list[int], list[str]]] = {}
    for (g, rnd), grp in msgs.groupby(["g", "round"], sort=False):
        seqs, texts = grp["msg_seq"].tolist(), grp["text"].fillna("").tolist()
        if mode.is_compat:  # the original orders messages by (msg_seq, speaker name, text)
            nm = c.seat_names(int(g))
            order = sorted(range(len(seqs)), key=lambda i, p=grp["player"].tolist():
                           (seqs[i], nm[p[i]] if 0 <= p[i] < len(nm) else "", texts[i]))
        else:
            order = sorted(range(len(seqs)), key=seqs.__getitem__)  # stable
        rounds[(int(g), int(rnd))] = ([seqs[i] for i in order], [texts[i] for i in order])
    names_of: dict[int, list[str]] = {}
    counted: dict[tuple[int, int], tuple[np.ndarray, tuple[np.ndarray, ...]]] = {}
    out: dict[str, list[Any]] = {"most_mentioned": [], "most_accused": [], "prev_plurality": []}
    compat = mode.is_compat
    for g, rnd, voter, t, v_seq in zip(u["g"].tolist(), u["round"].tolist(), u["voter"].tolist(), u["t"].tolist(),
                                       u["v_seq"].tolist()):
        others = [s for s in np.flatnonzero(alive[t]).tolist() if s != voter]
        names = names_of.get(g) or names_of.setdefault(g, c.seat_names(g))
        if (g, rnd) not in counted:
            seqs, texts = rounds.get((g, rnd), ([], []))
            counted[(g, rnd)] = (np.asarray(seqs, dtype=np.int64), _message_counts(texts, names, compat))
        seqs_a, (ment, acc, mpos, apos) = counted[(g, rnd)]
        k = int(np.searchsorted(seqs_a, v_seq, side="left"))  # messages sent before the voter's reply
        out["most_mentioned"].append(_pick(ment[:k], ment[:k], mpos[:k], others, names, compat))
        out["most_accused"].append(_pick(acc[:k], (ment if compat else acc)[:k], apos[:k], others, names, compat))
        if compat:
            pp = int(prev[t])
            out["prev_plurality"].append(pp if pp in others else None)
        else:
            out["prev_plurality"].append(_previous_plurality(prev[t], others))
    return out


def _rate(units: pd.DataFrame, col: str, m: int, mode: Mode, *, is_set: bool = False) -> dict[str, Any]:
    if not len(units) or col not in units:
        return {"k": 0, "n": 0, "rate": None, "ci95": None, "chance": None}
    u = units[units[col].notna()]
    if is_set:
        hit = np.array([t in s for t, s in zip(u["target"], u[col])], dtype=float)
        chance = np.array([len(s) for s in u[col]], dtype=float) / u["n_others"].to_numpy()
    else:
        hit = (u[col].to_numpy() == u["target"].to_numpy()).astype(float)
        chance = 1.0 / u["n_others"].to_numpy()
    g = u["g"].to_numpy().astype(int)
    k_g = np.bincount(g, weights=hit, minlength=m)
    n_g = np.bincount(g, minlength=m).astype(float)
    n = len(u)
    return {
        "k": int(hit.sum()),
        "n": n,
        "rate": round_or_none(hit.sum() / n if n else None),
        "ci95": _ci(ratio_ci(k_g, n_g, mode)),
        "chance": round_or_none(chance.mean() if n else None),
    }


@pooled_entry
def f4(c: Corpus, mode: Mode, transcripts: bool = True, *, seats: np.ndarray | None = None) -> dict[str, Any]:
    """F4 per voter group; ``seats`` (an (m, seats) mask) keeps only the votes of kept voters."""
    units = vote_units(c, mode, transcripts)
    if seats is not None and len(units):
        units = units[seats[units["g"].to_numpy(dtype=np.int64), units["voter"].to_numpy(dtype=np.int64)]]
    out: dict[str, Any] = {}
    for group, is_m in (("innocent", False), ("mafia", True)):
        u = units[units["mafia_voter"] == is_m] if len(units) else units
        entry = {
            "n_votes": int(len(u)),
            "top1": _rate(u, "top1", c.m, mode),
            "committed_set": _rate(u, "committed_set", c.m, mode, is_set=True),
            "post_vote_top1": _rate(u, "post_top1", c.m, mode),
        }
        if transcripts:
            entry["transcript_most_mentioned"] = _rate(u, "most_mentioned", c.m, mode)
            entry["transcript_most_accused"] = _rate(u, "most_accused", c.m, mode)
            entry["previous_round_plurality"] = _rate(u, "prev_plurality", c.m, mode)
        out[group] = entry
    return out
