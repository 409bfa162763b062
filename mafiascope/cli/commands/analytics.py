"""``mafiascope analyze | compare | report | dynamics | episodes | import`` (analytics; shapes in docs/cli.md)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from pathlib import Path

from .. import CliError, emit
from ..options import add_json_flag


def _add_selection(p: argparse.ArgumentParser) -> None:
    p.add_argument("logs", nargs="+", help="logs directory, game directory or glob (ours or original format)")
    p.add_argument("--corpus", metavar="MANIFEST",
                   help='file of game ids to select: one per line, a JSON list or {"game_ids": [...]}')
    p.add_argument("--language", help="only games in this language (en, ru)")
    p.add_argument("--model", help="only the seats this model played: games where it sat, and in them only its seats' rows "
                                   "(beliefs, votes, probes, plans, ...)")
    p.add_argument("--games-with-model", metavar="MODEL",
                   help="only games in which some seat played MODEL, counting every seat of those games (whole games)")
    p.add_argument("--rule-set", help="only games of this rule set (classic, sport, ...)")
    p.add_argument("--completed-only", action="store_true", help="only games that reached game_over")
    p.add_argument("--include-forks", action="store_true", help="also count fork branches (left out by default)")
    p.add_argument("--include-invalid", action="store_true",
                   help="also count games over their fault budget (game_over.invalid; left out by default)")
    p.add_argument("--alias", action="append", default=[], metavar="OLD=NEW|FILE.yaml",
                   help="name a model otherwise in every table and figure: 'path/to/model=DeepSeek-V3', or a YAML file "
                        "mapping old names to new ones; repeatable; two names aliased to one are pooled")
    p.add_argument("--by", choices=["language"],
                   help="split each model by the game language: 'deepseek-chat (en)' and 'deepseek-chat (ru)' become "
                        "models of their own (per-language columns, comparisons across languages)")
    p.add_argument("--min-games", type=int, metavar="N",
                   help="leave out of the per-model tables, comparisons and figures the models seated in fewer than N "
                        "of the selected games (listed in audit.selection.models_left_out)")
    p.add_argument("--compat", choices=["mafiascope-2026-07"], help="reproduce the original's figures exactly")
    p.add_argument("--boot", type=int, default=1000, help="bootstrap resamples (0 = no CIs; default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: %(default)s)")
    p.add_argument("--cache-dir", help="where parsed games are cached as Parquet, one subdirectory per corpus (default: "
                                       "$MAFIASCOPE_CACHE_DIR, else $XDG_CACHE_HOME/mafiascope or ~/.cache/mafiascope)")
    p.add_argument("--no-cache", action="store_true", help="parse every game afresh and write no cache")
    p.add_argument("--probe-layer", metavar="NAME",
                   help="read the probe answers of this probe layer (written by `mafiascope probes ask`) instead of the "
                        "games' own ('game'); a game without the layer has no probe rows")


def _layer(name: str | None) -> str | None:
    """``--probe-layer`` checked like a game id; ``game`` (the in-game answers) is None."""
    from ...logs.layers import IN_GAME, LayerError, check_layer_name

    if name is None or name == IN_GAME:
        return None
    try:
        return check_layer_name(name)
    except LayerError as exc:
        raise CliError(f"--probe-layer / --layers: {exc}") from None


def _load(args: argparse.Namespace, probe_layer: str | None = None, use_layer_arg: bool = True):
    from ...analytics.corpus import find_game_dirs, load_corpus, load_for_analysis
    from ...analytics.modes import Mode

    layer = _layer(getattr(args, "probe_layer", None)) if use_layer_arg else probe_layer

    if args.corpus and not Path(args.corpus).is_file():
        raise CliError(f"manifest {args.corpus} not found")
    if not find_game_dirs(args.logs):
        raise CliError(f"no game directories (with game.jsonl) under {' '.join(args.logs)}")
    if args.boot < 0:
        raise CliError("--boot must be >= 0")
    if args.model and args.games_with_model:
        raise CliError("use either --model (its seats) or --games-with-model (whole games), not both")
    if args.min_games is not None and args.min_games < 1:
        raise CliError("--min-games must be >= 1")
    from ...analytics.model_names import AliasError, ModelNames, read_aliases

    try:
        names = ModelNames(read_aliases(args.alias), by_language=args.by == "language")
    except AliasError as exc:
        raise CliError(str(exc)) from None
    game_model = args.model or args.games_with_model

    filters = dict(manifest=args.corpus, language=args.language, model=game_model, rule_set=args.rule_set,
                   completed_only=args.completed_only, include_forks=args.include_forks,
                   include_invalid=args.include_invalid, cache_dir=args.cache_dir, use_cache=not args.no_cache,
                   model_names=names or None, min_games=args.min_games, probe_layer=layer)
    if layer is not None:  # a probe layer's figures: the games that hold it
        c = load_corpus(args.logs, probed_only=True, **filters)
        if c.m == 0 and not c.selection.get("excluded", {}).get("invalid"):
            raise CliError(f"--probe-layer {layer}: no selected game holds this probe layer (write it with `mafiascope probes ask "
                           f"LOGS --battery FILE --layer {layer}`)")  # fmt: skip
    else:  # transcript-only games count where no probe answer is needed (compat: the original's selection)
        c = load_for_analysis(args.logs, bool(args.compat), **filters)
    if c.m == 0:
        used = [f"{flag} {val}" for flag, val in (("--corpus", args.corpus), ("--language", args.language), ("--model", args.model),
                                                 ("--games-with-model", args.games_with_model),
                                                 ("--rule-set", args.rule_set)) if val]  # fmt: skip
        used += ["--completed-only"] if args.completed_only else []
        n_invalid = c.selection["excluded"].get("invalid", 0)
        used += [f"{n_invalid} invalid game(s) left out; --include-invalid counts them"] if n_invalid else []
        raise CliError("no games left after selection" + (f" ({', '.join(used)})" if used else ""))
    return c, Mode(compat=args.compat, boot=args.boot, seed=args.seed)


def _seat_filter(args: argparse.Namespace, c):
    """(mask, description) of ``--model``'s seats, or (None, None)."""
    if not getattr(args, "model", None):
        return None, None
    from ...analytics.seats import seat_mask

    return seat_mask(c, model=args.model), {"model": args.model}


def _with_provenance(obj: dict, c, mode) -> Callable[[], dict]:
    """The ``--json`` object: ``obj`` plus the analysis provenance (computed only when printed)."""
    from ...analytics.manifest import analysis_provenance

    return lambda: {**obj, "provenance": analysis_provenance(c, mode)}


def _analyze(args: argparse.Namespace) -> int:
    from ...analytics.report import build_report, format_report

    c, mode = _load(args)
    mask, desc = _seat_filter(args, c)
    rep = build_report(c, mode, transcripts=args.transcripts, seats=mask, seat_filter=desc)
    emit(args, _with_provenance(rep, c, mode), lambda: format_report(rep))
    return 0


def _dynamics(args: argparse.Namespace) -> int:
    from ...analytics.dynamics import dynamics, export_edge_stream

    c, mode = _load(args)
    c = c.probed()  # the games with probe logs
    mask, _ = _seat_filter(args, c)
    out = {"dynamics": dynamics(c, mode, seats=mask)}
    if args.export_graph:
        try:
            out["export"] = export_edge_stream(c, mode, args.export_graph, source_model=args.model)
        except OSError as exc:
            raise CliError(f"cannot write the edge stream to {args.export_graph}: {exc.strerror or exc}") from None
        out["export"]["rows"] = int(out["export"]["rows"])
    emit(args, _with_provenance(out, c, mode), lambda: _dynamics_text(out))
    return 0


def _dynamics_text(out: dict) -> Iterator[str]:
    for grp, v in out["dynamics"].items():
        yield (f"{grp:<10} volatility {v['volatility']['point']} flip {v['flip_rate']['point']} "
               f"(n={v['flip_rate']['n']}) return {v['return_rate']['point']}")
    if "export" in out:
        yield f"edge stream: {out['export']['rows']} rows -> {out['export']['csv']}, {out['export']['parquet']}"


def _episodes(args: argparse.Namespace) -> int:
    from ...analytics.episodes import find_episodes

    c, mode = _load(args)
    c = c.probed()  # the games with probe logs
    e = find_episodes(c, merge_gap=args.merge_gap)
    if args.model:  # candidates in which one of the model's agents switched
        e["candidates"] = [x for x in e["candidates"] if args.model in x["switching_models"]]
    emit(args, _with_provenance(e, c, mode), lambda: _episodes_text(e))
    return 0


def _episodes_text(e: dict) -> Iterator[str]:
    yield f"{e['complete']} complete comparisons of {e['comparisons']}; {e['d_positive']} with D > 0; {len(e['windows'])} windows"
    for x in e["candidates"]:
        yield (f"  {x['game_id']} {x['before']} -> {x['after']} speaker {x['speaker']}: D={x['D_fraction']} K={x['K']} "
               f"switching {', '.join(f'{a} ({m})' for a, m in zip(x['switching'], x['switching_models']))}")


def model_pair(given: list[str]) -> list[str]:
    """The two models of ``--models``: one value ``A,B`` (CSV quoting for a name with a comma:
    ``'"org/m,v2",B'``), or the option twice, each value one name taken as it is."""
    import csv

    if len(given) == 1:
        try:
            names = [x.strip() for x in next(csv.reader([given[0]], skipinitialspace=True), []) if x.strip()]
        except csv.Error as exc:
            raise CliError(f"--models: {exc}") from None
    else:
        names = [x for x in given if x.strip()]
    if len(names) != 2 or names[0] == names[1]:
        raise CliError("--models takes two different model names: --models A,B, or --models A --models B for names "
                       'with a comma (or quote one: --models \'"org/m,v2",B\')')
    return names


def _compare(args: argparse.Namespace) -> int:
    from ...analytics.seats import compare, models_of
    from ...analytics.selection import selection_lines

    if args.layers:
        return _compare_layers(args)
    if not args.models:
        raise CliError("compare needs --models A,B (two models) or --layers A,B (two probe layers of the same games)")
    if args.model:
        raise CliError("compare picks its two models with --models; --games-with-model MODEL restricts the games")
    names = model_pair(args.models)
    c, mode = _load(args)
    known = models_of(c)
    missing = [m for m in names if m not in known]
    left_out = c.selection.get("models_left_out") or {}
    if missing and missing[0] in left_out:
        raise CliError(f"model {missing[0]} is left out by --min-games {args.min_games} (it sat in {left_out[missing[0]]} "
                       "of the selected games)")
    if missing:
        hint = "; for a name with a comma give --models A --models B" if any("," in k for k in known) else ""
        raise CliError(f"model {missing[0]} sat in none of the selected games (models: {', '.join(known)}){hint}")
    res = compare(c, mode, names[0], names[1], role=args.role)
    sel = selection_lines(c.selection, c.m, c.probed().m if c.probed().n_rows("probes") else 0)
    emit(args, _with_provenance(res, c, mode), lambda: _compare_text(res, args.role, sel))
    return 0


def _compare_layers(args: argparse.Namespace) -> int:
    from ...analytics.seats import compare_layers

    if args.models:
        raise CliError("give either --models (two models) or --layers (two probe layers), not both; --model restricts --layers to one model")
    if args.probe_layer:
        raise CliError("--layers names both probe layers; leave out --probe-layer")
    parts = [x.strip() for v in args.layers for x in v.split(",") if x.strip()]
    if len(parts) != 2 or parts[0] == parts[1]:
        raise CliError(f"--layers {','.join(args.layers)!r}: give two different layers, e.g. --layers game,observer")
    la, lb = (_layer(x) for x in parts)
    ca, mode = _load(args, la, use_layer_arg=False)
    cb, _ = _load(args, lb, use_layer_arg=False)
    res = compare_layers(ca, cb, mode, model=args.model, role=args.role)
    if not res["games_shared"]:
        raise CliError(f"layers {parts[0]} and {parts[1]} share no game (ask the games with `mafiascope probes ask --layer NAME`)")
    emit(args, _with_provenance(res, ca, mode), lambda: _compare_text(res, args.role))
    return 0


def _compare_text(res: dict, role: str | None, selection: list[str] | None = None) -> Iterator[str]:
    from ...analytics.comparison_text import design_text, self_play_text
    from ...analytics.metric import FRAGILE_NOTE, Place
    from ...analytics.metrics import better, marked, rows_at
    from ...analytics.pvalues import format_p

    fam = res["p_holm_family"]
    res = {**res, "rows": rows_at(res["rows"], Place.COMPARE)}
    yield (f"{res['a']} vs {res['b']}" + (f" ({role} seats)" if role else "") + f": {res['games_shared']} shared games, "
           f"{res['seats_a']} / {res['seats_b']} seats, B={res['boot']}")
    yield f"  {design_text(res)}"
    yield from (f"  {line}" for line in selection or ())
    holm_head = f"Holm p ({fam['size']})"
    yield f"  {'metric':<36} {'better':<8} {'a':>10} {'b':>10} {'a - b [95% CI]':>28} {'p':>8} {holm_head:>12}"
    for r in res["rows"]:
        if r["diff"] is None:
            continue
        ci = r["diff_ci95"]
        d = f"{r['diff']:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "")
        a, b = (marked(f"{r[k]:.3f}", r.get(f"fragile_{k}")) for k in ("a", "b"))
        yield (f"  {r['label']:<36} {better(r['metric']):<8} {a:>10} {b:>10} {d:>28} {format_p(r['p'], 'n/a'):>8} "
               f"{format_p(r['p_holm'], ''):>12}")
    yield (f"  p: two-sided, from the bootstrap standard error (t, games - 1 df); {holm_head}: Holm-adjusted over "
           f"{fam['text']}")
    if any(r["diff"] is not None and (r.get("fragile_a") or r.get("fragile_b")) for r in res["rows"]):
        yield f"  {FRAGILE_NOTE}"
    if any(r["diff"] is not None and r["p"] is None for r in res["rows"]):
        yield "  n/a: not testable (the difference is the same in every resample, or fewer than two games hold data)"
    skipped = [r["label"] for r in res["rows"] if r["diff"] is None]
    if skipped:
        yield ("  no data for both models: " + ", ".join(skipped))
    note = self_play_text(res)
    if note:
        yield f"  {note}"


def _report(args: argparse.Namespace) -> int:
    from ...analytics.report_dir import build_dir_report, write_report_dir
    from ...logs.paths import staged_output

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"--out {out} is a file, not a directory")
    if out.is_dir() and any(out.iterdir()) and not args.force:
        raise CliError(f"--out {out} is not empty (use --force to write into it)")
    try:  # figures need vl-convert: fail before anything is written
        import vl_convert  # noqa: F401
    except ImportError:
        if not args.no_figures:
            raise CliError("figures need vl-convert-python (pip install vl-convert-python), or pass --no-figures") from None
    c, mode = _load(args)
    mask, desc = _seat_filter(args, c)
    rep = build_dir_report(c, mode, transcripts=args.transcripts, seats=mask, seat_filter=desc)
    try:  # written aside, then moved in: a symlink planted inside --out is replaced, never followed
        with staged_output(out) as stage:
            written = write_report_dir(rep, stage, figures=not args.no_figures)
    except OSError as exc:
        raise CliError(f"cannot write the report to {out}: {exc.strerror or exc}") from None
    emit(args, {"out": str(out), **written}, f"report of {c.m} games -> {out / 'report.md'} ({len(written['tables'])} table "
                                             f"files, {len(written['figures'])} figure files)")
    return 0


def _import(args: argparse.Namespace) -> int:
    from ...analytics.original_format import import_corpus

    src, dest = Path(args.src), Path(args.dest)
    if not src.exists():
        raise CliError(f"{src} does not exist")
    if dest.exists() and any(dest.iterdir()) and not args.force:
        raise CliError(f"{dest} is not empty (use --force to write into it)")
    try:
        s = import_corpus(src, dest)
    except ValueError as exc:  # an unsafe destination or an invalid game directory name, found before writing
        raise CliError(str(exc)) from None
    emit(args, s, f"imported {s['games']} games into {dest}: {s['parsed']}/{s['votes']} vote replies parsed, "
                  f"{s['tally_missed']} valid votes missing from the original tally, {s['disagree']} disagreeing")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("analyze", help="corpus report: F1-F5, dynamics, episodes, audit")
    _add_selection(p)
    add_json_flag(p, "print the report as one JSON object (docs/report_schema.md)")
    p.add_argument("--transcripts", action="store_true", help="also compute F4 transcript baselines (slower)")
    p.set_defaults(func=_analyze)
    p = subparsers.add_parser("compare", help="two models on every metric: difference, cluster-bootstrap CI, p, Holm p")
    _add_selection(p)
    p.add_argument("--layers", action="append", metavar="A,B",
                   help="compare two probe layers of the same games instead of two models (paired by game; 'game' is the "
                        "games' own answers), e.g. --layers game,observer; --model restricts it to one model's seats")
    p.add_argument("--models", action="append", metavar="A,B",
                   help="the two models to compare (as in the setup's model field): A,B, or the option twice "
                        "(--models A --models B) when a name holds a comma")
    p.add_argument("--role", help="compare only seats of this true role (Mafia, Villager, Doctor, Sheriff, Don)")
    add_json_flag(p, 'print {"a", "b", "role", "boot", "seed", "games_a", "games_b", "games_shared", "seats_a", "seats_b", '
                        '"rows", "provenance"}')
    p.set_defaults(func=_compare)
    p = subparsers.add_parser("report", help="report directory: report.md, tables (CSV, LaTeX), figures (SVG, PNG), provenance")
    _add_selection(p)
    p.add_argument("--out", required=True, metavar="DIR", help="directory to write (created; must be empty unless --force)")
    p.add_argument("--force", action="store_true", help="write into a non-empty --out directory")
    p.add_argument("--transcripts", action="store_true", help="also compute F4 transcript baselines (slower)")
    p.add_argument("--no-figures", action="store_true", help="write tables and report.md only (no SVG/PNG)")
    add_json_flag(p, 'print {"out", "tables", "figures", "files"}')
    p.set_defaults(func=_report)
    p = subparsers.add_parser("dynamics", help="belief dynamics; --export-graph writes the edge stream")
    _add_selection(p)
    p.add_argument("--export-graph", metavar="OUT",
                   help="write the belief-edge stream: OUT.csv and OUT.parquet when OUT ends in .csv or .parquet, "
                        "else OUT/belief_edges.csv and OUT/belief_edges.parquet")
    add_json_flag(p, 'print {"dynamics": {group: ...}, "export": {"csv", "parquet", "rows"}}')
    p.set_defaults(func=_dynamics)
    p = subparsers.add_parser("episodes", help="collective suspicion-shift candidates (D, K)")
    _add_selection(p)
    p.add_argument("--merge-gap", type=int, default=2,
                   help="merge candidates at most this many steps apart into one window (default: %(default)s)")
    add_json_flag(p, "print candidates and windows as one JSON object")
    p.set_defaults(func=_episodes)
    p = subparsers.add_parser("import", help="convert original MafiaScope games into our format (lossless)")
    p.add_argument("src", help="an original MafiaScope logs directory (one directory per game)")
    p.add_argument("dest", help="where to write the games in our format (must be empty unless --force)")
    p.add_argument("--force", action="store_true", help="write into a non-empty DEST")
    add_json_flag(p, 'print {"games", "votes", "parsed", "tally_missed", "disagree"}')
    p.set_defaults(func=_import)
