"""F4 -- belief-vote coupling (metrics.md section 7).

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
from typing import Any

import numpy as np
import pandas as pd

from . import labels as L
from .corpus import Corpus
from .f1 import _ci
from .frames import death_ts, items_with_probe, mafia_mask
from .modes import Mode
from .stats import ratio_ci, round_or_none

ACCUSATION_CUES = (
    # English stems
    "suspic", "mafia", "vote", "voting", "accus", "lying", "liar", "lie ", "deflect", "eliminat", "sketchy",
    "guilty", "red flag", "scum", "not trust", "don't trust", "distrust", "shady", "fishy", "blame",
    # Russian stems
    "подозр", "мафи", "голос", "лж", "вра", "обвин", "исключ", "не довер", "виноват", "странн",
)


def _last_before(p: pd.DataFrame, t: float) -> dict[str, int]:
    """probe_id -> probe row index of the last parse-ok record strictly before t (file order)."""
    sel = p[(p["timestamp"].to_numpy() < t) & p["parse_ok"].to_numpy()]
    last = sel.drop_duplicates("probe_id", keep="last")
    return dict(zip(last["probe_id"], last.index))


def _stem_pattern(name: str) -> re.Pattern[str]:
    tr = _translit(name)
    alts = [re.escape(name)]
    if tr:
        alts.append(re.escape(tr[:-1] if len(tr) > 3 else tr) + r"[а-яё]{0,3}")
    return re.compile(r"(?<![\w])(?:" + "|".join(alts) + r")(?![\w])", re.IGNORECASE)


_TR = {
    "a": "а", "b": "б", "c": "к", "d": "д", "e": "е", "f": "ф", "g": "г", "h": "х", "i": "и", "j": "дж", "k": "к",
    "l": "л", "m": "м", "n": "н", "o": "о", "p": "п", "q": "к", "r": "р", "s": "с", "t": "т", "u": "у", "v": "в",
    "w": "у", "x": "кс", "y": "и", "z": "з",
}


def _translit(name: str) -> str:
    return "".join(_TR.get(ch, ch) for ch in name.lower())


def _transcript_pick(msgs: list[str], others: list[int], names: list[str], accused_only: bool) -> int | None:
    counts: dict[int, int] = {}
    last: dict[int, int] = {}
    pos = 0
    pats = {s: _stem_pattern(names[s]) for s in others}
    for text in msgs:
        units = re.split(r"(?<=[.!?\n])\s*", text) if accused_only else [text]
        for u in units:
            if accused_only and not any(cue in u.lower() for cue in ACCUSATION_CUES):
                continue
            for s, pat in pats.items():
                for mt in pat.finditer(u):
                    counts[s] = counts.get(s, 0) + 1
                    last[s] = pos + mt.start()
            pos += len(u) + 1
    if not counts:
        return None
    return max(counts, key=lambda s: (counts[s], last[s]))


def vote_units(c: Corpus, mode: Mode, transcripts: bool = True) -> pd.DataFrame:
    """One row per counted vote with the predictions and baselines of every F4 variant."""

    def build() -> pd.DataFrame:
        maf = mafia_mask(c)
        dts = death_ts(c)
        probes = c.probes
        ra = items_with_probe(c, "ra", raw_only=True)
        sr = items_with_probe(c, "sr", raw_only=True)
        ra_by_pi = {k: v for k, v in ra.groupby("pi")}
        sr_by_pi = {k: v for k, v in sr.groupby("pi")}
        stored_len = probes["stored_kind"].to_numpy()
        ev = c.event_texts() if transcripts else c.events
        rows = []
        for g in range(c.m):
            names = c.seat_names(g)
            e = ev[ev["g"] == g]
            dv = e[e["kind"] == "day_vote"]
            v = c.votes[c.votes["g"] == g]
            pg = probes[probes["g"] == g]
            tallies = e[e["kind"] == "vote_tally"].sort_values(["ts", "ev"], kind="stable")
            prev_round_plurality = None
            for _, tal in tallies.iterrows():
                tv = v[v["ev"] == tal["ev"]]
                tv = tv[tv["voter"] >= 0]
                if mode.is_compat:
                    alive = set(tv["voter"].tolist())
                else:
                    alive = {s for s in range(len(names)) if dts[g, s] > tal["ts"]}
                for voter, target in zip(tv["voter"].tolist(), tv["target"].tolist()):
                    if target not in alive:
                        continue
                    mine = dv[(dv["player"] == voter) & (dv["round"] == tal["round"])]
                    if not len(mine):
                        continue
                    vrow = mine.iloc[-1]
                    others = [s for s in sorted(alive) if s != voter]
                    n_oth = len(others)
                    pv = pg[pg["seat"] == voter]
                    pre = _last_before(pv, vrow["ts"])
                    post = _last_before(pv, tal["ts"])
                    r: dict[str, Any] = {"g": g, "round": int(tal["round"]), "voter": voter, "target": target,
                                         "mafia_voter": bool(maf[g, voter]), "n_others": n_oth}
                    for tag, state in (("top1", pre), ("post_top1", post)):
                        pi = state.get("suspicion_ranking")
                        pred = None
                        if pi is not None and stored_len[pi] == 1 and pi in sr_by_pi:
                            cand = [t for t in sr_by_pi[pi].sort_values("pos")["tgt"].tolist() if t in others]
                            pred = cand[0] if cand else None
                        r[tag] = pred
                    pi = pre.get("role_assessment")
                    cset = None
                    if pi is not None and stored_len[pi] == 1 and pi in ra_by_pi:
                        it = ra_by_pi[pi]
                        lab = it["exact"] if mode.is_compat else it["role"]
                        is_m = lab.isin([L.MAFIA] if mode.is_compat else [L.MAFIA, L.DON]).to_numpy()
                        cset = sorted({t for t, mm in zip(it["tgt"].tolist(), is_m) if mm and t in others})
                    r["committed_set"] = cset if cset else None
                    if transcripts:
                        msgs = e[(e["round"] == tal["round"]) & e["kind"].isin(["intro", "day_discuss", "day_vote"])
                                 & (e["msg_seq"] < vrow["msg_seq"])].sort_values("msg_seq")["text"].fillna("").tolist()
                        r["most_mentioned"] = _transcript_pick(msgs, others, names, False)
                        r["most_accused"] = _transcript_pick(msgs, others, names, True)
                        r["prev_plurality"] = prev_round_plurality if prev_round_plurality in others else None
                    rows.append(r)
                cnt = tv["target"].value_counts()
                prev_round_plurality = int(cnt.index[0]) if len(cnt) and (len(cnt) == 1 or cnt.iloc[0] > cnt.iloc[1]) else None
        return pd.DataFrame(rows)

    return c.memo(("f4_units", mode, transcripts), build)


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


def f4(c: Corpus, mode: Mode, transcripts: bool = True) -> dict[str, Any]:
    units = vote_units(c, mode, transcripts)
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
