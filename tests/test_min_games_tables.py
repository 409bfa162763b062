"""``--min-games N`` leaves a model seated in fewer than N games out of every per-model table of the report
(JSON, Markdown, CSV): the pooled figures, F2's calibration per model and the custom probe summaries alike.
Only the audit (selection, with its game count, and provenance: which configs ran) names it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from mafiascope.cli import main

from .test_custom_probe_report import BATTERY  # custom probes: a player, a score, an enum, free text

REPO = Path(__file__).resolve().parents[1]


def mentions(obj: Any, names: set[str], path: str = "") -> Iterator[str]:
    """Every place in ``obj`` (a key or a string value) that is one of ``names``."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in names:
                yield f"{path}.{k}"
            yield from mentions(v, names, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from mentions(v, names, f"{path}[{i}]")
    elif isinstance(obj, str) and obj in names:
        yield path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """Four probed games, two of the classic line-up and two where the analyst seat runs ``rare-model``; one of
    each with the default battery (F2's suspicion scores), one with a custom probe."""
    root = tmp_path_factory.mktemp("min_games")
    (root / "battery.yaml").write_text(BATTERY, encoding="utf-8")
    cfg = yaml.safe_load((REPO / "configs" / "classic.yaml").read_text(encoding="utf-8"))
    cfg["backends"]["analyst"] = {**cfg["backends"]["analyst"], "model": "rare-model"}
    (root / "rare.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    logs = root / "logs"
    for seed, conf in enumerate((REPO / "configs" / "classic.yaml", root / "rare.yaml")):
        custom = ["--probes-file", str(root / "battery.yaml")]
        for extra in ([], custom):
            assert main(["run", "-c", str(conf), *extra, "--logs", str(logs), "--seed", str(seed + len(extra)), "-q", "--json"]) == 0
    return logs


@pytest.mark.slow
def test_min_games_filters_every_per_model_table(corpus, tmp_path, capsys):
    cache = tmp_path / "cache"
    assert main(["analyze", str(corpus), "--boot", "0", "--cache-dir", str(cache), "--json"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert "bot-analyst" in full["f2"]["by_model"]  # without the filter both are in the per-model tables
    assert {"rare-model", "bot-analyst"} <= set(full["by_model"]) and "rare-model" in json.dumps(full["custom_probes"])

    out = tmp_path / "report"
    assert main(["report", str(corpus), "--out", str(out), "--no-figures", "--boot", "0", "--cache-dir", str(cache),
                 "--min-games", "3", "--json"]) == 0
    capsys.readouterr()
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    left = set(rep["audit"]["selection"]["models_left_out"])
    assert left == {"rare-model", "bot-analyst"}, left  # 2 games each of 4
    kept = set(rep["by_model"])
    assert kept and not kept & left and set(rep["f2"]["by_model"]) == kept
    found = [p for p in mentions(rep, left) if not p.startswith((".audit.selection", ".provenance"))]
    assert found == [], found[:10]
    for table in (out / "tables").glob("*.csv"):
        text = table.read_text(encoding="utf-8")
        assert not any(m in text for m in left), table.name
    md = (out / "report.md").read_text(encoding="utf-8")  # the figures start after the selection and provenance audit
    md = md[md.index("\n## ", md.index("\n## Provenance") + 1):]
    assert not [m for m in left if re.search(rf"\b{re.escape(m)}\b", md)], [m for m in left if m in md]

    assert main(["analyze", str(corpus), "--boot", "0", "--cache-dir", str(cache), "--min-games", "3", "--json"]) == 0
    analyzed = json.loads(capsys.readouterr().out)
    found = [p for p in mentions(analyzed, left) if not p.startswith((".audit.selection", ".provenance", ".selection"))]
    assert found == [], found[:10]
