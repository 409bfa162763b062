"""Step model of one game and the viewer's per-step metrics (docs/metrics.md §11).

:func:`build_step_model` orders steps by round then message number with the round-end
step last, and gives per step the label, phase, timestamp, alive set, the public events
up to it and each agent's latest beliefs (raw parse mode, forward-filled per probe id).
:func:`step_metrics` computes per step: each agent's first-order accuracy, crowd Mafia
recall, each living Mafioso's deception success ("hid N%"), each agent's second-order
consistency and each living agent's impersonate match score (``per_step[i]["match"]``:
matched, total, mismatched names; pooled and per agent's last scored step in the summary),
plus the calibration modal bins.

compat reproduces the original viewer (exact label strings, any other label -> trusts);
default normalises labels (Russian synonyms, compound labels) the same way as F1-F3.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..logs import Timeline, kinds
from ..logs.steps import ROUND_END as END
from ..logs.steps import step_label
from . import labels as L
from .corpus import Cached, Corpus
from .frames import eq, items_with_probe, n_seats
from .load import K_LIST, NO_SEQ
from .modes import Mode
from .stats import wilson
from .step_keys import step_codes_table

STEP_TABLE = Cached("step_table")

VIEWER_Z = 1.96


@dataclass
class Step:
    idx: int
    round: int
    seq: int  # message number; -1 = round end
    label: str
    phase: str
    ts: float
    alive: list[str]
    speaker: str | None
    n_events: int  # public events (file order) up to and including this step
    has_message: bool = False  # a logged message carries this (round, msg_seq)


@dataclass
class StepModel:
    game_id: str
    g: int
    names: list[str]
    roles: list[str]
    steps: list[Step]
    # beliefs[step][agent] -> {probe_id: probe row index (c.probes)}; forward-filled
    beliefs: list[dict[str, dict[str, int]]]
    fresh: list[dict[str, set[str]]]  # probe ids answered at exactly that step
    parse_stats: dict[str, int] = field(default_factory=dict)

    def carried_forward(self, step: int, agent: str, probe_id: str) -> bool:
        return probe_id in self.beliefs[step].get(agent, {}) and probe_id not in self.fresh[step].get(agent, set())


def step_table(c: Corpus) -> dict[str, np.ndarray]:
    """Every step of every game (the rows of :func:`build_step_model`), as arrays; memoised.

    A step is a (round, message number) that a probe or a logged message carries. Per step:
    ``g``, ``round``, ``seq``, ``idx`` (position in its game, round-end last), ``ts`` (earliest
    probe timestamp, else the first message's), ``phase`` (first probe's phase, else the
    first message's kind), ``speaker`` (seat of the last message with a known player, -1),
    ``has_message``, ``disc`` (some probe at the step has phase ``day_discuss``) and
    ``alive`` ((steps, seats) mask: no death strictly before ``ts``).
    """

    def build() -> dict[str, np.ndarray]:
        fast = step_codes_table(c)
        return fast if fast is not None else frame_step_table(c)

    return c.memo(STEP_TABLE.key(), build)


def frame_step_table(c: Corpus) -> dict[str, np.ndarray]:
    """:func:`step_table` by pandas group-by and joins (the reference for :mod:`.step_keys`' fast build)."""
    keys = ["g", "round", "seq"]
    p = c.probes
    pk = pd.DataFrame({"g": p["g"].to_numpy(), "round": p["round"].to_numpy(), "seq": p["pms"].to_numpy(),
                       "ts": p["timestamp"].to_numpy(), "phase": p["phase"], "disc": eq(p["phase"], "day_discuss")})
    pk = pk.groupby(keys, sort=False).agg(ts=("ts", "min"), phase=("phase", "first"), disc=("disc", "any"))
    ev = c.events
    ms = ev[ev["msg_seq"].to_numpy() != NO_SEQ]
    mk = pd.DataFrame({"g": ms["g"].to_numpy(), "round": ms["round"].to_numpy(), "seq": ms["msg_seq"].to_numpy(),
                       "msg_ts": ms["ts"].to_numpy(), "kind": ms["kind"].to_numpy(), "who": ms["player"].to_numpy()})
    first = mk.drop_duplicates(keys, keep="first").set_index(keys)[["msg_ts", "kind"]]
    spk = mk[mk["who"].to_numpy() >= 0].drop_duplicates(keys, keep="last").set_index(keys)["who"]
    t = pk.join(first, how="outer").join(spk, how="left").reset_index()
    in_p = t["phase"].notna().to_numpy()
    has_msg = t["kind"].notna().to_numpy()
    pts = t["ts"].to_numpy(dtype=np.float64)
    mts = t["msg_ts"].to_numpy(dtype=np.float64)
    ts = np.where(in_p & np.isfinite(pts), pts, np.where(has_msg, mts, np.inf))
    phase = np.where(in_p, t["phase"].to_numpy(dtype=object), t["kind"].to_numpy(dtype=object))
    g = t["g"].to_numpy(dtype=np.int64)
    rnd = t["round"].to_numpy(dtype=np.int64)
    seq = t["seq"].to_numpy(dtype=np.int64)
    order = np.lexsort((np.where(seq == END, np.inf, seq), rnd, g))
    g, rnd, seq, ts, phase = g[order], rnd[order], seq[order], ts[order], phase[order]
    starts = np.searchsorted(g, g, side="left")
    dts = c.seat_array("death_ts", fill=-np.inf)
    seats = np.arange(dts.shape[1])
    alive = ~(dts[g] < ts[:, None]) & (seats < n_seats(c)[g][:, None])
    return {
        "g": g, "round": rnd, "seq": seq, "idx": np.arange(len(g)) - starts, "ts": ts, "phase": phase,
        "speaker": t["who"].fillna(-1).to_numpy(dtype=np.int64)[order], "has_message": has_msg[order],
        "disc": t["disc"].eq(True).to_numpy()[order], "alive": alive,
    }


def _game_records(c: Corpus, g: int, names: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One game's events and probe records rebuilt from the corpus tables as the records
    :meth:`mafiascope.logs.Timeline.build` reads; a probe's ``answer_parsed`` is its row in ``c.probes``
    and it counts as answered when parsed with a stored list or object (raw parse mode)."""

    def name(i: int) -> str | None:
        return names[i] if 0 <= i < len(names) else None

    ev = c.game_rows("events", g)
    events: list[dict[str, Any]] = []
    for kind, rnd, seq, ts, who, tgt in zip(ev["kind"].astype(object), ev["round"].to_numpy(), ev["msg_seq"].to_numpy(),
                                           ev["ts"].to_numpy(), ev["player"].to_numpy(), ev["target"].to_numpy()):  # fmt: skip
        rec = {"kind": str(kind), "round": int(rnd), "msg_seq": None if seq == NO_SEQ else int(seq), "ts": float(ts),
               "player": name(int(who))}  # fmt: skip
        if kind in kinds.DEATH_KINDS:
            rec["victim" if kind == kinds.NIGHT_KILL else "eliminated"] = name(int(tgt))
        events.append(rec)
    p = c.game_rows("probes", g)
    answered = p["parse_ok"].to_numpy() & (p["stored_kind"].to_numpy() > 0)
    probes = [{"round": int(r), "public_msg_seq": int(s), "timestamp": float(t), "player_name": name(int(seat)),
               "probe_id": pid, "answer_parse_ok": bool(ok), "answer_parsed": int(row)}
              for row, r, s, t, seat, pid, ok in zip(p.index, p["round"].to_numpy(), p["pms"].to_numpy(), p["timestamp"].to_numpy(),
                                                     p["seat"].to_numpy(), p["probe_id"].astype(object), answered)]  # fmt: skip
    return events, probes


def build_step_model(c: Corpus, game: str | int) -> StepModel:
    """The game's steps, alive sets, speakers and carried-forward beliefs from the logs' one timeline
    (:class:`mafiascope.logs.Timeline`), with the viewer's own phase (first probe's phase, else the first
    message's kind) and event counts."""
    g = game if isinstance(game, int) else c.game_index(game)
    names = c.seat_names(g)
    roles = c.game_rows("players", g).sort_values("seat")["role"].tolist()
    p = c.game_rows("probes", g)
    ev = c.game_rows("events", g)
    events, probes = _game_records(c, g, names)
    tl = Timeline.build(names, events, probes)
    st = step_table(c)
    lo, hi = np.searchsorted(st["g"], [g, g + 1])
    phase_of = dict(zip(zip(st["round"][lo:hi].tolist(), st["seq"][lo:hi].tolist()), st["phase"][lo:hi].tolist()))
    rnd = np.array([s.round for s in tl.steps], dtype=np.int64)
    seq = np.array([s.seq for s in tl.steps], dtype=np.int64)
    # public events up to each step: (round, msg_seq) <= the step's, round end last, no msg_seq first
    er = ev["round"].to_numpy()
    es = ev["msg_seq"].to_numpy().astype(np.float64)
    es = np.where(es == END, np.inf, np.where(es == NO_SEQ, -np.inf, es))
    sk = np.where(seq == END, np.inf, seq.astype(np.float64))
    n_ev = ((er[None, :] < rnd[:, None]) | ((er[None, :] == rnd[:, None]) & (es[None, :] <= sk[:, None]))).sum(1)
    steps = [Step(s.idx, s.round, s.seq, s.label, str(phase_of.get((s.round, s.seq), s.phase)), s.ts,
                  [n for n in names if n in s.alive], s.speaker, int(n_ev[s.idx]), s.event_idx is not None)
             for s in tl.steps]  # fmt: skip
    beliefs: list[dict[str, dict[str, int]]] = []
    fresh: list[dict[str, set[str]]] = []
    for i in range(len(steps)):
        at = {a: rows[i] for a, rows in tl.beliefs.items() if rows[i]}
        beliefs.append({a: {pid: v for pid, (v, _) in held.items()} for a, held in at.items()})
        fresh.append({a: new for a, held in at.items() if (new := {pid for pid, (_, carried) in held.items() if not carried})})
    return StepModel(str(c.games["game_id"].iat[g]), g, names, roles, steps, beliefs, fresh,
                     {"total": int(len(p)), "ok": int(p["parse_ok"].sum())})


def _attitude(code: int, conf: float, norm: bool) -> int:
    if conf < 50:
        return L.NEUTRAL
    if code == L.MAFIA or (norm and code == L.DON):
        return L.SUSPECTS
    if code in (L.UNKNOWN, L.EXACT_EMPTY, L.EXACT_NONSTRING) or (norm and code == L.UNUSABLE):
        return L.NEUTRAL
    return L.TRUSTS


def _match(a: int, toward: list[tuple[int, int, bool]] | None, maps: dict[int, dict[int, tuple[int, float]]],
           alive: set[int], is_maf: list[bool], names: list[str], norm: bool) -> dict[str, Any]:
    """Impersonate match score of living agent ``a`` at one step (docs/metrics.md §11.2).

    Believed attitudes = its ``toward_me`` items about living others (fallback: attitudes
    from its own role guesses about them); actual = each other's same-step assessment of
    ``a``; Mafia-Mafia pairs skipped. ``mismatched`` names the others (seat order) whose
    actual attitude differs from the believed one.
    """
    believed = {t: att for t, att, empty in (toward or []) if t >= 0 and t != a and t in alive and not empty}
    if not believed and a in maps:
        believed = {t: _attitude(lab, cf, norm) for t, (lab, cf) in maps[a].items() if t != a and t in alive}
    mm = tt = 0
    bad: list[int] = []
    for t, att in believed.items():
        if is_maf[a] and is_maf[t]:
            continue
        if t in maps and a in maps[t]:
            tt += 1
            if att == _attitude(*maps[t][a], norm):
                mm += 1
            else:
                bad.append(t)
    return {"matched": mm, "total": tt, "mismatched": [names[t] for t in sorted(bad)]}


def step_metrics(c: Corpus, game: str | int, mode: Mode) -> dict[str, Any]:
    sm_model = build_step_model(c, game)
    g = sm_model.g
    names, roles = sm_model.names, sm_model.roles
    norm = not mode.is_compat
    true = [L.true_role_code(r) for r in roles]
    if norm:
        true = [L.MAFIA if t == L.DON else t for t in true]
    is_maf = [r in ("Mafia", "Don") for r in roles]
    ra = items_with_probe(c, "ra", raw_only=True, game=g)
    smi = items_with_probe(c, "sm", "social_map", raw_only=True, game=g)
    stored_kind = c.probes["stored_kind"].to_numpy()
    hashes = c.probes["hash"].to_numpy()
    amap: dict[int, dict[int, tuple[int, float]]] = {}
    for pi, sub in ra.groupby("pi"):
        d: dict[int, tuple[int, float]] = {}
        labs = (sub["role"] if norm else sub["exact"]).to_numpy()
        if norm:  # map normalised Unknown / unusable like empty labels
            labs = np.where(sub["exact"].to_numpy() == L.EXACT_EMPTY, L.EXACT_EMPTY, labs)
        for t, lab, cf in zip(sub["tgt"].to_numpy(), labs, np.nan_to_num(sub["conf"].to_numpy(), nan=0.0)):
            if t >= 0:
                d[int(t)] = (int(lab), float(cf))
        amap[int(pi)] = d
    tmap: dict[int, list[tuple[int, int, bool]]] = {}
    for pi, sub in smi.groupby("pi"):
        tmap[int(pi)] = list(zip(sub["tgt"].tolist(), sub["att"].tolist(), sub["att_empty"].tolist()))
    seat = {n: i for i, n in enumerate(names)}

    def guess_of(lab: int) -> int:
        return L.UNKNOWN if lab in (L.EXACT_EMPTY, L.EXACT_NONSTRING) else lab

    per_step = []
    cal_n = np.zeros(5, int)
    cal_k = np.zeros(5, int)
    last_counted: dict[str, int] = {}
    for st, bel in zip(sm_model.steps, sm_model.beliefs):
        alive = {seat[n] for n in st.alive}
        maps: dict[int, dict[int, tuple[int, float]]] = {}
        for a, probes in bel.items():
            pi = probes.get("role_assessment")
            if pi is not None and stored_kind[pi] == K_LIST and amap.get(pi):
                maps[seat[a]] = amap[pi]
        acc: dict[str, Any] = {}
        for a in range(len(names)):
            if a not in alive or a not in maps:
                acc[names[a]] = None
                continue
            ent = [(t, v) for t, v in maps[a].items() if t in alive and t != a]
            acc[names[a]] = round(sum(guess_of(v[0]) == true[t] for t, v in ent) / len(ent), 4) if ent else None
        deception: dict[str, Any] = {}
        evaluable = detected = 0
        for m_ in sorted(alive):
            if not is_maf[m_]:
                continue
            obs = [o for o in alive if not is_maf[o] and o != m_ and o in maps and m_ in maps[o]]
            if not obs:
                deception[names[m_]] = None
                continue
            named = sum(maps[o][m_][0] == L.MAFIA for o in obs)
            evaluable += 1
            detected += named * 2 > len(obs)
            deception[names[m_]] = round(1 - named / len(obs), 4)
        second: dict[str, Any] = {}
        match: dict[str, dict[str, Any]] = {}
        for a in range(len(names)):
            pi = bel.get(names[a], {}).get("social_map")
            items = tmap.get(pi) if pi is not None else None
            if a not in alive or not items:
                second[names[a]] = None
            else:
                cnt = corr = 0
                for t, att, empty in items:
                    if t < 0 or t == a or t not in alive or empty or (is_maf[a] and is_maf[t]):
                        continue
                    if t in maps and a in maps[t]:
                        lab, cf = maps[t][a]
                        cnt += 1
                        corr += att == _attitude(lab, cf, norm)
                second[names[a]] = round(corr / cnt, 4) if cnt else None
            if a in alive:
                match[names[a]] = _match(a, items, maps, alive, is_maf, names, norm)
        # calibration modal
        for a, probes in bel.items():
            pi = probes.get("role_assessment")
            if pi is None or stored_kind[pi] != K_LIST:
                continue
            if last_counted.get(a) == hashes[pi]:
                continue
            last_counted[a] = hashes[pi]
            ai = seat[a]
            for t, (lab, cf) in amap.get(pi, {}).items():
                if t == ai or t not in alive or lab in (L.EXACT_EMPTY, L.EXACT_NONSTRING, L.UNKNOWN):
                    continue
                if norm and lab == L.UNUSABLE:
                    continue
                b = min(4, int(np.floor(min(100.0, max(0.0, cf)) / 20)))
                cal_n[b] += 1
                cal_k[b] += int(lab == true[t])
        per_step.append({
            # compat: the original viewer's spelling of a round end ("R1 end")
            "idx": st.idx, "label": st.label if norm else step_label(st.round, st.seq, original=True),
            # the original labels steps without a logged message (night analysis, round end) "unknown"
            "phase": st.phase if (st.has_message or norm) else "unknown", "alive": len(alive),
            "crowd_recall": (round(detected / evaluable, 4) if evaluable else None),
            "deception": deception, "accuracy": acc, "second_order": second, "match": match,
        })

    def mean_of(vals: list[Any]) -> tuple[float | None, int]:
        v = [x for x in vals if x is not None]
        return (round(float(np.mean(v)), 4) if v else None, len(v))

    # impersonate match: pooled over every (step, agent) and each agent's last step with a score
    imp_m = sum(v["matched"] for s in per_step for v in s["match"].values())
    imp_t = sum(v["total"] for s in per_step for v in s["match"].values())
    last_imp: dict[str, dict[str, Any]] = {}
    for s in per_step:
        for a, v in s["match"].items():
            if v["total"]:
                last_imp[a] = {"step": s["idx"], "label": s["label"], "matched": v["matched"], "total": v["total"]}

    fo, fo_n = mean_of([x for s in per_step for x in s["accuracy"].values()])
    cr, cr_n = mean_of([s["crowd_recall"] for s in per_step])
    de, _ = mean_of([x for s in per_step for x in s["deception"].values()])
    so, so_n = mean_of([x for s in per_step for x in s["second_order"].values()])
    cal = []
    for b in range(5):
        n, k = int(cal_n[b]), int(cal_k[b])
        lo = 20 * b
        cal.append({"lo": lo, "hi": 100 if b == 4 else lo + 19, "n": n, "ok": k,
                    "acc": round(k / n, 4) if n else None,
                    "wilson95": [round(x, 4) for x in wilson(k, n, VIEWER_Z)] if n else []})
    return {
        "total_steps": len(per_step),
        "parse_stats": sm_model.parse_stats,
        "first_order_accuracy_mean_over_agent_steps": fo,
        "first_order_accuracy_nonnull_cells": fo_n,
        "crowd_recall_mean_over_steps": cr,
        "crowd_recall_nonnull_steps": cr_n,
        "deception_mean_over_mafia_steps": de,
        "second_order_mean_over_agent_steps": so,
        "second_order_nonnull_cells": so_n,
        "impersonate_match_pooled": {"matched": imp_m, "total": imp_t, "share": round(imp_m / imp_t, 4) if imp_t else None},
        "impersonate_match_last_step_per_agent": last_imp,
        "calibration_bins_all_agents": cal,
        "per_step": per_step,
    }
