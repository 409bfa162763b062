"""``mafiascope report``: a corpus report as a directory a paper can cite.

Writes ``report.md`` (readable on its own), ``report.tex`` (a standalone LaTeX document of every
table and figure, :mod:`.latex`), ``report.json`` (the analyze report plus ``comparisons`` and
``provenance``), ``provenance.json``, every table as ``tables/<name>.csv`` and ``tables/<name>.tex``
(:mod:`.report_tex`), and every figure as ``figures/<name>.svg``, ``.png`` and ``.pdf``, rendered
from the same Altair charts the Cross-Game Dashboard draws (:mod:`.figures`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..export_text import md_code, md_inline, write_csv
from . import figures as F
from . import seats as seat_stats
from .comparison_text import design_text, self_play_text
from .corpus import Corpus
from .manifest import SECTIONS as PROVENANCE_SECTIONS, analysis_provenance
from .metric import FRAGILE_NOTE, MIN_VOTES, Place, few_votes
from .metrics import better, labels as metric_labels, marked, metrics_at, rows_at
from .modes import Mode
from .report import build_report
from .report_tex import RENDERERS as TEX, custom_probe as custom_tex
from .model_names import file_slug
from . import latex
from . import report_figures as RF
from .latex import escape_caption
from .pvalues import format_p
from .selection import reason_text, selection_head

def _fmt(v: Any, ci: Any = None, nd: int = 3) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "–"
    s = f"{v:.{nd}f}"
    if ci and ci[0] is not None:
        s += f" [{ci[0]:.{nd}f}, {ci[1]:.{nd}f}]"
    return s


def _md_table(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table (cells and headers through :func:`md_inline`)."""
    if df.empty:
        return "_(no rows)_"
    cols = [str(c) for c in df.columns]

    def cell(x: Any) -> str:
        if x is None or (isinstance(x, float) and x != x):
            return "–"
        if isinstance(x, float):
            x = f"{x:.3f}"
        return md_inline(x)  # names from logs: no HTML, link, image or cell break

    lines = ["| " + " | ".join(md_inline(c) for c in cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(cell(x) for x in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def _wide_metrics(long: pd.DataFrame) -> pd.DataFrame:
    """metric x model table of "value [lo, hi] (n)" cells, a fragile figure marked, with which way is better."""
    if long.empty:
        return pd.DataFrame()
    fragile = long["fragile"] if "fragile" in long else [None] * len(long)
    long = long.assign(cell=[marked(f"{_fmt(v, [lo, hi] if lo is not None and lo == lo else None)} (n={n})", fr)
                             if v is not None and v == v else "–"
                             for v, lo, hi, n, fr in zip(long["value"], long["ci_lo"], long["ci_hi"], long["n"], fragile)])
    wide = long.pivot(index="metric", columns="model", values="cell")
    labels = metric_labels()
    order = [k for k in labels if k in wide.index]
    out = wide.loc[order].reset_index()
    out.insert(0, "measure", [labels[k] for k in out["metric"]])
    out.insert(2, "better", [better(k) for k in out["metric"]])
    return out


def _f4_frame(rep: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for side, v in (rep.get("f4") or {}).items():
        if isinstance(v, dict):
            for measure, r in v.items():
                if isinstance(r, dict) and "rate" in r:
                    ci = r.get("ci95") or [None, None]
                    rows.append({"voters": side, "measure": measure, "k": r["k"], "n": r["n"], "rate": r["rate"],
                                 "ci_lo": ci[0], "ci_hi": ci[1], "chance": r["chance"], "fragile": few_votes(r["n"])})
    return pd.DataFrame(rows, columns=["voters", "measure", "k", "n", "rate", "ci_lo", "ci_hi", "chance", "fragile"])


def _outcome_frame(rep: dict[str, Any]) -> pd.DataFrame:
    o = rep.get("outcome") or {}
    w = o.get("mafia_win_rate_wilson95") or [None, None]
    lr = o.get("game_length_rounds") or {}
    return pd.DataFrame([{"games": o.get("games"), "completed": o.get("completed"), "mafia_wins": o.get("mafia_wins"),
                          "town_wins": o.get("town_wins"), "draws": o.get("draws"), "mafia_win_rate": o.get("mafia_win_rate"),
                          "wilson_lo": w[0], "wilson_hi": w[1], "mean_rounds": lr.get("mean")}])


def build_dir_report(c: Corpus, mode: Mode, *, transcripts: bool = False, seats: Any = None,
                     seat_filter: dict[str, Any] | None = None) -> dict[str, Any]:
    """The analyze report (``seats``: as :func:`build_report`'s) plus every pairwise model comparison and provenance."""
    rep = build_report(c, mode, transcripts=transcripts, seats=seats, seat_filter=seat_filter)
    rep["comparisons"] = seat_stats.compare_all(c, mode)
    rep["provenance"] = analysis_provenance(c, mode)
    return rep


def write_report_dir(rep: dict[str, Any], out: Path, *, figures: bool = True) -> dict[str, list[str]]:
    """Write the report directory from :func:`build_dir_report`'s dict; returns the written files by kind."""
    tables_dir, fig_dir = out / "tables", out / "figures"
    tables_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, list[str]] = {"tables": [], "figures": [], "files": []}
    by_model = rep.get("by_model") or {}
    has_probes = rep.get("probe_logs", True)
    bins, calib = F.calibration_frames(by_model) if has_probes else (pd.DataFrame(), pd.DataFrame())
    tables: dict[str, pd.DataFrame] = {
        "outcome": _outcome_frame(rep),
        "by_model": F.metrics_frame({m: {**e, "metrics": metrics_at(e.get("metrics") or {}, Place.REPORT_DIR)}
                                     for m, e in by_model.items()}),
        "by_model_role": F.model_role_frame({m: {r: {**e, "metrics": metrics_at(e.get("metrics") or {}, Place.REPORT_DIR)}
                                                 for r, e in roles.items()} for m, roles in (rep.get("by_model_role") or {}).items()}),
        "comparisons": F.comparison_frame(_compared(rep)),
        "f4": _f4_frame(rep),
    }
    if has_probes:
        tables.update({"f1_by_round_per_model": F.f1_frame(by_model), "calibration_per_model": calib,
                       "calibration_bins_per_model": bins, "dynamics": F.dynamics_frame(rep)})
    custom = {f"custom_{file_slug(pid)}": pid for pid in rep.get("custom_probes") or {}}
    tables.update({name: F.custom_frame(rep["custom_probes"][pid]) for name, pid in custom.items()})
    for name, df in tables.items():
        write_csv(df, tables_dir / f"{name}.csv")
        tex = custom_tex(df, rep, name, custom[name]) if name in custom else TEX[name](df, rep)
        (tables_dir / f"{name}.tex").write_text(tex, encoding="utf-8")
        written["tables"] += [f"tables/{name}.csv", f"tables/{name}.tex"]
    charts = _figures(rep, tables) if figures else {}
    if charts:
        fig_dir.mkdir(exist_ok=True)
    for name, fig in charts.items():
        written["figures"] += [str(p.relative_to(out)) for p in F.save_chart(fig.chart, fig_dir / name)]
    (out / "report.tex").write_text(_document(rep, tables, charts), encoding="utf-8")
    (out / "report.json").write_text(json.dumps(rep, ensure_ascii=False, indent=1, default=str), encoding="utf-8")
    (out / "provenance.json").write_text(json.dumps(rep.get("provenance"), ensure_ascii=False, indent=1, default=str),
                                         encoding="utf-8")
    (out / "report.md").write_text(render_markdown(rep, tables, charts), encoding="utf-8")
    written["files"] = ["report.md", "report.tex", "report.json", "provenance.json"]
    return written


@dataclass(frozen=True)
class ReportFigure:
    """A figure of the report directory: its chart, its caption (report.tex) and whether it spans the page."""

    chart: Any
    caption: str
    wide: bool = True


def _figures(rep: dict[str, Any], tables: dict[str, pd.DataFrame]) -> dict[str, ReportFigure]:
    """Every figure of the report, by file name (without suffix): per model, sized for one column (3.5 in)
    or two (7 in), type for print (:mod:`.report_figures`)."""
    by_model = rep.get("by_model") or {}
    has_probes = rep.get("probe_logs", True)
    out: dict[str, ReportFigure] = {}
    boot = f"95% game-level cluster-bootstrap intervals (B = {rep.get('boot')})" if rep.get("boot") else "no intervals (B = 0)"
    models = max(1, len(by_model))

    def add(name: str, chart: Any, caption: str, wide: bool) -> None:
        if chart is not None:
            out[name] = ReportFigure(RF.paper_style(chart, RF.PAGE_PT if wide else RF.COLUMN_PT), caption, wide)

    if has_probes and not tables["f1_by_round_per_model"].empty:
        add("f1_by_round_per_model", F.f1_per_model_chart(tables["f1_by_round_per_model"], by_model).properties(
            width=RF.COLUMN_PT - 60, height=170).properties(title="Committed accuracy per round"),
            f"F1 committed first-order accuracy per round and model, {boot}; dashed: the permutation chance baseline.",
            wide=False)
    if has_probes and not tables["calibration_bins_per_model"].empty:
        cols = min(3, models)
        add("calibration_per_model", F.calibration_per_model_chart(
            tables["calibration_bins_per_model"], by_model, width=int((RF.PAGE_PT - 50 * cols) / cols)),
            "F2 calibration per model: accuracy per stated-confidence bin against the bin's mean stated confidence, "
            "with its 95% Wilson interval (guesses as independent) and the bin's n; dashed: perfect calibration; "
            "faded: n < 10.", wide=True)
    if has_probes:
        add("belief_dynamics_per_model", RF.dynamics_per_model(rep),
            f"Belief dynamics per model, every agent of the model and each true role, {boot}.", wide=True)
    add("outcomes_per_model", RF.outcomes_per_model(rep), f"Outcomes per model by side or true role, {boot}.", wide=False)
    add("f4_per_model", RF.f4_per_model(rep), f"F4 belief-vote coupling per model, {boot}.", wide=False)
    for pid, cp in (rep.get("custom_probes") or {}).items():
        add(f"custom_{file_slug(pid)}_per_model", RF.custom_per_model(pid, F.custom_frame(cp)),
            f"Custom probe {pid} per model: each answer field's shares (categorical) or mean (numeric); answers an "
            "offline bot marked not meaningful are left out.", wide=True)
    for cmp in _compared(rep):
        df = F.comparison_frame([cmp])
        if df["diff"].notna().any():
            add(f"compare_{file_slug(cmp['a'])}_vs_{file_slug(cmp['b'])}",
                F.comparison_chart(df, cmp["a"], cmp["b"], width=RF.PAGE_PT - 250),
                f"{cmp['a']} minus {cmp['b']} per metric with its 95% cluster-bootstrap interval (both models pooled "
                "under the same resampled games); each label says which way is better, the colour which model the "
                "difference favours; filled: Holm-adjusted p < 0.05 over the pair's metrics.", wide=True)
    return out


TEX_SECTIONS = {"outcome": "Outcomes", "by_model": "Per model", "by_model_role": "Per model and role",
                "f1_by_round_per_model": "F1 first-order accuracy", "calibration_per_model": "F2 calibration",
                "calibration_bins_per_model": "F2 calibration", "dynamics": "Belief dynamics",
                "f4": "F4 belief-vote coupling", "comparisons": "Model comparisons"}
CUSTOM_SECTION = "Custom probes"


def _document(rep: dict[str, Any], tables: dict[str, pd.DataFrame], charts: dict[str, ReportFigure]) -> str:
    """report.tex: every table and figure of the directory in one pdflatex document."""
    prov = rep.get("provenance") or {}
    summary = escape_caption(
        f"{rep['n_games']} games, analysis mode {rep['mode']}, game-level cluster bootstrap B = {rep['boot']} (seed "
        f"{rep['seed']}); mafiascope {prov.get('mafiascope_version')}, commit {prov.get('git_commit') or 'n/a'}. "
        "Every per-model figure is attributed to the seat a row belongs to; intervals resample whole games. Game files, "
        "their sha256 and the selection: provenance.json and report.md.")
    order = [n for n in TEX_SECTIONS if n in tables] + [n for n in tables if n not in TEX_SECTIONS]
    return latex.document("mafiascope corpus report", summary,
                          [(TEX_SECTIONS.get(n, CUSTOM_SECTION), f"tables/{n}.tex") for n in order],
                          [latex.Figure(f"figures/{n}", f.caption, f.wide) for n, f in charts.items()])


def _comparisons_md(cmps: list[dict[str, Any]], charts: dict[str, Any]) -> list[str]:
    """report.md's model comparisons: one table per pair, each adjusted p beside its Holm family."""
    if not cmps:
        return []
    L: list[str] = []
    fam_all = cmps[0].get("p_holm_all_family") or {}
    L += ["", "## Model comparisons", "",
          "Difference a − b with its 95% cluster-bootstrap interval (both models' statistics pooled under the same "
          "resampled games, so games where both sat are paired) and a two-sided p from the bootstrap standard error "
          "(t with games − 1 degrees of freedom; docs/metrics.md §16). Two Holm adjustments, each column naming its "
          f"family: over the metrics of the pair, and over {md_inline(fam_all.get('text', 'every test of every pair'))}."]
    all_head = f"Holm p (all {fam_all.get('size', '?')} tests)"
    for cmp in cmps:
        df = F.comparison_frame([cmp])
        df = df[df["diff"].notna()]
        fam = cmp.get("p_holm_family") or {}
        note = self_play_text(cmp)
        L += ["", f"### {md_inline(cmp['a'])} vs {md_inline(cmp['b'])}", "",
              f"{cmp['games_shared']} shared games; {cmp['seats_a']} and {cmp['seats_b']} seats; "
              f"{md_inline(design_text(cmp))}. " + (f"The {md_inline(note)}. " if note else "")
              + f"Holm family of this pair: {md_inline(fam.get('text', 'its metrics with a p'))}. {FRAGILE_NOTE}.", ""]
        if df.empty:
            L.append("_No metric with data for both models._")
            continue
        rows = {r["metric"]: r for r in cmp["rows"]}
        side = {k: [marked(_fmt(v), rows.get(m, {}).get(f"fragile_{k}")) for v, m in zip(df[k], df["metric"])]
                for k in ("a", "b")}
        show = pd.DataFrame({"metric": df["label"], "better": [better(m) for m in df["metric"]], "a": side["a"], "b": side["b"],
                             "a − b [95% CI]": [_fmt(d, [lo, hi]) for d, lo, hi in zip(df["diff"], df["diff_lo"], df["diff_hi"])],
                             "p": [format_p(x, "n/a") for x in df["p"]],
                             f"Holm p ({fam.get('size', '?')} metrics)": [format_p(x) for x in df["p_holm"]],
                             all_head: [format_p(x) for x in df["p_holm_all"]]})
        L.append(_md_table(show))
        if df["p"].isna().any():
            L += ["", "n/a: not testable (the difference is the same in every resample, or fewer than two games hold data)."]
        name = f"compare_{file_slug(cmp['a'])}_vs_{file_slug(cmp['b'])}"
        if name in charts:
            L += ["", f"![{name}](figures/{name}.svg)"]
    return L


def _compared(rep: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's comparisons with the rows of the statistics ``compare`` shows."""
    return [{**cmp, "rows": rows_at(cmp["rows"], Place.COMPARE)} for cmp in rep.get("comparisons") or []]


def _counts_table(by: dict[str, dict[str, int]], head: str) -> str:
    """Answer counts per group (model or role) as integers, answers as columns."""
    df = pd.DataFrame([{head: k, **cnt} for k, cnt in by.items()])
    return _md_table(df.fillna(0).astype({c: int for c in df.columns if c != head}))


def _custom_fields_md(cp: dict[str, Any]) -> list[str]:
    """A custom probe's fields in report.md: numeric means and answer counts by model and by role (counts as
    integers), free text as its length and a few examples."""
    L: list[str] = []
    for field, e in (cp.get("fields") or {}).items():
        skipped = f" ({e['not_meaningful']} not meaningful left out)" if e.get("not_meaningful") else ""
        if e["kind"] == "numeric":
            L += ["", f"{md_code(field)} mean by model{skipped}:", "", _md_table(pd.DataFrame(
                [{"model": k, "n": (e.get("n_by_model") or {}).get(k), "mean": v} for k, v in e["mean_by_model"].items()]))]
            L += ["", f"{md_code(field)} mean by role:", "", _md_table(pd.DataFrame(
                [{"role": k, "mean": v} for k, v in e["mean_by_role"].items()]))]
        elif e["kind"] == "text":
            L += ["", f"{md_code(field)}: free text, {e['n']} answers{skipped}, {_fmt(e.get('mean_chars'), nd=1)} characters "
                      f"on average (median {_fmt(e.get('median_chars'), nd=1)}). Examples:", ""]
            L += [f"> {md_inline(x)}" + ("  " if i < len(e["examples"]) - 1 else "") for i, x in enumerate(e.get("examples") or [])]
            L += ["", _md_table(pd.DataFrame([{"model": k, "answers": x["n"], "mean characters": x["mean_chars"]}
                                              for k, x in (e.get("by_model") or {}).items()]))]
        elif "by_role" in e:
            L += ["", f"{md_code(field)} answers by model{skipped}:", "", _counts_table(e["by_model"], "model")]
            L += ["", f"{md_code(field)} answers by the answering seat's role:", "", _counts_table(e["by_role"], "role")]
    return L


SELECTION_LISTS = {"doubled_games": "written by two writers (excluded)", "unparseable_games": "without a setup record"}


def _selection_md(rep: dict[str, Any]) -> list[str]:
    """report.md's selection: games found, analysed (with and without probe logs), left out per reason, the games
    listed apart (duplicates, doubled, unparseable: whatever lists ``audit.selection`` holds), models left out,
    the filters in use."""
    sel = (rep.get("audit") or {}).get("selection") or {}
    if not sel:
        return []
    L = ["", "## Selection", "", selection_head(sel, int(rep.get("n_games") or 0), rep.get("n_games_probed"))]
    excluded = {k: v for k, v in (sel.get("excluded") or {}).items() if v}
    L += ["", "Left out: none."] if not excluded else ["", "| left out | games |", "|---|---|"]
    L += [f"| {md_inline(reason_text(k))} | {v} |" for k, v in excluded.items()]
    for key, items in sel.items():
        if isinstance(items, list) and items and key not in ("sources",):
            ids = [str(x.get("game_id", x)) if isinstance(x, dict) else str(x) for x in items]
            L += ["", f"{md_inline(key.replace('_', ' '))} ({SELECTION_LISTS.get(key, 'listed in report.json')}): {len(ids)}: "
                      + ", ".join(md_code(x) for x in ids[:5]) + (" ..." if len(ids) > 5 else "")]
    left = sel.get("models_left_out") or {}
    if left:
        L += ["", f"Models left out for fewer than {(sel.get('filters') or {}).get('min_games')} games: "
                  + ", ".join(f"{md_inline(m)} ({k})" for m, k in left.items()) + "."]
    used = {k: v for k, v in (sel.get("filters") or {}).items() if v not in (None, False, {}, [])}
    if used:
        L += ["", "Filters: " + "; ".join(f"{md_inline(k)} = {md_inline(v)}" for k, v in used.items()) + "."]
    return L


def _provenance_md(prov: dict[str, Any]) -> list[str]:
    """report.md's provenance: every declared section (:data:`.manifest.SECTIONS`) the provenance holds."""
    L: list[str] = []
    for sec in PROVENANCE_SECTIONS:
        if prov.get(sec.key):
            L += ["", f"### {sec.title}", "", *sec.markdown(prov[sec.key])]
    return (["", "## Provenance", "", f"mafiascope {md_inline(prov.get('mafiascope_version'))}, commit "
             f"`{prov.get('git_commit') or 'n/a'}`; game files with their sha256 in `provenance.json`."] + L) if L else []


def render_markdown(rep: dict[str, Any], tables: dict[str, pd.DataFrame], charts: dict[str, Any]) -> str:
    prov = rep.get("provenance") or {}
    L = ["# mafiascope corpus report", ""]
    L.append(f"{rep['n_games']} games, analysis mode `{rep['mode']}`, game-level cluster bootstrap B = {rep['boot']} "
             f"(seed {rep['seed']}). mafiascope {prov.get('mafiascope_version')}, commit `{prov.get('git_commit') or 'n/a'}`, "
             f"Python {prov.get('python')}. Game files and their sha256 are listed in `provenance.json`.")
    L.append("")
    L.append("Every per-model figure is attributed to the seat a row belongs to (the observer for F1/F2, the predictor for "
             "F3, the voter for F4 and votes, the agent for dynamics and episode switching, the probed seat for parsing, "
             "the planner for plans). Intervals resample whole games, since seats of one game are not independent.")
    L += _selection_md(rep)
    L += _provenance_md(prov)
    if rep.get("probe_logs") is False:
        L += ["", "**No probe logs in these games**: outcomes, votes and transcript baselines only; F1-F3, dynamics, "
                  "episodes, personality and plans are absent."]
    L += ["", "## Outcomes", "", _md_table(tables["outcome"])]
    v = rep.get("votes") or {}
    if v:
        L += ["", f"Counted tally votes: {v['votes']}; town votes on a Mafia seat: {v['town_on_mafia']} of {v['town_votes']}."]
    p = rep.get("parse") or {}
    if p.get("calls"):
        L += ["", f"Probe calls {p['calls']}, parsed {p['parsed']} ({_fmt(p.get('parse_rate'))})."]
    if not tables["by_model"].empty:
        L += ["", "## Per model", "", "Value [95% CI] (n) per metric and model; better: which way is better (neither: "
              f"descriptive). {FRAGILE_NOTE}.", "", _md_table(_wide_metrics(tables["by_model"]))]
    for name, title in (("f1_by_round_per_model", "F1 first-order accuracy per round"),
                        ("calibration_per_model", "F2 calibration per model"), ("dynamics", "Belief dynamics")):
        if name in tables and not tables[name].empty:
            L += ["", f"## {title}", "", _md_table(tables[name])]
    fig_for = {"f1_by_round_per_model": "f1_by_round_per_model", "calibration_per_model": "calibration_per_model",
               "dynamics": "belief_dynamics_per_model", "outcome": "outcomes_per_model", "f4": "f4_per_model"}
    for t, fig in fig_for.items():
        if fig in charts:
            L += ["", f"![{fig}](figures/{fig}.svg)"]
    if not tables["f4"].empty:
        L += ["", "## F4 belief-vote coupling", "", f"fragile: fewer than {MIN_VOTES} counted votes (docs/metrics.md §7).",
              "", _md_table(tables["f4"])]
    for pid, cp in (rep.get("custom_probes") or {}).items():
        L += ["", f"## Custom probe {md_code(pid)}", "",
              f"{cp['calls']} calls, {cp['parsed']} parsed, "
              + (f"{cp['valid']} valid against the declared schema" if cp["schema_declared"] else "no declared schema")
              + f", {cp['bot_answers']} answered by offline bots; usable rate {_fmt(cp['usable_rate'])} (kept out of the "
              "headline parse rate)."]
        if cp.get("not_meaningful"):
            L += ["", f"{cp['not_meaningful']} bot answers were marked not meaningful (the question points neither at "
                      "suspects nor at trusted players; docs/bots.md): those fields of them are left out below and "
                      "counted per field."]
        L += _custom_fields_md(cp)
        fig = f"custom_{file_slug(pid)}_per_model"
        if fig in charts:
            L += ["", f"![{fig}](figures/{fig}.svg)"]
    L += _comparisons_md(_compared(rep), charts)
    absent = [k for k, x in rep.items() if isinstance(x, dict) and "absent" in x]
    if absent:
        L += ["", "Absent sections (no probe logs): " + ", ".join(absent) + "."]
    L += ["", "## Files", "", "Tables: `tables/*.csv` and `tables/*.tex` (booktabs, xltabular; every table and figure in "
          "`report.tex`, which compiles with pdflatex). Figures: `figures/*.svg`, `*.png` and `*.pdf`. "
          "Full numbers: `report.json` (docs/report_schema.md).", ""]
    return "\n".join(L)
