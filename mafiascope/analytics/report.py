"""The corpus report: every metric in one JSON-able dict (shape: docs/report_schema.md)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from . import accounting, dynamics, episodes, f1, f2, f3, f4
from . import seats as seat_stats
from .runtime import collector_paused, release_free_memory
from .corpus import Corpus
from .modes import Mode
from .stats import dense_multiplicities

REPORT_VERSION = 1


def audit_section(c: Corpus) -> dict[str, Any]:
    total: Counter = Counter()
    per_game = {}
    for gid, cnt in sorted(c.audit.items()):
        clean = {k: int(v) for k, v in cnt.items() if v}
        if clean:
            per_game[gid] = clean
        total.update(clean)
    return {"totals": dict(sorted(total.items())), "games": per_game, "selection": c.selection}


PROBE_SECTIONS = ("f1", "f2", "f3", "dynamics", "episodes", "personality", "plans")
# a lean report's groups of consecutive sections (sections of a group share intermediates) and the
# tables no later section reads; after each group the per-seat statistics of its metrics are built,
# then its intermediates dropped (only these small derived arrays are kept)
LEAN_GROUPS: tuple[tuple[frozenset[str], tuple[str, ...]], ...] = (
    (frozenset({"parse", "outcome", "votes"}), ()),
    (frozenset({"f1", "f2"}), ()),
    (frozenset({"f3"}), ("sm",)),  # social maps: F3 alone reads them
    (frozenset({"f4"}), ("ra",)),  # role assessments: read last by F4
    (frozenset({"dynamics"}), ()),  # its suspicion states are let go of before the episodes' step table is built
    (frozenset({"episodes"}), ("sr",)),
    (frozenset({"personality"}), ("pp",)),
    (frozenset({"plans"}), ("pa", "events", "votes", "probes")),
)
# the probe columns most groups read: the others (the parse section's and cost's) are let go of after each group
LEAN_PROBE_COLUMNS = ("g", "seat", "round", "pms", "probe_seq", "timestamp", "probe_id", "parse_ok")
# the only probe columns the sections after the episodes read (personality: its items' probe_id, seat and round;
# plans: seat, round, timestamp): the rest (~90 MB at 10,000 games) is let go of before personality's working set
LATE_PROBE_COLUMNS = ("seat", "round", "timestamp", "probe_id")
# after a section's group, loaded columns no later section reads although their table is read again
LEAN_DROP_COLUMNS: dict[str, dict[str, tuple[str, ...]]] = {
    "f3": {"ra": ("conf",)},  # the assessments' confidences (~80 MB of float64 at 10,000 games): F4 does not read them
}


class _Lean:
    """After each group of :data:`LEAN_GROUPS`: prime the seat-level statistics, drop what the group
    memoised (but the values declared ``Cached(report=True)``), release the tables no later section reads. Values are unchanged (anything dropped is
    rebuilt the same way if asked for again); memory holds one group's intermediates at a time."""

    def __init__(self, c: Corpus, mode: Mode, on: bool, per_model: bool):
        self.c, self.mode, self.on, self.per_model = c, mode, on, per_model
        self.before = set(c.memo_keys())

    def after(self, section: str) -> None:
        if not self.on:
            return
        for group, tables in LEAN_GROUPS:
            if section in group and section == max(group, key=_ORDER.index):
                if self.per_model:
                    seat_stats.prime(self.c, self.mode, set(group))
                self.c.forget(*[k for k in self.c.memo_keys() if k not in self.before and not k[0].report])
                self.c.release(*tables)
                for table, cols in LEAN_DROP_COLUMNS.get(section, {}).items():
                    self.c.release_columns(table, [k for k in self.c.columns(table) if k not in cols])
                if "probes" not in tables:
                    late = _ORDER.index(section) >= _ORDER.index("episodes")
                    self.c.release_columns("probes", LATE_PROBE_COLUMNS if late else LEAN_PROBE_COLUMNS)
                release_free_memory()  # the freed intermediates' pages, worker threads' arenas included


_ORDER = ["parse", "outcome", "votes", "f1", "f2", "f3", "f4", "dynamics", "episodes", "personality", "plans"]
ABSENT = {"absent": "no probe logs in the selected games"}


def build_report(c: Corpus, mode: Mode, *, transcripts: bool = True, sections: tuple[str, ...] | None = None,
                 seats: np.ndarray | None = None, seat_filter: dict[str, Any] | None = None,
                 per_model: bool = True, lean: bool | None = None) -> dict[str, Any]:
    """Every corpus metric. ``seats``: an (m, seats) mask; every seat-attributable figure then
    counts only those seats' rows (described by ``seat_filter``). ``per_model``: add
    ``by_model`` and ``by_model_role`` (seat-level attribution, docs/report_schema.md).

    A corpus without probe logs (transcript-only games) is analysed too: outcomes, votes and
    the F4 transcript baselines, with the probe-based sections marked ``absent``.

    ``lean`` (default: for the full report, ``sections`` None) keeps memory to one group of
    sections' intermediates at a time (:data:`LEAN_GROUPS`); the corpus then holds none of them
    afterwards (a caller reusing it for other views may pass ``lean=False``). Same values either way.
    """
    # the report's ~15 pooled products read one float matrix
    with dense_multiplicities(), collector_paused():
        return _build_report(c, mode, transcripts=transcripts, sections=sections, seats=seats,
                             seat_filter=seat_filter, per_model=per_model, lean=lean)


def _build_report(c: Corpus, mode: Mode, *, transcripts: bool, sections: tuple[str, ...] | None,
                  seats: np.ndarray | None, seat_filter: dict[str, Any] | None, per_model: bool,
                  lean: bool | None) -> dict[str, Any]:
    want = (lambda s: True) if sections is None else (lambda s: s in sections)
    lean_on = sections is None if lean is None else lean
    ln = _Lean(c, mode, lean_on and (sections is None), per_model)
    rep: dict[str, Any] = {"report_version": REPORT_VERSION, "mode": mode.name, "boot": mode.boot, "seed": mode.seed,
                           "n_games": c.m, "game_ids": c.game_ids, "probe_logs": None}
    if seats is not None:
        rep["seat_filter"] = {**(seat_filter or {}), "seats": int(seats.sum())}
    if want("parse"):  # (first: its reads of the probe rows find their games meanwhile, not before)
        rep["parse"] = accounting.parse_accounting(c, mode, seats=seats)
        rep["cost"] = accounting.probe_cost(c)
    rep["probe_logs"] = has_probes = c.n_rows("probes") > 0
    if not has_probes:
        transcripts = True
    ln.after("parse")
    if want("outcome"):
        rep["outcome"] = accounting.outcomes(c)
    ln.after("outcome")
    if want("votes"):
        rep["votes"] = accounting.vote_summary(c, seats=seats)
    ln.after("votes")
    if want("f1"):
        rep["f1"] = {"by_round": f1.f1_by_round(c, mode, seats=seats)}
    ln.after("f1")
    if want("f2"):
        rep["f2"] = f2.f2(c, mode, seats=seats)
    ln.after("f2")
    if want("f3"):
        rep["f3"] = _f3_entry(c, mode, seats)
    ln.after("f3")
    if want("f4"):
        rep["f4"] = f4.f4(c, mode, transcripts=transcripts, seats=seats)
    ln.after("f4")
    if want("dynamics"):
        d = dynamics.dynamics(c, mode, seats=seats)
        rep["dynamics"] = {
            "volatility": d["all"]["volatility"]["point"], "flip_rate": d["all"]["flip_rate"]["point"],
            "return_rate": d["all"]["return_rate"]["point"], "groups": d,
        }
    ln.after("dynamics")
    if want("episodes"):
        rep["episodes"] = _episodes_entry(c, seats)
    ln.after("episodes")
    if want("personality"):
        rep["personality"] = accounting.personality_error(c, seats=seats)
    ln.after("personality")
    if want("plans"):
        rep["plans"] = accounting.plan_action_consistency(c, seats=seats)
    ln.after("plans")
    if not has_probes:
        for key in PROBE_SECTIONS:
            if key in rep:
                rep[key] = dict(ABSENT)
    if has_probes and want("custom_probes"):
        from .custom import custom_probes

        cp = custom_probes(c, mode)
        if cp:
            rep["custom_probes"] = cp
    if per_model and want("by_model"):
        rep["by_model"] = seat_stats.by_model(c, mode)
        rep["by_model_role"] = seat_stats.by_model_role(c, mode)
    rep["audit"] = audit_section(c)
    return rep


def _f3_entry(c: Corpus, mode: Mode, seats: np.ndarray | None) -> dict[str, Any]:
    full = f3.f3(c, mode, seats=seats)
    can = full["canonical"]
    return {
        "ratio": can["suspects_ratio"], "ratio_ci95": can.get("ratio_ci95"), "n_pairs": can["n"],
        "accuracy": can["accuracy"], "majority_baseline": can["majority_baseline"], "diff": can["diff"],
        "ratio_innocent": full["innocent_predictors"]["suspects_ratio"],
        "ratio_mafia": full["mafia_predictors"]["suspects_ratio"],
        **full,
    }


def _episodes_entry(c: Corpus, seats: np.ndarray | None) -> dict[str, Any]:
    out: dict[str, Any] = dict(episodes.episode_counts(c))  # the counts only: no candidate records
    if seats is not None:
        slots, switches = episodes.episode_seat_counts(c)
        k = seats[:, : slots.shape[1]]
        out["seat_slots"], out["seat_switches"] = int((slots * k).sum()), int((switches * k).sum())
    return out


def format_report(rep: dict[str, Any]) -> str:
    """A readable plain-text rendering of :func:`build_report`'s dict."""
    L: list[str] = []

    def pct(x: Any) -> str:
        return "n/a" if x is None else f"{100 * x:.1f}%"

    def ci(x: Any) -> str:
        return "" if not x else f" [{x[0]:.3f}, {x[1]:.3f}]"

    L.append(f"mafiascope analytics report - mode {rep['mode']}, {rep['n_games']} games, B={rep['boot']}")
    if rep.get("seat_filter"):
        sf = rep["seat_filter"]
        L.append("Seat filter: " + ", ".join(f"{k} {v}" for k, v in sf.items() if k != "seats")
                 + f" ({sf['seats']} seats; seat-attributable figures count only their rows)")
    if rep.get("probe_logs") is False:
        L.append("No probe logs: outcomes, votes and transcript baselines only; probe-based sections absent.")
    if "parse" in rep:
        p = rep["parse"]
        L.append(f"\nProbe calls {p['calls']}, parsed {p['parsed']} ({pct(p['parse_rate'])}), repaired {p['repair_recovered']},"
                 f" transport errors {p['transport_errors']}, calls/game {p['calls_per_game']}")
    if "votes" in rep:
        v = rep["votes"]
        L.append(f"Votes: {v['votes']} counted; town votes on Mafia {v['town_on_mafia']}/{v['town_votes']} ({pct(v['town_on_mafia_rate'])})")
    if "outcome" in rep:
        o = rep["outcome"]
        L.append(f"Outcomes: {o['completed']} completed, Mafia wins {o['mafia_wins']} ({pct(o['mafia_win_rate'])}"
                 f"{ci(o['mafia_win_rate_wilson95'])}), mean length {o['game_length_rounds']['mean']} rounds")
    if "f1" in rep and "by_round" in rep["f1"]:
        L.append("\nF1 first-order beliefs by round: acc (chance) | unknown | Mafia recall (chance)")
        for r, v in rep["f1"]["by_round"].items():
            L.append(f"  R{r}: {pct(v['acc'])}{ci(v['acc_ci95'])} ({pct(v['acc_chance'])}) n={v['acc_n']} | "
                     f"{pct(v['unk'])} n={v['unk_n']} | {pct(v['recall'])}{ci(v['recall_ci95'])} ({pct(v['recall_chance'])}) n={v['recall_n']}")
    if "f2" in rep and "bins" in rep["f2"]:
        f = rep["f2"]
        L.append(f"\nF2 calibration: n={f['n']} ECE {f['ece']}{ci(f.get('ece_ci95'))} Brier {f['brier']}{ci(f.get('brier_ci95'))}")
        for b, v in f["bins"].items():
            L.append(f"  {b:>6}: n={v['n']:<5} acc {pct(v['acc'])} mean conf {v['mean_conf']:.1f}")
    if "f3" in rep and "ratio" in rep["f3"]:
        f = rep["f3"]
        L.append(f"\nF3 spotlight ratio {f['ratio']}{ci(f.get('ratio_ci95'))} (n={f['n_pairs']} pairs); innocent predictors "
                 f"{f['ratio_innocent']}, Mafia predictors {f['ratio_mafia']}; accuracy {pct(f['accuracy'])} vs majority {pct(f['majority_baseline'])}")
    if "f4" in rep:
        L.append("\nF4 belief-vote coupling (pre-vote rule): hit rate (chance)")
        for grp, v in rep["f4"].items():
            for key in ("top1", "committed_set", "post_vote_top1", "transcript_most_mentioned",
                        "transcript_most_accused", "previous_round_plurality"):
                if key not in v:  # transcript baselines only with --transcripts
                    continue
                x = v[key]
                label = key.replace("transcript_", "transcript ")
                L.append(f"  {grp:<8} {label:<25} {x['k']}/{x['n']} {pct(x['rate'])}{ci(x['ci95'])} ({pct(x['chance'])})")
    if "dynamics" in rep and "groups" in rep["dynamics"]:
        d = rep["dynamics"]
        L.append(f"\nBelief dynamics: volatility {d['volatility']}, flip rate {pct(d['flip_rate'])}, return rate {pct(d['return_rate'])}")
    if "episodes" in rep and "complete" in rep["episodes"]:
        e = rep["episodes"]
        L.append(f"Episodes: {e['complete']} complete comparisons of {e['comparisons']}, {e['d_positive']} with D > 0, {e['windows']} windows")
    if rep.get("by_model"):
        L.append("\nBy model (seat-level; value [95% CI] n):")
        for mdl, e in rep["by_model"].items():
            L.append(f"  {mdl}: {e['seats']} seats in {e['games']} games")
            for key, x in e["metrics"].items():
                if x["point"] is not None:
                    L.append(f"    {key:<34} {x['point']:.3f}{ci(x['ci95'])} n={x['n']}")
    for pid, cp in (rep.get("custom_probes") or {}).items():
        L.append(f"\nCustom probe {pid}: {cp['calls']} calls, {cp['parsed']} parsed"
                 + (f", {cp['valid']} valid against its schema" if cp["schema_declared"] else ", no declared schema")
                 + f", {cp['bot_answers']} offline-bot answers; usable {pct(cp['usable_rate'])} (not in the headline parse rate)")
        for field, e in (cp.get("fields") or {}).items():
            if e["kind"] == "numeric":
                L.append(f"  {field}: mean {e['mean']} (n={e['n']}); by role {e['mean_by_role']}")
            elif "distribution" in e:
                L.append(f"  {field}: {e['distribution']}")
    absent = [k for k, v in rep.items() if isinstance(v, dict) and "absent" in v]
    if absent:
        L.append("Absent (no probe logs): " + ", ".join(absent))
    a = rep["audit"]
    L.append("\nAudit: " + (", ".join(f"{k}={v}" for k, v in a["totals"].items()) or "clean")
             + f"; excluded {a['selection'].get('excluded', {})}")
    return "\n".join(L)
