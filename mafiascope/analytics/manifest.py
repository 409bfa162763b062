"""Provenance of an analysis: the package's (:func:`mafiascope.provenance.provenance`) plus the
analysed games' manifest (game id, sha256 of each log file, seed, hash of the run configuration)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..logs import kinds as K
from ..logs.io import GAME_FILE, PROBE_FILE, STATE_FILE
from ..provenance import provenance
from .corpus import Corpus
from .modes import Mode

# setup fields that define how a game was run (the game's own ids and timestamps excluded)
_CONFIG_FIELDS = ("rule_set", "rules", "config", "backends", "probes", "language", "game_type")


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def _setup(path: Path) -> dict[str, Any]:
    """The game's setup record (the first line of that kind), or {}."""
    try:
        with open(path / GAME_FILE, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                if isinstance(obj, dict) and K.of(obj) == K.SETUP:
                    return obj
    except OSError:
        pass
    return {}


def config_hash(setup: dict[str, Any]) -> str | None:
    """sha256 of the canonical JSON of the setup's run-defining fields (None when it has none)."""
    cfg = {k: setup[k] for k in _CONFIG_FIELDS if setup.get(k) is not None}
    if not cfg:
        return None
    return hashlib.sha256(json.dumps(cfg, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def game_manifest(c: Corpus) -> list[dict[str, Any]]:
    """Per selected game (id order): ``game_id``, ``files`` {name: sha256}, ``seed``, ``config_sha256``."""
    out = []
    for gid, path in zip(c.games["game_id"].tolist(), c.games["path"].tolist()):
        d = Path(path)
        files = {name: sha256_file(d / name) for name in (GAME_FILE, PROBE_FILE, STATE_FILE) if (d / name).is_file()}
        setup = _setup(d)
        seed = setup.get("seed")
        out.append({"game_id": str(gid), "files": files, "seed": seed if isinstance(seed, int) else None,
                    "config_sha256": config_hash(setup)})
    return out


def analysis_provenance(c: Corpus, mode: Mode) -> dict[str, Any]:
    """The provenance block of analyze/dynamics/episodes/compare JSON and of ``report``'s output."""
    games = game_manifest(c)
    configs = sorted({g["config_sha256"] for g in games if g["config_sha256"]})
    return provenance({
        "analysis": {"mode": mode.name, "boot": mode.boot, "seed": mode.seed},
        "config_sha256": configs,
        "seeds": [g["seed"] for g in games],
        "selection": c.selection.get("filters", {}),
        "manifest": games,
    })
