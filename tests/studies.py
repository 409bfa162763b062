"""Small offline studies for report tests: three bot backends named like real models (one by a local file
path), played by the study runner."""

from __future__ import annotations

from pathlib import Path

import yaml

MODELS = {"a": ("balanced", "/home/me/models/DeepSeek-V3-0324-Q4_K_M.gguf"), "b": ("analyst", "gpt-4o-mini"),
          "c": ("aggressive", "claude-3.5-haiku")}


def three_model_study(tmp_path: Path, games: int = 3, arms: tuple[tuple[str, str, str], ...] = (("mixed", "en", "chained"),),
                      name: str = "three") -> Path:
    """Run a study of ``arms`` (name, language, battery), each ``games`` games of the three models; returns its directory."""
    from mafiascope.study.run import run_study
    from mafiascope.study.spec import load_study_spec

    spec = {"name": name, "seed": 5, "games_per_arm": games,
            "backends": {k: {"type": "bot", "preset": p, "model": m} for k, (p, m) in MODELS.items()},
            "arms": [{"name": a, "lineup": {"roster": list(MODELS)}, "rules": "classic", "probes": b, "language": lang}
                     for a, lang, b in arms],
            "executor": {"kind": "local", "parallel": 2}, "out": str(tmp_path / "study")}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    run_study(load_study_spec(path), quiet=True)
    return tmp_path / "study"
