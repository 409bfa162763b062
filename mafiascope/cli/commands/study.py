"""``mafiascope study``: plan, run, watch and report a study (docs/studies.md).

    mafiascope study plan SPEC [--json]
    mafiascope study run SPEC [--dir DIR] [--executor local|ray] [--address A] [--parallel K] [--limit N] [--json]
    mafiascope study status SPEC|DIR [--json]
    mafiascope study report SPEC|DIR [--json]
    mafiascope study calibrate [--games N] [--out FILE] [--json]
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import CliError, emit
from ..options import add_json_flag


def register(sub: Any) -> None:
    p = sub.add_parser("study", help="plan, run (resumable, under a budget), watch and report a study of many games")
    ssub = p.add_subparsers(dest="study_command", metavar="STUDY_COMMAND")

    pl = ssub.add_parser("plan", help="the schedule and the estimate (calls, tokens, money, duration) before anything runs")
    pl.add_argument("spec", help="study spec YAML (configs/studies/*.yaml)")
    pl.add_argument("--schedule", action="store_true", help="also list every scheduled game (id, seed, seating) in the text output")
    add_json_flag(pl, "print the plan as one JSON object")
    pl.set_defaults(func=_plan)

    r = ssub.add_parser("run", help="preflight, then play (or continue) every scheduled game under the budget")
    r.add_argument("spec", help="study spec YAML, or a study directory to resume")
    r.add_argument("--dir", default=None, help="study directory (default: the spec's out:, else logs/studies/<name>)")
    r.add_argument("--executor", choices=("local", "ray"), default=None, help="override the spec's executor.kind")
    r.add_argument("--address", default=None, help="Ray cluster address (default: the spec's, else a local Ray instance)")
    r.add_argument("--parallel", type=int, default=None, help="games in flight at once (default: the spec's executor.parallel)")
    r.add_argument("--limit", type=int, default=None, help="start at most this many games now (resume later)")
    add_json_flag(r, "no progress bar; print the summary as one JSON object")
    r.set_defaults(func=_run)

    s = ssub.add_parser("status", help="ledger counts, spend, faults, invalid games, estimate vs actual")
    s.add_argument("spec", help="study spec YAML or study directory")
    s.add_argument("--dir", default=None, help="study directory when SPEC is a YAML with another out:")
    add_json_flag(s, "print the status as one JSON object")
    s.set_defaults(func=_status)

    rep = ssub.add_parser("report", help="outcomes per arm over finished games (invalid and failed games excluded)")
    rep.add_argument("spec", help="study spec YAML or study directory")
    rep.add_argument("--dir", default=None, help="study directory when SPEC is a YAML with another out:")
    rep.add_argument("--no-models", action="store_true", help="leave out the per-model figures of each arm (faster)")
    add_json_flag(rep, "print the report as one JSON object")
    rep.set_defaults(func=_report)

    c = ssub.add_parser("calibrate", help="measure the bundled estimate profiles from offline bot games")
    c.add_argument("--games", type=int, default=12,
                   help="games per rule set and language, cycling over line-ups: the presets mixed, then each alone (default 12)")
    c.add_argument("--rules", default=",".join(("classic", "classic_sheriff", "sport", "open_table", "imbalanced")),
                   help="comma-separated rule sets to measure (default: all five); other profiles in --out are kept")
    c.add_argument("--out", default=None, help="where to write the profiles (default: mafiascope/study/defaults.json)")
    c.add_argument("--check", nargs="+", metavar="DIR", default=None,
                   help="play nothing: plan the finished games under DIR(s) as studies and set the planned money and its "
                        "90%% interval beside what they cost (the estimate's coverage)")  # fmt: skip
    add_json_flag(c, "print the profiles (or the check) as one JSON object")
    c.set_defaults(func=_calibrate)
    p.set_defaults(func=lambda a: (p.print_help(), 1)[1])


def _load(ref: str, override: str | None = None) -> tuple[Any, Path]:
    from ...study.run import StudyError, load_study

    try:
        spec, study_dir = load_study(ref)
    except StudyError as exc:
        raise CliError(str(exc)) from None
    return spec, Path(override) if override else study_dir


def _money(x: float) -> str:
    return f"{x:.4f}"


def _plan(args: argparse.Namespace) -> int:
    from ...study.run import StudyError, plan_study

    spec, _ = _load(args.spec)
    try:
        plan = plan_study(spec)
    except (StudyError, ValueError) as exc:
        raise CliError(str(exc)) from None
    emit(args, plan, lambda: _plan_text(plan, args.schedule))
    return 0


def _plan_text(plan: dict[str, Any], schedule: bool) -> Iterator[str]:
    est = plan["estimate"]
    yield f"study {plan['study']}: {plan['games']} games in {len(plan['arms'])} arms (spec {plan['spec_hash'][:12]})"
    for name, a in est["arms"].items():
        yield (f"  {name:<20} {a['games']:>5} games  {a['calls']:>9,} calls {a['calls_90']}  "
               f"{a['prompt_tokens']:>12,} + {a['completion_tokens']:>10,} tokens  money {_money(a['money'])} {a['money_90']}  "
               f"~{a['duration_s']:.0f} s  [{a['source']}]")  # fmt: skip
    t = est["total"]
    yield (f"  {'total':<20} {t['games']:>5} games  {t['calls']:>9,} calls {t['calls_90']}  "
           f"{t['prompt_tokens']:>12,} + {t['completion_tokens']:>10,} tokens  money {_money(t['money'])} {t['money_90']}  "
           f"~{t['duration_s']:.0f} s {t['duration_s_90']}")  # fmt: skip
    yield f"budget: {plan['budget']}; executor: {plan['executor']['kind']} x{plan['executor']['parallel']}"
    yield f"uncertainty: {est['uncertainty']}"
    if schedule:
        for g in plan["schedule"]:
            yield f"  {g['game_id']}  seed {g['seed']}  " + ", ".join(str(s['backend']) + (f"={s['role']}" if s['role'] else "") for s in g["seats"])


def _run(args: argparse.Namespace) -> int:
    from ...study.run import StudyError, run_study

    spec, study_dir = _load(args.spec, args.dir)
    if args.parallel is not None and args.parallel < 1:
        raise CliError("--parallel must be at least 1")
    if args.limit is not None and args.limit < 0:
        raise CliError("--limit must be 0 or more")
    try:
        summary = run_study(spec, study_dir, executor=args.executor, address=args.address, parallel=args.parallel,
                            limit=args.limit, quiet=args.json)  # fmt: skip
    except StudyError as exc:
        raise CliError(str(exc)) from None
    emit(args, summary, lambda: _run_text(summary))
    return 1 if summary["counts"]["failed"] else 0


def _run_text(summary: dict[str, Any]) -> Iterator[str]:
    c = summary["counts"]
    yield (f"{c['finished']} finished, {c['invalid']} invalid, {c['cut']} cut, {c['failed']} failed, {c['pending']} pending of "
           f"{summary['scheduled']} in {summary['dir']} ({summary['played_now']} now, {summary['seconds_now']} s); "
           f"spend {_money(summary['spend']['money'])}")  # fmt: skip
    if summary["stopped"]:
        yield f"stopped: {summary['stopped']}"
    for f in summary["failed"]:
        yield f"  failed {f['game_id']}: {f['error']}"


def _load_ran(args: argparse.Namespace) -> tuple[Any, Path]:
    """The spec and the directory of a study that has run (a ledger exists)."""
    spec, study_dir = _load(args.spec, args.dir)
    if not (study_dir / "ledger.jsonl").is_file():
        raise CliError(f"{study_dir}: no study has run here yet (no ledger.jsonl); see mafiascope study plan")
    return spec, study_dir


def _status(args: argparse.Namespace) -> int:
    from ...study.status import study_status

    spec, study_dir = _load_ran(args)
    st = study_status(spec, study_dir)
    emit(args, st, lambda: _status_text(st))
    return 0


def _status_text(st: dict[str, Any]) -> Iterator[str]:
    c = st["counts"]
    yield f"study {st['study']} in {st['dir']}: " + ", ".join(f"{k} {v}" for k, v in c.items()) + f" of {st['scheduled']}"
    for name, a in st["arms"].items():
        dead = f" ({a['stale']} held by a dead runner)" if a["stale"] else ""
        yield (f"  {name:<20} finished {a['finished']}, invalid {a['invalid']}, cut {a['cut']}, failed {a['failed']}, pending {a['pending']}, "
               f"running {a['running']}{dead}; spend {_money(a['money'])}, {a['calls']} calls")  # fmt: skip
    yield (f"spend: {_money(st['spend']['money'])} ({st['spend']['calls']} calls, {st['spend']['prompt_tokens']:,} + "
           f"{st['spend']['completion_tokens']:,} tokens); faults {st['faults']}")  # fmt: skip
    yield from _probe_lines(st["probes"])
    vs = st["estimate_vs_actual"]
    if vs:
        yield (f"estimate vs actual over {vs['games']} settled games: " + "; ".join(
            f"{k} {vs['planned'][k]:,.4g} planned, {vs['actual'][k]:,.4g} actual"
            + (f" ({vs['error'][k]:+.1%})" if vs["error"][k] is not None else "") for k in vs["planned"]))  # fmt: skip
    for row in st["invalid"]:
        yield f"  invalid {row['game_id']}: {row['reason']}"
    for row in st["failed"]:
        yield f"  failed {row['game_id']}: {row['error']}"
    if st["stale_running"]:
        yield (f"held by a dead runner (replayed from scratch by the next study run): {', '.join(st['stale_running'])}")
    if st["runners_alive"]:
        yield f"running now: {', '.join(st['runners_alive'])}"
    if st["last_stop"]:
        yield f"last stop: {st['last_stop']}"


def _probe_lines(pr: dict[str, Any]) -> Iterator[str]:
    """Probe coverage: in total, then per arm and per arm and backend (the study's models)."""

    def fmt(c: dict[str, Any]) -> str:
        share = f" ({c['answered_share']:.1%})" if c["answered_share"] is not None else ""
        delay = f", mean delay {c['mean_delay_s']:.1f} s" if c["mean_delay_s"] is not None else ""
        return f"{c['answered']}/{c['scheduled']} answered{share}, {c['failed']} failed, {c['skipped']} skipped{delay}"

    if not pr["total"]["scheduled"]:
        return
    yield f"probe calls: {fmt(pr['total'])}"
    for arm, c in pr["by_arm"].items():
        yield f"  {arm:<20} {fmt(c)}"
        for b, cb in pr["by_arm_backend"].get(arm, {}).items():
            if cb["scheduled"]:
                yield f"    {b:<18} {fmt(cb)}"


def _report(args: argparse.Namespace) -> int:
    from ...study.status import study_report

    spec, study_dir = _load_ran(args)
    rep = study_report(spec, study_dir, models=not args.no_models)
    emit(args, rep, lambda: _report_text(rep))
    return 0


def _report_text(rep: dict[str, Any]) -> Iterator[str]:
    from ...analytics.metric import FRAGILE_NOTE
    from ...study.status import figure, headline

    heads = headline()

    yield f"study {rep['study']}: outcomes over finished games (invalid, cut and failed excluded); games in {rep['games_dir']}"
    for name, a in rep["arms"].items():
        yield (f"  {name:<20} {a['finished']}/{a['scheduled']} finished ({a['invalid']} invalid, {a['cut']} cut, {a['failed']} failed); "
               f"Mafia won {a['mafia_wins']} ({a['mafia_win_rate']}, CI95 {a['mafia_win_ci95']}); mean rounds {a['mean_rounds']}; "
               f"spend {_money(a['money'])}")  # fmt: skip
        pr = a.get("probe_coverage")
        if pr and pr["scheduled"]:
            yield (f"  {'':<20} probe calls {pr['answered']}/{pr['scheduled']} answered, {pr['failed']} failed, "
                   f"{pr['skipped']} skipped")  # fmt: skip
        for model, m in (a.get("models") or {}).items():
            shown = [f"{label} {figure(m['metrics'][k], fmt)}" for k, label, fmt in heads if m["metrics"].get(k, {}).get("point") is not None]
            yield f"    {model:<24} {m['seats']} seats in {m['games']} games: " + ("; ".join(shown) or "no figures")
    if any(m["metrics"].get(k, {}).get("fragile") for a in rep["arms"].values() for m in (a.get("models") or {}).values()
           for k, _, _ in heads):
        yield FRAGILE_NOTE
    yield f"analyse the games: mafiascope analyze {rep['games_dir']}"



def _calibrate(args: argparse.Namespace) -> int:
    from ...study.calibrate import calibrate
    from ...study.estimate import DEFAULTS_FILE

    if args.check:
        return _calibration_check(args)
    if not 2 <= args.games <= 200:
        raise CliError("--games must be between 2 and 200")
    out = Path(args.out) if args.out else DEFAULTS_FILE
    from ...study.spec import CLASSIC_RULES
    from ...engine.rules import TOURNAMENT_DEFAULTS, VARIANT_ALIASES

    names = [VARIANT_ALIASES.get(r.strip(), r.strip()) for r in args.rules.split(",") if r.strip()]
    bad = [r for r in names if r not in CLASSIC_RULES and r not in TOURNAMENT_DEFAULTS]
    if bad or not names:
        raise CliError(f"--rules: unknown rule set {bad[0] if bad else '(none)'!r}; choose from classic, classic_sheriff, sport, open_table, imbalanced")
    data = calibrate(args.games, out, rule_sets=tuple(names))
    emit(args, data, f"measured {len(names) * 2} profiles ({args.games} games each); {out} holds {len(data['profiles'])}")
    return 0


def _calibration_check(args: argparse.Namespace) -> int:
    from ...logs.io import list_game_dirs
    from ...study.calibrate import backtest

    dirs = []
    for root in map(Path, args.check):
        if not root.is_dir():
            raise CliError(f"--check: {root} is not a directory")
        dirs += list_game_dirs(root)
    rows = backtest(dirs)
    if not rows:
        raise CliError(f"--check: no finished games this checkout can plan under {', '.join(args.check)}")
    covered = sum(r["covered"] for r in rows)
    data = {"arms": rows, "covered": covered, "of": len(rows), "price": {"prompt_per_mtok": 1.0, "completion_per_mtok": 4.0}}

    def text() -> Iterator[str]:
        for r in rows:
            yield (f"{r['games_dir']}  {r['rules']}/{r['language']}/{r['probes']}  {r['games']} games: planned {r['planned']:.4f} "
                   f"{r['money_90']}, actual {r['actual']:.4f} ({r['error']:+.1%}) {'inside' if r['covered'] else 'OUTSIDE'}")  # fmt: skip
        yield f"the 90% money interval covered {covered} of {len(rows)} arms (every backend at 1.0 / 4.0 per million tokens)"

    emit(args, data, text)
    return 0
