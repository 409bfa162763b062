"""``mafiascope analyze | dynamics | episodes | import`` (analytics; shapes in docs/cli.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import CliError, print_json


def _add_selection(p: argparse.ArgumentParser) -> None:
    p.add_argument("logs", nargs="+", help="logs directory, game directory or glob (ours or original format)")
    p.add_argument("--corpus", metavar="MANIFEST",
                   help='file of game ids to select: one per line, a JSON list or {"game_ids": [...]}')
    p.add_argument("--language", help="only games in this language (en, ru)")
    p.add_argument("--model", help="only games in which some seat played this model")
    p.add_argument("--rule-set", help="only games of this rule set (classic, sport, ...)")
    p.add_argument("--completed-only", action="store_true", help="only games that reached game_over")
    p.add_argument("--include-forks", action="store_true", help="also count fork branches (left out by default)")
    p.add_argument("--compat", choices=["mafiascope-2026-07"], help="reproduce the original's figures exactly")
    p.add_argument("--boot", type=int, default=1000, help="bootstrap resamples (0 = no CIs; default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: %(default)s)")
    p.add_argument("--cache-dir", help="where parsed games are cached as Parquet, one subdirectory per corpus (default: "
                                       "$MAFIASCOPE_CACHE_DIR, else $XDG_CACHE_HOME/mafiascope or ~/.cache/mafiascope)")
    p.add_argument("--no-cache", action="store_true", help="parse every game afresh and write no cache")


def _load(args: argparse.Namespace):
    from ...analytics.corpus import find_game_dirs, load_corpus
    from ...analytics.modes import Mode

    if args.corpus and not Path(args.corpus).is_file():
        raise CliError(f"manifest {args.corpus} not found")
    if not find_game_dirs(args.logs):
        raise CliError(f"no game directories (with game.jsonl) under {' '.join(args.logs)}")
    if args.boot < 0:
        raise CliError("--boot must be >= 0")
    c = load_corpus(
        args.logs, manifest=args.corpus, language=args.language, model=args.model, rule_set=args.rule_set,
        completed_only=args.completed_only, include_forks=args.include_forks, cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
    )
    if c.m == 0:
        used = [f"{flag} {val}" for flag, val in (("--corpus", args.corpus), ("--language", args.language), ("--model", args.model),
                                                 ("--rule-set", args.rule_set)) if val]  # fmt: skip
        used += ["--completed-only"] if args.completed_only else []
        raise CliError("no games left after selection" + (f" ({', '.join(used)})" if used else ""))
    return c, Mode(compat=args.compat, boot=args.boot, seed=args.seed)


def _analyze(args: argparse.Namespace) -> int:
    from ...analytics.report import build_report, format_report

    c, mode = _load(args)
    rep = build_report(c, mode, transcripts=args.transcripts)
    if args.json:
        print_json(rep)
    else:
        print(format_report(rep))
    return 0


def _dynamics(args: argparse.Namespace) -> int:
    from ...analytics.dynamics import dynamics, export_edge_stream

    c, mode = _load(args)
    out = {"dynamics": dynamics(c, mode)}
    if args.export_graph:
        out["export"] = export_edge_stream(c, mode, args.export_graph)
        out["export"]["rows"] = int(out["export"]["rows"])
    if args.json:
        print_json(out)
    else:
        for grp, v in out["dynamics"].items():
            print(f"{grp:<10} volatility {v['volatility']['point']} flip {v['flip_rate']['point']} "
                  f"(n={v['flip_rate']['n']}) return {v['return_rate']['point']}")
        if "export" in out:
            print(f"edge stream: {out['export']['rows']} rows -> {out['export']['csv']}, {out['export']['parquet']}")
    return 0


def _episodes(args: argparse.Namespace) -> int:
    from ...analytics.episodes import find_episodes

    c, _ = _load(args)
    e = find_episodes(c, merge_gap=args.merge_gap)
    if args.json:
        print_json(e)
    else:
        print(f"{e['complete']} complete comparisons of {e['comparisons']}; {e['d_positive']} with D > 0; {len(e['windows'])} windows")
        for x in e["candidates"]:
            print(f"  {x['game_id'][:8]} {x['before']} -> {x['after']} speaker {x['speaker']}: D={x['D_fraction']} K={x['K']} "
                  f"switching {', '.join(x['switching'])}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from ...analytics.original_format import import_corpus

    src, dest = Path(args.src), Path(args.dest)
    if not src.exists():
        raise CliError(f"{src} does not exist")
    if dest.exists() and any(dest.iterdir()) and not args.force:
        raise CliError(f"{dest} is not empty (use --force to write into it)")
    s = import_corpus(src, dest)
    if args.json:
        print_json(s)
    else:
        print(f"imported {s['games']} games into {dest}: {s['parsed']}/{s['votes']} vote replies parsed, "
              f"{s['tally_missed']} valid votes missing from the original tally, {s['disagree']} disagreeing")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("analyze", help="corpus report: F1-F5, dynamics, episodes, audit")
    _add_selection(p)
    p.add_argument("--json", action="store_true", help="print the report as one JSON object (docs/report_schema.md)")
    p.add_argument("--transcripts", action="store_true", help="also compute F4 transcript baselines (slower)")
    p.set_defaults(func=_analyze)
    p = subparsers.add_parser("dynamics", help="belief dynamics; --export-graph writes the edge stream")
    _add_selection(p)
    p.add_argument("--export-graph", metavar="OUT",
                   help="write the belief-edge stream: OUT.csv and OUT.parquet when OUT ends in .csv or .parquet, "
                        "else OUT/belief_edges.csv and OUT/belief_edges.parquet")
    p.add_argument("--json", action="store_true", help='print {"dynamics": {group: ...}, "export": {"csv", "parquet", "rows"}}')
    p.set_defaults(func=_dynamics)
    p = subparsers.add_parser("episodes", help="collective suspicion-shift candidates (D, K)")
    _add_selection(p)
    p.add_argument("--merge-gap", type=int, default=2,
                   help="merge candidates at most this many steps apart into one window (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print candidates and windows as one JSON object")
    p.set_defaults(func=_episodes)
    p = subparsers.add_parser("import", help="convert original MafiaScope games into our format (lossless)")
    p.add_argument("src", help="an original MafiaScope logs directory (one directory per game)")
    p.add_argument("dest", help="where to write the games in our format (must be empty unless --force)")
    p.add_argument("--force", action="store_true", help="write into a non-empty DEST")
    p.add_argument("--json", action="store_true", help='print {"games", "votes", "parsed", "tally_missed", "disagree"}')
    p.set_defaults(func=_import)
