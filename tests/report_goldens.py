"""Golden outputs of the analytics on the bundled corpora: what `mafiascope analyze --json`, `compare`,
`episodes`, `dynamics --export-graph` and `report` print, per corpus and analysis mode.

The fixtures in ``tests/golden/reports/`` hold the values as they were when written; the tests in
``tests/test_report_golden.py`` recompute them and compare. Compat figures must be equal exactly;
default figures to the printed precision (a float may move by one unit of its sixth decimal when a
sum is taken in another order). The text report and the report directory's files are rendered from
the fixture's own report, so they pin the rendering whatever the computation gives.

A fixture lists the seat-level statistics registered when it was written (``statistics``). A statistic
registered since (a new metric) is left out of the comparison, and so are the Holm-adjusted p-values,
whose family it changed; rewriting the fixtures pins them. To accept a deliberate change of the
figures, regenerate them and read the diff:

    UPDATE_GOLDEN=1 python -m pytest tests/test_report_golden.py -k outputs
    python -m tests.report_goldens demo       # or one corpus (both modes)

A change of the rendering alone (report.md, the CSV files, the text report) rewrites only the rendered
entries, from each fixture's own values: ``python -m tests.report_goldens --renderings``.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "golden" / "reports"
# name -> corpus directories (relative to the checkout): data/arena holds games without probe logs; "mixed" and
# "versions" read several roots at once (their tables are not in game order: the general paths); "damaged" is
# demo games damaged the ways the loader tolerates (tests/loader_digest.py: torn, corrupt and unknown lines, a
# doubled setup, a game without setup, one without probe log), made afresh in the cache directory; "probed_plain"
# is a probed one-model corpus beside the transcript-only arena games of other models (two corpora compared)
CORPORA: dict[str, tuple[str, ...]] = {
    "demo": ("data/demo",),
    "en_demo": ("data/corpus/mafiascope_en_demo",),
    "ru_legacy": ("data/corpus/mafiascope_ru_legacy",),
    "arena": ("data/arena",),
    "mixed": ("data/demo", "data/corpus/mafiascope_en_demo"),
    "versions": ("tests/fixtures/logs/v1", "tests/fixtures/logs/v2", "tests/fixtures/logs/v3"),
    "damaged": ("<damaged>",),
    "probed_plain": ("data/corpus/mafiascope_en_demo", "data/arena"),  # probed games beside transcript-only ones
}
# every output; the others: the report, --model, episodes, edges
BUNDLED = ("demo", "en_demo", "ru_legacy", "arena", "probed_plain")
MODES = ("default", "mafiascope-2026-07")
FLOAT_TOL = {"default": 1e-6, "mafiascope-2026-07": 0.0}  # one unit of the printed sixth decimal in default mode
PROVENANCE = {"mafiascope_version": "X", "git_commit": "X", "python": "X"}  # the report.md header's run facts, fixed


def sources(name: str, cache_dir: str | Path) -> list[Path]:
    if CORPORA[name] == ("<damaged>",):
        from tests.loader_digest import make_malformed

        dest = Path(cache_dir) / "damaged"
        return [dest if dest.is_dir() else make_malformed(dest)]
    return [ROOT / p for p in CORPORA[name]]


def load(name: str, cache_dir: str | Path, mode_name: str = "default") -> Any:
    """The corpus as the CLI loads it in that mode (:func:`mafiascope.analytics.corpus.load_for_analysis`)."""
    from mafiascope.analytics.corpus import load_for_analysis

    from mafiascope.logs.io import TornLineWarning

    src = sources(name, cache_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TornLineWarning)  # the damaged corpus' lines, skipped as they should be
        return load_for_analysis(src, mode_name != "default", cache_dir=cache_dir)


def mode_of(name: str) -> Any:
    from mafiascope.analytics.modes import Mode

    return Mode(compat=None if name == "default" else name)


def relative_sources(rep: dict[str, Any]) -> dict[str, Any]:
    """The report with its selection's source paths relative to the checkout (the fixtures are machine-free)."""
    sel = (rep.get("audit") or {}).get("selection") or {}
    if "sources" in sel:
        sel["sources"] = [str(Path(s).resolve().relative_to(ROOT)) if Path(s).resolve().is_relative_to(ROOT)
                          else "<damaged>" for s in sel["sources"]]
    return rep


def report(c: Any, mode: Any, **kw: Any) -> dict[str, Any]:
    from mafiascope.analytics.report import build_report

    return relative_sources(build_report(c, mode, **kw))


def seat_filter_model(c: Any) -> str | None:
    """The model a ``--model`` golden selects: the first seated model (None for a one-model corpus)."""
    from mafiascope.analytics.seats import models_of

    ms = models_of(c)
    return ms[0] if len(ms) > 1 else None


def statistics() -> list[str]:
    """The seat-level statistics registered now (their keys, in order)."""
    try:
        from mafiascope.analytics.metrics import statistic_keys
    except ImportError:  # code from before the registry (fixtures of new corpora written by it)
        from mafiascope.analytics.seats import METRIC_KEYS

        return list(METRIC_KEYS)
    return list(statistic_keys())


def outputs(name: str, mode_name: str, cache_dir: str | Path) -> dict[str, Any]:
    """Every golden output of one corpus and mode (see the module docstring)."""
    from mafiascope.analytics.dynamics import edge_stream
    from mafiascope.analytics.episodes import find_episodes
    from mafiascope.analytics.seats import compare, compare_all, models_of, seat_mask

    c = load(name, cache_dir, mode_name)
    mode = mode_of(mode_name)
    rep = report(c, mode, transcripts=True)
    out: dict[str, Any] = {"statistics": statistics(), "report": rep}
    model = seat_filter_model(c)
    if model is not None:
        mask = seat_mask(c, model=model)
        sf = report(c, mode, transcripts=False, seats=mask, seat_filter={"model": model})
        out["seat_filter"] = sf
    if name in BUNDLED:
        out["comparisons"] = compare_all(c, mode)
    ms = models_of(c)
    if len(ms) > 1:
        out["compare_villagers"] = compare(c, mode, ms[0], ms[-1], role="Villager")
    if rep["probe_logs"]:  # over the games with probe logs, as the CLI's episodes and dynamics
        out["episodes"] = find_episodes(c.probed())
        edges = edge_stream(c.probed(), mode)
        out["edges"] = {"rows": len(edges), "sha256": hashlib.sha256(edges.to_csv(index=False).encode()).hexdigest()}
    return out


RENDERED = ("text", "report_dir")  # the fixture entries rendered from its own report


def renderings(got: dict[str, Any]) -> dict[str, Any]:
    """The text report and the report directory's Markdown and CSV files, rendered from ``got``'s
    report and comparisons (JSON values: a fixture's, or :func:`outputs`' as JSON gives them back)."""
    from mafiascope.analytics.report import format_report
    from mafiascope.analytics.report_dir import write_report_dir

    rep = got["report"]
    out: dict[str, Any] = {"text": format_report(rep).splitlines()}
    with tempfile.TemporaryDirectory() as tmp:
        full = {**rep, "comparisons": got["comparisons"], "provenance": PROVENANCE}
        written = write_report_dir(full, Path(tmp), figures=False)
        out["report_dir"] = {f: (Path(tmp) / f).read_text(encoding="utf-8").splitlines()
                             for f in ["report.md", *sorted(x for x in written["tables"] if x.endswith(".csv"))]}
    return out


def without_new_statistics(obj: Any, new: set[str]) -> Any:
    """``obj`` (JSON values) without the statistics ``new`` (keys of ``metrics`` dicts, comparison rows of
    those metrics) and, when there are any, without the Holm-adjusted p-values (their family changed)."""
    if not new:
        return obj
    if isinstance(obj, dict):
        return {k: (without_new_statistics({m: x for m, x in v.items() if m not in new}, new) if k == "metrics"
                    and isinstance(v, dict) else without_new_statistics(v, new))
                for k, v in obj.items() if not k.startswith("p_holm")}
    if isinstance(obj, list):
        return [without_new_statistics(x, new) for x in obj
                if not (isinstance(x, dict) and x.get("metric") in new)]
    return obj


def fixture_path(name: str, mode_name: str) -> Path:
    return FIXTURES / f"{name}.{'compat' if mode_name != 'default' else 'default'}.json"


def dump(obj: dict[str, Any]) -> str:
    """Compact JSON, one top-level entry a line (small files, readable diffs)."""
    lines = [f"{json.dumps(k)}:{json.dumps(v, ensure_ascii=False, separators=(',', ':'))}" for k, v in obj.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def read(name: str, mode_name: str) -> dict[str, Any]:
    return json.loads(fixture_path(name, mode_name).read_text(encoding="utf-8"))


def differences(mine: Any, gold: Any, tol: float, path: str = "", out: list[str] | None = None,
                limit: int = 20) -> list[str]:
    """Where ``mine`` differs from ``gold`` (JSON values): keys and their order, types, values; floats
    within ``tol``. At most ``limit`` differences are listed."""
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(gold, dict):
        if not isinstance(mine, dict) or list(mine) != list(gold):
            have = list(mine) if isinstance(mine, dict) else type(mine).__name__
            out.append(f"{path}: keys {have} != {list(gold)}")
            return out
        for k in gold:
            differences(mine[k], gold[k], tol, f"{path}.{k}", out, limit)
    elif isinstance(gold, list):
        if not isinstance(mine, list) or len(mine) != len(gold):
            out.append(f"{path}: {str(mine)[:200]} != {str(gold)[:200]}")
            return out
        for i, (a, b) in enumerate(zip(mine, gold)):
            differences(a, b, tol, f"{path}[{i}]", out, limit)
    elif isinstance(gold, float) and isinstance(mine, (int, float)) and not isinstance(mine, bool):
        if not (mine == gold or (math.isnan(gold) and math.isnan(mine)) or abs(mine - gold) <= tol):
            out.append(f"{path}: {mine!r} != {gold!r}")
    elif type(mine) is not type(gold) or mine != gold:
        out.append(f"{path}: {mine!r} != {gold!r}")
    return out


def mismatches(mine: Any, gold: Any, gold_statistics: list[str], mode_name: str, path: str) -> list[str]:
    """:func:`differences` of computed values from a fixture's (``gold_statistics``: the fixture's
    ``statistics``), leaving out statistics registered since and, with them, the Holm-adjusted p-values."""
    new = set(statistics()) - set(gold_statistics)
    return differences(without_new_statistics(mine, new), without_new_statistics(gold, new), FLOAT_TOL[mode_name], path)


def as_json(obj: Any) -> Any:
    """``obj`` as a JSON round trip gives it back (tuples as lists, keys as strings)."""
    return json.loads(json.dumps(obj, ensure_ascii=False, default=str))


def fixture(got: dict[str, Any]) -> dict[str, Any]:
    """A fixture's contents: :func:`outputs` (as JSON) and, with the comparisons, their :func:`renderings`."""
    got = as_json(got)
    return {**got, **renderings(got)} if "comparisons" in got else got


def write(names: list[str]) -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as cache:
        for name in names:
            for mode_name in MODES:
                path = fixture_path(name, mode_name)
                path.write_text(dump(fixture(outputs(name, mode_name, cache))), encoding="utf-8")
                print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size} bytes)")


def rerender() -> None:
    """Rewrite every fixture's rendered entries (:data:`RENDERED`) from its own values."""
    for path in sorted(FIXTURES.glob("*.json")):
        gold = json.loads(path.read_text(encoding="utf-8"))
        if not all(k in gold for k in RENDERED):  # a fixture of computed values only
            continue
        path.write_text(dump({**gold, **renderings(gold)}), encoding="utf-8")
        print(f"re-rendered {path.relative_to(ROOT)}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--renderings"]:
        rerender()
    else:
        write(sys.argv[1:] or list(CORPORA))
