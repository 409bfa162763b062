"""The report directory's tables as LaTeX (:mod:`.latex`): which columns each table shows and what its
caption says n and the interval are. Per-model tables are long (a row per model and metric, grouped),
so they fit the text width whatever the number of models; comparisons are one compact table grouped
by pair. Directions (better when higher or lower) come from the metric registry."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..export_text import tex_inline
from .latex import Col, Group, number, table
from .metric import MIN_GAMES, Direction, Statistic
from .metrics import statistics

ARROWS = {Direction.HIGHER: r"~$\uparrow$", Direction.LOWER: r"~$\downarrow$", Direction.NEUTRAL: ""}
DYN_LABELS = {"volatility": "suspicion volatility (mean L1 shift, 0-2)", "flip_rate": "top-suspect flip rate",
              "return_rate": "return rate"}
ARROW_NOTE = r"$\uparrow$: higher is better; $\downarrow$: lower is better; unmarked: descriptive."
FRAGILE_TEX = (r" $^\dagger$: fragile, fewer units than the metric's minimum n or fewer than "
               f"{MIN_GAMES} games holding its data.")


def _registered() -> dict[str, Statistic]:
    return {st.key: st for _, st in statistics()}


def _order(keys: pd.Series) -> pd.Series:
    order = {k: i for i, k in enumerate(_registered())}
    return keys.map(lambda k: order.get(k, len(order)))


def metric_head(key: str, label: str | None = None) -> str:
    """A metric's label as LaTeX with its direction arrow (registry)."""
    st = _registered().get(key)
    text = tex_inline(label or (st.label if st else key))
    return text + (ARROWS[st.direction] if st else "")


def _value(row: dict[str, Any], key: str = "value") -> str:
    st = _registered().get(row.get("metric", ""))
    fragile = row.get("fragile")
    mark = r"$^\dagger$" if isinstance(fragile, str) and fragile else ""  # (a fragile per-model figure)
    return number(row.get(key), st.format.decimals if st else 3) + mark


def bootstrap_text(rep: dict[str, Any]) -> str:
    boot = rep.get("boot") or 0
    if not boot:
        return "No intervals (bootstrap off, B = 0)."
    return (f"95% CI: percentile interval of a game-level cluster bootstrap (B = {boot} resamples of whole games, "
            f"seed {rep.get('seed')}).")


N_TEXT = ("n: the units pooled into the value, its denominator (counted votes, committed guesses, probe records, "
          "seats, ... as docs/metrics.md defines each metric).")


def by_model(df: pd.DataFrame, rep: dict[str, Any]) -> str:
    df = df.assign(_o=_order(df["metric"])).sort_values(["_o", "model"], kind="stable")
    cols = [Col("model", "Model", "text"), Col("value", "Value", cell=_value),
            Col("ci_lo", "95% CI", "ci", hi="ci_hi"), Col("n", "n", "int"), Col("games", "Games", "int")]
    return table(df, cols, name="by_model", group=Group(("metric",), lambda r: r"\textbf{" + metric_head(r["metric"]) + "}"),
                 caption=f"Every metric per model, attributed to the seat each row belongs to. {bootstrap_text(rep)} "
                         f"{N_TEXT} Games: games in which the model sat.", caption_tex=ARROW_NOTE + FRAGILE_TEX)


def by_model_role(df: pd.DataFrame, rep: dict[str, Any]) -> str:
    df = df.assign(_o=_order(df["metric"])).sort_values(["model", "role", "_o"], kind="stable")
    cols = [Col("metric", "Measure", "text", cell=lambda r: metric_head(r["metric"])), Col("value", "Value", cell=_value),
            Col("ci_lo", "95% CI", "ci", hi="ci_hi"), Col("n", "n", "int")]

    def head(r: dict[str, Any]) -> str:
        return rf"\textbf{{{tex_inline(r['model'])}}}, {tex_inline(r['role'])} ({r['seats']} seats)"

    return table(df, cols, name="by_model_role", group=Group(("model", "role"), head),
                 caption=f"Every metric per model and true role (seats of that role only). {bootstrap_text(rep)} {N_TEXT}",
                 caption_tex=ARROW_NOTE + FRAGILE_TEX)


def comparisons(df: pd.DataFrame, rep: dict[str, Any]) -> str:
    df = df[df["diff"].notna()]
    shared = {(c["a"], c["b"]): c.get("games_shared") for c in rep.get("comparisons") or []}
    cols = [Col("label", "Metric", "text", cell=lambda r: metric_head(r["metric"], r["label"])),
            Col("a", "A", cell=lambda r: _value(r, "a")), Col("b", "B", cell=lambda r: _value(r, "b")),
            Col("diff", "A − B", cell=lambda r: _value(r, "diff")), Col("diff_lo", "95% CI", "ci", hi="diff_hi"),
            Col("p_holm", "Holm p", "p")]

    def head(r: dict[str, Any]) -> str:
        fam = r.get("holm_family_size")
        games = shared.get((r["model_a"], r["model_b"]))
        return (rf"\textbf{{A}} = {tex_inline(r['model_a'])}, \textbf{{B}} = {tex_inline(r['model_b'])}"
                + (f"; {games} shared games" if games is not None else "")
                + (f"; Holm family: {int(fam)} metrics" if fam == fam and fam is not None else ""))

    all_size = df["holm_all_family_size"].dropna()
    all_text = f" (family of {int(all_size.iloc[0])} tests)" if len(all_size) else ""
    return table(df, cols, name="comparisons", group=Group(("model_a", "model_b"), head),
                 caption=f"Pairwise model comparisons: A − B per metric with its 95% CI (both models' statistics pooled "
                         f"under the same resampled games; {bootstrap_text(rep)}). Holm p: the two-sided p from the "
                         "bootstrap standard error, Holm-adjusted over the pair's metrics with a p (the family in each "
                         "pair's header). The unadjusted p and the Holm adjustment over every test of every pair"
                         f"{all_text} are in comparisons.csv.", caption_tex=ARROW_NOTE)


def outcome(df: pd.DataFrame, rep: dict[str, Any]) -> str:
    cols = [Col("games", "Games", "int"), Col("completed", "Completed", "int"), Col("mafia_wins", "Mafia wins", "int"),
            Col("town_wins", "Town wins", "int"), Col("draws", "Draws", "int"), Col("mafia_win_rate", "Mafia win rate"),
            Col("wilson_lo", "95% Wilson", "ci", hi="wilson_hi"), Col("mean_rounds", "Mean rounds", decimals=2)]
    return table(df, cols, name="outcome", caption="Game outcomes of the selected games. Mafia win rate: share of "
                 "completed games the Mafia won, with its 95% Wilson score interval (n = completed games).")


def f1_by_round(df: pd.DataFrame, rep: dict[str, Any]) -> str:
    cols = [Col("round", "Round", "int"), Col("accuracy", "Accuracy"), Col("ci_lo", "95% CI", "ci", hi="ci_hi"),
            Col("n", "n", "int"), Col("chance", "Chance"), Col("mafia_recall", "Mafia recall"),
            Col("unknown_rate", "Unknown")]
    return table(df, cols, name="f1_by_round_per_model", group=Group(("model",), lambda r: rf"\textbf{{{tex_inline(r['model'])}}}"),
                 caption="F1 committed first-order accuracy per round and model (observers of that model). n: committed "
                         f"guesses; chance: the permutation baseline. {bootstrap_text(rep)}")


def calibration(df: pd.DataFrame, rep: dict[str, Any]) -> str:
    cols = [Col("model", "Model", "text"), Col("games", "Games", "int"), Col("guesses", "n", "int"), Col("ECE", "ECE"),
            Col("ECE_lo", "95% CI", "ci", hi="ECE_hi"), Col("Brier", "Brier"), Col("Brier_lo", "95% CI", "ci", hi="Brier_hi")]
    return table(df, cols, name="calibration_per_model", caption="F2 calibration per model: expected calibration error "
                 f"and Brier score of committed guesses (n: guesses with a stated confidence). {bootstrap_text(rep)}")


def calibration_bins(df: pd.DataFrame, rep: dict[str, Any]) -> str:
    cols = [Col("bin", "Confidence bin (%)", "label"), Col("n", "n", "int"), Col("accuracy", "Accuracy"),
            Col("wilson_lo", "95% Wilson", "ci", hi="wilson_hi"), Col("mean_conf", "Mean confidence (%)", decimals=1)]
    return table(df, cols, name="calibration_bins_per_model",
                 group=Group(("model",), lambda r: rf"\textbf{{{tex_inline(r['model'])}}}"),
                 caption="F2 accuracy per stated-confidence bin and model. n: guesses in the bin; 95% Wilson score "
                         "interval of the bin's accuracy (guesses treated as independent).")


def dynamics(df: pd.DataFrame, rep: dict[str, Any]) -> str:
    cols = [Col("measure", "Measure", "text", cell=lambda r: tex_inline(DYN_LABELS.get(r["measure"], r["measure"]))),
            Col("value", "Value"), Col("ci_lo", "95% CI", "ci", hi="ci_hi"), Col("n", "n", "int")]
    return table(df, cols, name="dynamics", group=Group(("group",), lambda r: rf"\textbf{{{tex_inline(r['group'])}}}"),
                 caption="Belief dynamics per group of agents, all models pooled. n: consecutive assessment pairs "
                         f"(volatility, flips) or flips (return rate). {bootstrap_text(rep)}",
                 caption_tex=r"Per model: Table~\ref{tab:by_model}.")


def f4(df: pd.DataFrame, rep: dict[str, Any]) -> str:
    cols = [Col("measure", "Measure", "text"), Col("k", "Hits", "int"), Col("n", "n", "int"), Col("rate", "Rate"),
            Col("ci_lo", "95% CI", "ci", hi="ci_hi"), Col("chance", "Chance")]
    return table(df, cols, name="f4", group=Group(("voters",), lambda r: rf"\textbf{{{tex_inline(r['voters'])} voters}}"),
                 caption="F4 belief-vote coupling per voter group, all models pooled. n: counted votes with that "
                         f"prediction; chance: a uniform pick among the candidates. {bootstrap_text(rep)}",
                 caption_tex=r"Per model: Table~\ref{tab:by_model}.")


RENDERERS = {"outcome": outcome, "by_model": by_model, "by_model_role": by_model_role, "comparisons": comparisons,
             "f1_by_round_per_model": f1_by_round, "calibration_per_model": calibration,
             "calibration_bins_per_model": calibration_bins, "dynamics": dynamics, "f4": f4}


def custom_probe(df: pd.DataFrame, rep: dict[str, Any], name: str, probe_id: str) -> str:
    """A custom probe's fields per model (:func:`.figures.custom_frame`)."""
    cp = (rep.get("custom_probes") or {}).get(probe_id) or {}
    cols = [Col("model", "Model", "text"), Col("answer", "Answer", "text"), Col("count", "Count", "int"),
            Col("share", "Share"), Col("n", "n", "int"), Col("mean", "Mean"), Col("mean_chars", "Mean characters", decimals=1)]

    def head(r: dict[str, Any]) -> str:
        kind = {"numeric": "mean", "text": "free text: length", "player": "named seat's true role"}.get(r["kind"], "answers")
        return rf"\textbf{{{tex_inline(r['field'])}}} ({kind})"

    skipped = cp.get("not_meaningful") or 0
    note = (f" {skipped} offline-bot answers marked not meaningful (the question points nowhere) are left out."
            if skipped else "")
    return table(df, cols, name=name, group=Group(("field",), head),
                 caption=f"Custom probe {probe_id}: each answer field per model. n: the model's answers to the field; "
                         f"share: of those answers; mean: of a numeric field; mean characters: of a free-text answer."
                         f"{note}")
