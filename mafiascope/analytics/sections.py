"""The report's sections, declared in the order they are built, written to JSON and printed: what each
computes, how its text reads, whether it needs probe logs and whether the Dashboard shows it; and the
groups a lean report releases memory after (:func:`.executor.run_sections`). Shapes: docs/report_schema.md."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from . import accounting, dynamics, episodes, f1, f2, f3, f4
from . import seats as seat_stats
from .corpus import Corpus
from .metric import FRAGILE_MARK, FRAGILE_NOTE, PROPORTION, Place, few_votes
from .modes import Mode


@dataclass
class Scope:
    """What the sections are computed over: ``seats`` (an (m, seats) mask) keeps only those seats' rows in
    every seat-attributable figure; ``transcripts`` adds F4's transcript baselines (always computed without
    probe logs); ``per_model`` the per-model sections."""

    c: Corpus
    mode: Mode
    seats: np.ndarray | None = None
    transcripts: bool = True
    per_model: bool = True

    @cached_property
    def has_probes(self) -> bool:
        return self.c.probed().n_rows("probes") > 0

    @cached_property
    def probed(self) -> Scope:
        """The scope of the sections that read probe answers: the games with probe logs (every game when none
        has any: what they compute without, such as F4's transcript baselines, counts them all)."""
        cp = self.c.probed()
        if cp is self.c or not cp.m:
            return self
        keep = self.c.games["game_id"].isin(set(cp.game_ids)).to_numpy()
        out = Scope(cp, self.mode, None if self.seats is None else self.seats[keep], self.transcripts, self.per_model)
        out.__dict__["has_probes"] = self.has_probes
        return out


Entries = dict[str, Any]  # a section's top-level report keys


@dataclass(frozen=True)
class Section:
    """A report section: ``build(scope)`` gives its top-level report entries; ``text(report)`` its lines of
    the text report; ``needs_probes``: not built without probe logs; ``reads_probes``: built over the games with
    probe logs, while a section that needs only the game logs (outcomes, votes) counts every selected game
    (docs/metrics.md §2); ``shown``: the Dashboard's report holds it
    (:data:`Place.DASHBOARD`); ``prime(scope, group)``: called after each group of a lean report (see
    :class:`Group`) while the group's intermediates are still memoised."""

    key: str
    build: Callable[[Scope], Entries]
    text: Callable[[dict[str, Any]], list[str]]
    needs_probes: bool = False
    shown: frozenset[Place] = frozenset()
    marked_absent: bool = True  # without probe logs: ``{key: ABSENT}`` (else left out)
    prime: Callable[[Scope, set[str]], None] | None = None  # builds what it needs of a group before the group's memo goes
    reads_probes: bool = True  # built over the games with probe logs (:attr:`Scope.probed`); False: over every game


@dataclass(frozen=True)
class Group:
    """Consecutive sections sharing intermediates. After its last section a lean report builds the seat-level
    sums of their metrics, lets go of what the group memoised, of the tables no later section reads
    (``releases``), of the loaded columns no later section reads (``drop_columns``: table -> columns), and of
    the probe columns but ``probe_columns`` (all kept when None)."""

    sections: tuple[str, ...]
    releases: tuple[str, ...] = ()
    drop_columns: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    probe_columns: tuple[str, ...] | None = None


ABSENT = {"absent": "no probe logs in the selected games"}


def pct(x: Any) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def ci(x: Any) -> str:
    return "" if not x else f" [{x[0]:.3f}, {x[1]:.3f}]"


def _present(rep: dict[str, Any], key: str, inner: str) -> dict[str, Any] | None:
    """The section ``key`` of the report when it holds figures (``inner`` in it), else None (absent, left out)."""
    x = rep.get(key)
    return x if isinstance(x, dict) and inner in x else None


# ----------------------------------------------------------------------------- builds


def _parse(s: Scope) -> Entries:  # (first: its reads of the probe rows find their games meanwhile, not before)
    return {"parse": accounting.parse_accounting(s.c, s.mode, seats=s.seats), "cost": accounting.probe_cost(s.c)}


def _f3(s: Scope) -> Entries:
    full = f3.f3(s.c, s.mode, seats=s.seats)
    can = full["canonical"]
    return {"f3": {
        "ratio": can["suspects_ratio"], "ratio_ci95": can.get("ratio_ci95"), "n_pairs": can["n"],
        "accuracy": can["accuracy"], "majority_baseline": can["majority_baseline"], "diff": can["diff"],
        "ratio_innocent": full["innocent_predictors"]["suspects_ratio"],
        "ratio_mafia": full["mafia_predictors"]["suspects_ratio"],
        **full,
    }}


def _dynamics(s: Scope) -> Entries:
    d = dynamics.dynamics(s.c, s.mode, seats=s.seats)
    return {"dynamics": {"volatility": d["all"]["volatility"]["point"], "flip_rate": d["all"]["flip_rate"]["point"],
                         "return_rate": d["all"]["return_rate"]["point"], "groups": d}}


def _episodes(s: Scope) -> Entries:
    out: dict[str, Any] = dict(episodes.episode_counts(s.c))  # the counts only: no candidate records
    if s.seats is not None:
        slots, switches = episodes.episode_seat_counts(s.c)
        k = s.seats[:, : slots.shape[1]]
        out["seat_slots"], out["seat_switches"] = int((slots * k).sum()), int((switches * k).sum())
    return {"episodes": out}


def _custom(s: Scope) -> Entries:
    from .custom import custom_probes

    cp = custom_probes(s.c, s.mode)
    return {"custom_probes": cp} if cp else {}


def _prime_by_model(s: Scope, group: set[str]) -> None:
    if s.per_model:
        seat_stats.prime(s.c, s.mode, group)


def _by_model(s: Scope) -> Entries:
    if not s.per_model:
        return {}
    return {"by_model": seat_stats.by_model(s.c, s.mode), "by_model_role": seat_stats.by_model_role(s.c, s.mode)}


# ----------------------------------------------------------------------------- text


def _parse_text(rep: dict[str, Any]) -> list[str]:
    p = rep.get("parse")
    return [f"\nProbe calls {p['calls']}, parsed {p['parsed']} ({pct(p['parse_rate'])}), repaired {p['repair_recovered']},"
            f" transport errors {p['transport_errors']}, calls/game {p['calls_per_game']}"] if p else []


def _outcome_text(rep: dict[str, Any]) -> list[str]:
    o = rep.get("outcome")
    return [f"Outcomes: {o['completed']} completed, Mafia wins {o['mafia_wins']} ({pct(o['mafia_win_rate'])}"
            f"{ci(o['mafia_win_rate_wilson95'])}), mean length {o['game_length_rounds']['mean']} rounds"] if o else []


def _votes_text(rep: dict[str, Any]) -> list[str]:
    v = rep.get("votes")
    return [f"Votes: {v['votes']} counted; town votes on Mafia {v['town_on_mafia']}/{v['town_votes']} "
            f"({pct(v['town_on_mafia_rate'])})"] if v else []


def _f1_text(rep: dict[str, Any]) -> list[str]:
    f = _present(rep, "f1", "by_round")
    if f is None:
        return []
    L = ["\nF1 first-order beliefs by round: acc (chance) | unknown | Mafia recall (chance)"]
    for r, v in f["by_round"].items():
        L.append(f"  R{r}: {pct(v['acc'])}{ci(v['acc_ci95'])} ({pct(v['acc_chance'])}) n={v['acc_n']} | "
                 f"{pct(v['unk'])} n={v['unk_n']} | {pct(v['recall'])}{ci(v['recall_ci95'])} ({pct(v['recall_chance'])}) "
                 f"n={v['recall_n']}")
    return L


def _f2_text(rep: dict[str, Any]) -> list[str]:
    f = _present(rep, "f2", "bins")
    if f is None:
        return []
    L = [f"\nF2 calibration: n={f['n']} ECE {f['ece']}{ci(f.get('ece_ci95'))} Brier {f['brier']}{ci(f.get('brier_ci95'))}"]
    L += [f"  {b:>6}: n={v['n']:<5} acc {pct(v['acc'])} mean conf {v['mean_conf']:.1f}" for b, v in f["bins"].items()]
    return L


def _f3_text(rep: dict[str, Any]) -> list[str]:
    f = _present(rep, "f3", "ratio")
    return [f"\nF3 spotlight ratio {f['ratio']}{ci(f.get('ratio_ci95'))} (n={f['n_pairs']} pairs); innocent predictors "
            f"{f['ratio_innocent']}, Mafia predictors {f['ratio_mafia']}; accuracy {pct(f['accuracy'])} vs majority "
            f"{pct(f['majority_baseline'])}"] if f else []


F4_ROWS = ("top1", "committed_set", "post_vote_top1", "transcript_most_mentioned", "transcript_most_accused",
           "previous_round_plurality")


def _f4_text(rep: dict[str, Any]) -> list[str]:
    if "f4" not in rep:
        return []
    L = ["\nF4 belief-vote coupling (pre-vote rule): hit rate (chance)"]
    for grp, v in rep["f4"].items():
        for key in (k for k in F4_ROWS if k in v):  # transcript baselines only with --transcripts
            x, label = v[key], key.replace("transcript_", "transcript ")
            fr = few_votes(x["n"])
            L.append(f"  {grp:<8} {label:<25} {x['k']}/{x['n']} {pct(x['rate'])}{ci(x['ci95'])} ({pct(x['chance'])})"
                     + (f"  {FRAGILE_MARK} {fr}" if fr else ""))
    return L


def _dynamics_text(rep: dict[str, Any]) -> list[str]:
    d = _present(rep, "dynamics", "groups")
    return [f"\nBelief dynamics: volatility {d['volatility']}, flip rate {pct(d['flip_rate'])}, return rate "
            f"{pct(d['return_rate'])}"] if d else []


def _episodes_text(rep: dict[str, Any]) -> list[str]:
    e = _present(rep, "episodes", "complete")
    return [f"Episodes: {e['complete']} complete comparisons of {e['comparisons']}, {e['d_positive']} with D > 0, "
            f"{e['windows']} windows"] if e else []


def _custom_text(rep: dict[str, Any]) -> list[str]:
    L = []
    for pid, cp in (rep.get("custom_probes") or {}).items():
        L.append(f"\nCustom probe {pid}: {cp['calls']} calls, {cp['parsed']} parsed"
                 + (f", {cp['valid']} valid against its schema" if cp["schema_declared"] else ", no declared schema")
                 + f", {cp['bot_answers']} offline-bot answers; usable {pct(cp['usable_rate'])} (not in the headline parse rate)")
        for name, e in (cp.get("fields") or {}).items():
            if e["kind"] == "numeric":
                L.append(f"  {name}: mean {e['mean']} (n={e['n']}); by role {e['mean_by_role']}")
            elif "distribution" in e:
                L.append(f"  {name}: {e['distribution']}")
    return L


def _by_model_text(rep: dict[str, Any]) -> list[str]:
    if not rep.get("by_model"):
        return []
    from .metrics import better, statistics

    fmt = {st.key: st.format for _, st in statistics()}  # each value written as its statistic declares
    L = ["\nBy model (seat-level; value [95% CI] n, which way is better; " + FRAGILE_NOTE + "):"]
    for mdl, e in rep["by_model"].items():
        L.append(f"  {mdl}: {e['seats']} seats in {e['games']} games")
        for key, x in e["metrics"].items():
            if x["point"] is not None:
                f = fmt.get(key, PROPORTION)
                lo_hi = f" [{f.text(x['ci95'][0])}, {f.text(x['ci95'][1])}]" if x["ci95"] else ""
                L.append(f"    {key:<34} {f.text(x['point'])}{lo_hi} n={x['n']}  {better(key)}"
                         + (f"  {FRAGILE_MARK} {x['fragile']}" if x.get("fragile") else ""))
    return L


def _none(rep: dict[str, Any]) -> list[str]:
    return []


DASHBOARD = frozenset({Place.DASHBOARD})
SECTIONS: tuple[Section, ...] = (
    Section("parse", _parse, _parse_text, shown=DASHBOARD),
    Section("outcome", lambda s: {"outcome": accounting.outcomes(s.c)}, _outcome_text, shown=DASHBOARD,
            reads_probes=False),
    Section("votes", lambda s: {"votes": accounting.vote_summary(s.c, seats=s.seats)}, _votes_text, reads_probes=False),
    Section("f1", lambda s: {"f1": {"by_round": f1.f1_by_round(s.c, s.mode, seats=s.seats)}}, _f1_text, True, DASHBOARD),
    Section("f2", lambda s: {"f2": f2.f2(s.c, s.mode, seats=s.seats)}, _f2_text, True, DASHBOARD),
    Section("f3", _f3, _f3_text, True, DASHBOARD),
    Section("f4", lambda s: {"f4": f4.f4(s.c, s.mode, transcripts=s.transcripts or not s.has_probes, seats=s.seats)},
            _f4_text, shown=DASHBOARD),
    Section("dynamics", _dynamics, _dynamics_text, True, DASHBOARD),
    Section("episodes", _episodes, _episodes_text, True),
    Section("personality", lambda s: {"personality": accounting.personality_error(s.c, seats=s.seats)}, _none, True),
    Section("plans", lambda s: {"plans": accounting.plan_action_consistency(s.c, seats=s.seats)}, _none, True),
    Section("custom_probes", _custom, _custom_text, True, marked_absent=False),
    Section("by_model", _by_model, _by_model_text, prime=_prime_by_model, reads_probes=False),  # (each metric its games)
)

# the probe columns most groups read: the others (the parse section's and cost's) are let go of after each group
PROBE_COLUMNS = ("g", "seat", "round", "pms", "probe_seq", "timestamp", "probe_id", "parse_ok")
# the only probe columns the sections after the episodes read (personality: its items' probe_id, seat and round;
# plans: seat, round, timestamp): the rest (~90 MB at 10,000 games) is let go of before personality's working set
LATE_PROBE_COLUMNS = ("seat", "round", "timestamp", "probe_id")
GROUPS: tuple[Group, ...] = (
    Group(("parse", "outcome", "votes"), probe_columns=PROBE_COLUMNS),
    Group(("f1", "f2"), probe_columns=PROBE_COLUMNS),
    Group(("f3",), ("sm",), {"ra": ("conf",)}, PROBE_COLUMNS),  # social maps: F3 alone reads them; F4 no confidences
    Group(("f4",), ("ra",), probe_columns=PROBE_COLUMNS),  # role assessments: read last by F4
    Group(("dynamics",), probe_columns=PROBE_COLUMNS),  # its suspicion states go before the episodes' step table
    Group(("episodes",), ("sr",), probe_columns=LATE_PROBE_COLUMNS),
    Group(("personality",), ("pp",), probe_columns=LATE_PROBE_COLUMNS),
    Group(("plans",), ("pa", "events", "votes", "probes")),
)


def section_keys(place: Place | None = None) -> tuple[str, ...]:
    """The sections' keys in order (those shown at ``place``)."""
    return tuple(s.key for s in SECTIONS if place is None or place in s.shown)
