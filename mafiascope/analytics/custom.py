"""Analytics of any probe outside the standard battery (a researcher's custom probe).

Records are read on demand (the columnar cache keeps no answer text): per record the probed
seat, its model and true role, the step, whether the answer parsed, whether it matched the
probe's declared schema (``answer_valid``; None when none was declared), whether an offline
bot gave it, and its fields (``answer_norm`` when the schema normalised them, else the
parsed object's top-level values).

Summaries: parse and validity rates per model (clustered by game), answer distributions of
categorical fields (``player`` fields as the named seat's true role, enums as the option) by
the answering seat's role, model and round, and numeric fields' means by role, model, round;
:func:`numeric_series` gives a numeric field per step and seat for one game.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import numpy as np
import pandas as pd

from ..logs.io import probe_records_at
from ..probes.answer_schema import BOT_FLAG
from ..probes.shapes import STANDARD_PROBES
from .corpus import Cached, Corpus
from .modes import Mode
from .intervals import ci_list, pooled_entry, ratio_ci
from .stats import round_or_none

CUSTOM_RECORDS = Cached("custom_records")
DIRECTION_KEY = "_direction"  # a bot answer's field -> trust | suspect | None: None = not meaningful (docs/bots.md)
TEXT_WORDS = 4  # a string field whose answers average this many words or more is free text
TEXT_VALUES = 20  # ... or one with more distinct answers than this
EXAMPLES = 3  # free-text answers quoted per field


def custom_probe_ids(c: Corpus) -> list[str]:
    """Probe ids of the selection outside the standard battery, sorted."""
    if not c.n_rows("probes"):
        return []
    ids = {str(x) for x in pd.unique(c.cols("probes", ["probe_id"])["probe_id"])}
    return sorted(x for x in ids if x and x not in STANDARD_PROBES)


def custom_records(c: Corpus, probe_id: str) -> pd.DataFrame:
    """One row per record of ``probe_id``: g, seat, round, pms, model, role, parsed, valid, bot, fields (dict),
    pointless (the fields an offline bot marked not meaningful: its ``_direction`` is null for them)."""

    def build() -> pd.DataFrame:
        p = c.cols("probes", ["g", "probe_id", "offset", "seat", "round", "pms"])
        sel = p[(p["probe_id"] == probe_id).to_numpy()]
        rows = []
        models, roles = c.seat_array_obj("model"), c.seat_array_obj("role")
        for g, part in sel.groupby("g", sort=True):
            try:
                found = probe_records_at(c.games["path"].iat[int(g)], [int(x) for x in part["offset"].tolist()])
            except OSError:
                continue
            for off, seat, rnd, pms in zip(part["offset"].tolist(), part["seat"].tolist(), part["round"].tolist(),
                                           part["pms"].tolist()):
                rec = found.get(int(off))
                if rec is None:
                    continue
                parsed = rec.get("answer_parsed")
                norm = rec.get("answer_norm")
                ways = parsed.get(DIRECTION_KEY) if isinstance(parsed, dict) else None
                fields = norm if isinstance(norm, dict) else (parsed if isinstance(parsed, dict) else {})
                s = int(seat)
                rows.append({
                    "g": int(g), "seat": s, "round": int(rnd), "pms": int(pms),
                    "model": str(models[g, s]) if s >= 0 else "", "role": str(roles[g, s]) if s >= 0 else "",
                    "parsed": bool(rec.get("answer_parse_ok")), "valid": rec.get("answer_valid"),
                    "bot": bool(isinstance(parsed, dict) and parsed.get(BOT_FLAG)),
                    "fields": {k: v for k, v in fields.items() if k not in (BOT_FLAG, DIRECTION_KEY)},
                    "pointless": sorted(str(k) for k, v in ways.items() if v is None) if isinstance(ways, dict) else [],
                })
        return pd.DataFrame(rows, columns=["g", "seat", "round", "pms", "model", "role", "parsed", "valid", "bot", "fields",
                                           "pointless"])

    return c.memo(CUSTOM_RECORDS.key(probe_id), build)


def _field_kinds(df: pd.DataFrame) -> dict[str, str]:
    """Field -> numeric | player | players | category (from the values seen)."""
    kinds: dict[str, Counter] = defaultdict(Counter)
    for f in df["fields"]:
        for k, v in f.items():
            if isinstance(v, bool):
                kinds[k]["category"] += 1
            elif isinstance(v, (int, float)):
                kinds[k]["numeric"] += 1
            elif isinstance(v, list):
                kinds[k]["players"] += 1
            elif isinstance(v, str):
                kinds[k]["string"] += 1
    return {k: cnt.most_common(1)[0][0] for k, cnt in kinds.items()}


def _rate_by_model(df: pd.DataFrame, col: str, m: int, mode: Mode) -> dict[str, Any]:
    out = {}
    for mdl, sub in df.groupby("model", sort=True):
        g = sub["g"].to_numpy()
        k = np.bincount(g, weights=sub[col].to_numpy().astype(float), minlength=m)
        n = np.bincount(g, minlength=m).astype(float)
        ci = ratio_ci(k, n, mode)
        out[str(mdl)] = {"k": int(k.sum()), "n": int(n.sum()), "rate": round_or_none(k.sum() / n.sum() if n.sum() else None),
                         "ci95": ci_list(ci)}
    return out


@pooled_entry
def custom_summary(c: Corpus, mode: Mode, probe_id: str) -> dict[str, Any]:
    """Parse/validity accounting and answer distributions of one custom probe (docs/report_schema.md)."""
    df = custom_records(c, probe_id)
    n = len(df)
    declared = bool(n and df["valid"].notna().any())
    valid = df["valid"].fillna(False).astype(bool) if n else pd.Series([], dtype=bool)
    usable = valid if declared else df["parsed"].astype(bool)
    out: dict[str, Any] = {
        "calls": n, "parsed": int(df["parsed"].sum()) if n else 0, "schema_declared": declared,
        "valid": int(valid.sum()) if declared else None, "bot_answers": int(df["bot"].sum()) if n else 0,
        "usable_rate": round_or_none(usable.mean() if n else None),
        "not_meaningful": int(df["pointless"].map(bool).sum()) if n else 0,
    }
    if not n:
        return out
    df = df.assign(usable=usable.to_numpy())
    out["by_model"] = _rate_by_model(df, "usable", c.m, mode)
    ok = df[df["usable"].to_numpy()]
    fields: dict[str, Any] = {}
    roles_of = c.seat_array_obj("role")
    names_of = {g: {nm: i for i, nm in enumerate(c.seat_names(g))} for g in sorted(set(ok["g"].tolist()))}
    for field, kind in _field_kinds(ok).items():
        meant = np.array([field not in p for p in ok["pointless"]], dtype=bool)
        answered = ok[meant]  # a bot's answer to a question pointing nowhere says nothing: left out, counted
        vals = [f.get(field) for f in answered["fields"]]
        entry: dict[str, Any] = {"kind": kind, "not_meaningful": int((~meant).sum())}
        if kind == "numeric":
            x = pd.to_numeric(pd.Series(vals, dtype=object), errors="coerce")
            frame = answered.assign(x=x.to_numpy())
            frame = frame[frame["x"].notna()]
            entry["n"] = len(frame)
            entry["mean"] = round_or_none(frame["x"].mean() if len(frame) else None)
            for by in ("role", "model", "round"):
                entry[f"mean_by_{by}"] = {str(k): round_or_none(v) for k, v in frame.groupby(by, sort=True)["x"].mean().items()}
            entry["n_by_model"] = {str(k): int(v) for k, v in frame.groupby("model", sort=True).size().items()}
        else:
            # a seat name is read as the named seat's true role ("named Mafia"); other strings as given
            if kind == "string" and _free_text(vals):
                entry.update(_text_summary(answered, vals))
                fields[field] = entry
                continue
            labels: list[list[str]] = []
            for g, v in zip(answered["g"].tolist(), vals):
                items = v if isinstance(v, list) else [v]
                seats = names_of[g]
                labels.append([f"named {roles_of[g, seats[it]]}" if it in seats else it for it in items if isinstance(it, str)])
            rows = [(r, mdl, rnd, lab) for r, mdl, rnd, labs in zip(answered["role"], answered["model"], answered["round"], labels)
                    for lab in labs]
            if kind == "string" and all(lab.startswith("named ") for labs in labels for lab in labs):
                entry["kind"] = "player"
            t = pd.DataFrame(rows, columns=["role", "model", "round", "value"])
            entry["n"] = len(t)
            entry["distribution"] = {str(k): int(v) for k, v in t["value"].value_counts().sort_index().items()}
            for by in ("role", "model", "round"):
                entry[f"by_{by}"] = {str(k): {str(a): int(b) for a, b in sub["value"].value_counts().sort_index().items()}
                                     for k, sub in t.groupby(by, sort=True)}
        fields[field] = entry
    out["fields"] = fields
    return _without_models(out, set(c.selection.get("models_left_out") or {}))


def _without_models(obj: Any, left_out: set[str]) -> Any:
    """``obj`` without the per-model entries of models left out for too few games (``--min-games``)."""
    if not left_out or not isinstance(obj, dict):
        return obj
    return {k: ({m: x for m, x in v.items() if m not in left_out} if k in ("by_model", "mean_by_model", "n_by_model")
                and isinstance(v, dict) else _without_models(v, left_out)) for k, v in obj.items()}


def _free_text(vals: list[Any]) -> bool:
    """Whether a string field's answers are free text (sentences), not categories."""
    texts = [v for v in vals if isinstance(v, str)]
    if not texts:
        return False
    words = sum(len(v.split()) for v in texts) / len(texts)
    return words >= TEXT_WORDS or len(set(texts)) > TEXT_VALUES


def _text_summary(answered: pd.DataFrame, vals: list[Any]) -> dict[str, Any]:
    """A free-text field: how many answers, their length in characters (mean, median) overall and per model, and
    the first few distinct answers as examples (in game and step order)."""
    t = pd.DataFrame({"model": answered["model"].to_numpy(), "value": vals})
    t = t[[isinstance(v, str) for v in t["value"]]]
    chars = t["value"].str.len()
    examples = list(dict.fromkeys(v.strip() for v in t["value"] if v.strip()))[:EXAMPLES]
    return {"kind": "text", "n": len(t), "mean_chars": round_or_none(chars.mean() if len(t) else None),
            "median_chars": round_or_none(chars.median() if len(t) else None), "examples": examples,
            "by_model": {str(m): {"n": len(sub), "mean_chars": round_or_none(sub["value"].str.len().mean())}
                         for m, sub in t.groupby("model", sort=True)}}


@pooled_entry
def custom_probes(c: Corpus, mode: Mode) -> dict[str, Any]:
    """``{probe_id: custom_summary}`` for every custom probe of the selection."""
    return {pid: custom_summary(c, mode, pid) for pid in custom_probe_ids(c)}


def numeric_series(c: Corpus, g: int, probe_id: str, field: str) -> pd.DataFrame:
    """One game's numeric field per step and seat: round, pms, seat, name, value (usable answers only)."""
    df = custom_records(c, probe_id)
    df = df[df["g"].to_numpy() == g] if len(df) else df
    names = c.seat_names(g)
    rows = []
    for r, pms, s, f in zip(df["round"], df["pms"], df["seat"], df["fields"]):
        v = f.get(field)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and s >= 0:
            rows.append({"round": int(r), "pms": int(pms), "seat": int(s), "name": names[s], "value": float(v)})
    return pd.DataFrame(rows, columns=["round", "pms", "seat", "name", "value"])
