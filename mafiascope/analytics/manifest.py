"""Provenance of an analysis: the package's (:func:`mafiascope.provenance.provenance`) plus the
analysed games' manifest (game id, sha256 of each log file, seed, hash of the run configuration), the run
configurations (one per study arm or batch: a game's name, seed and seat assignment are left out of the hash),
the studies whose ledgers scheduled the games (name, spec hash, arms) and, per backend, the model identity
and dates the API reported (OpenAI-compatible responses' ``model``, ``system_fingerprint``, ``created``).

Each block is a :class:`Section` of :data:`SECTIONS`: what it holds, built from the games' records, and
its lines in report.md; a new kind of provenance (e.g. which probe layer, battery and backend produced
the figures) is one more section there."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..export_text import md_code, md_inline
from ..logs import kinds as K
from ..logs.io import GAME_FILE, PROBE_FILE, STATE_FILE, loads_line
from ..logs.layers import LAYERS_DIR, probe_path, read_manifest
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


_PER_GAME_CONFIG = ("name", "seed", "seats")  # fields of a setup's ``config`` that are one game's, not its run configuration


def _records(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The game's setup and game_over records (the first of each kind), {} where missing."""
    found: dict[str, dict[str, Any]] = {}
    try:
        with open(path / GAME_FILE, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if '"setup"' not in line and '"game_over"' not in line:
                    continue
                try:
                    obj = loads_line(line)
                except ValueError:
                    continue
                if isinstance(obj, dict) and K.of(obj) in (K.SETUP, K.GAME_OVER):
                    found.setdefault(K.of(obj), obj)
    except OSError:
        pass
    return found.get(K.SETUP, {}), found.get(K.GAME_OVER, {})


def config_hash(setup: dict[str, Any]) -> str | None:
    """sha256 of the canonical JSON of the setup's run-defining fields (None when it has none): the games of
    one study arm or batch share it. Left out: the game's own name and seed, and the order of its seats (a
    roster arm seats its backends anew each game, so the seat assignment is not hashed: the backends are)."""
    cfg = {k: setup[k] for k in _CONFIG_FIELDS if setup.get(k) is not None}
    if not cfg:
        return None
    if isinstance(cfg.get("config"), dict):
        cfg["config"] = {k: v for k, v in cfg["config"].items() if k not in _PER_GAME_CONFIG}
    return hashlib.sha256(json.dumps(cfg, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def game_manifest(c: Corpus) -> list[dict[str, Any]]:
    """Per selected game (id order): ``game_id``, ``files`` {name: sha256}, ``seed``, ``config_sha256``."""
    return [g.entry for g in _games(c)]


@dataclass
class GameRecords:
    """One analysed game as provenance reads it: its manifest entry and its setup and game_over records."""

    entry: dict[str, Any]
    path: Path
    setup: dict[str, Any]
    over: dict[str, Any]
    layer: str | None = None  # the probe layer read (None: the game's own answers)
    layer_manifest: dict[str, Any] | None = None  # its layer.json: what produced it


def _games(c: Corpus) -> list[GameRecords]:
    out = []
    layer = getattr(c, "probe_layer", None)
    for gid, path in zip(c.games["game_id"].tolist(), c.games["path"].tolist()):
        d = Path(path)
        files = {name: sha256_file(d / name) for name in (GAME_FILE, PROBE_FILE, STATE_FILE) if (d / name).is_file()}
        lm = None
        if layer is not None:
            lp = probe_path(d, layer)
            if lp.is_file():
                files[f"{LAYERS_DIR}/{layer}/{PROBE_FILE}"] = sha256_file(lp)
            lm = read_manifest(d, layer)
        setup, over = _records(d)
        seed = setup.get("seed")
        out.append(GameRecords({"game_id": str(gid), "files": files, "seed": seed if isinstance(seed, int) else None,
                                "config_sha256": config_hash(setup)}, d, setup, over, layer, lm))
    return out


def _probe_layers(games: list[GameRecords], ledgers: Any = None) -> list[dict[str, Any]]:
    """Which probe answers the figures rest on: per (layer, battery, who answered), the games. The in-game
    layer (``game``) was asked by each seat's own backend while the game ran; another layer by
    ``mafiascope probes ask`` after it, from the recorded contexts (docs/probes.md)."""
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for g in games:
        if g.layer is None:
            probes = g.setup.get("probes") if isinstance(g.setup.get("probes"), dict) else {}
            key: tuple[Any, ...] = ("game", probes.get("name"), None, "each seat's own backend, in the game")
        else:
            m = g.layer_manifest or {}
            key = (g.layer, m.get("battery"), m.get("battery_sha256"), m.get("answered_by") or "unknown (no layer.json)")
        e = out.setdefault(key, {"layer": key[0], "battery": key[1], "battery_sha256": key[2], "answered_by": key[3], "games": 0,
                                 "backends": set(), "asked_first": None, "asked_last": None, "invalid": 0})  # fmt: skip
        e["games"] += 1
        m = g.layer_manifest or {}
        for b in (m.get("backends") or {}).values():
            if isinstance(b, dict):
                e["backends"].add(f"{b.get('type')}:{b.get('model')}")
        t = m.get("asked_at")
        if isinstance(t, (int, float)):
            e["asked_first"] = t if e["asked_first"] is None else min(e["asked_first"], t)
            e["asked_last"] = t if e["asked_last"] is None else max(e["asked_last"], t)
        e["invalid"] += int(bool(m.get("invalid")))
    rows = []
    for e in out.values():
        e["backends"] = sorted(e["backends"])
        e["asked_first_utc"], e["asked_last_utc"] = _iso(e.pop("asked_first")), _iso(e.pop("asked_last"))
        rows.append(e)
    return sorted(rows, key=lambda e: (-e["games"], str(e["layer"])))


def _probe_layers_md(rows: list[dict[str, Any]]) -> list[str]:
    out = ["| probe layer | battery | answered by | backends | asked | games | over its fault budget |", "|---|---|---|---|---|---|---|"]
    for e in rows:
        when = f"{e['asked_first_utc']} – {e['asked_last_utc']}" if e["asked_first_utc"] else "–"
        out.append(f"| {md_inline(e['layer'])} | {md_inline(e['battery'] or '–')} | {md_inline(e['answered_by'])} | "
                   f"{md_inline(', '.join(e['backends']) or '–')} | {when} | {e['games']} | {e['invalid']} |")
    return out


def _arms(games: list[GameRecords], ledgers: dict[str, tuple[dict[str, Any], str | None]]) -> list[dict[str, Any]]:
    """One entry per run configuration: its hash, games, and what defines it (rules, language, battery,
    backends' models), with the study and arm that scheduled its games when a ledger names them."""
    by: dict[str | None, list[GameRecords]] = {}
    for g in games:
        by.setdefault(g.entry["config_sha256"], []).append(g)
    out = []
    for h, gs in by.items():
        s = gs[0].setup
        probes = s.get("probes") if isinstance(s.get("probes"), dict) else {}
        backends = s.get("backends") if isinstance(s.get("backends"), dict) else {}
        placed = sorted({(ledgers[g.entry["game_id"]][0].get("name"), ledgers[g.entry["game_id"]][1])
                         for g in gs if g.entry["game_id"] in ledgers}, key=str)
        out.append({"config_sha256": h, "games": len(gs), "study_arms": [{"study": a, "arm": b} for a, b in placed],
                    "rule_set": s.get("rule_set"), "language": s.get("language"), "battery": probes.get("name"),
                    "models": sorted({str(b.get("model")) for b in backends.values() if isinstance(b, dict)})})
    return sorted(out, key=lambda a: (-a["games"], str(a["config_sha256"])))


def _ledgers(games: list[GameRecords]) -> dict[str, tuple[dict[str, Any], str | None]]:
    return scheduled_by([g.path for g in games])


def scheduled_by(game_dirs: list[Path]) -> dict[str, tuple[dict[str, Any], str | None]]:
    """game id -> (its ledger's header, its arm) for the games a study, arena or batch ledger scheduled
    (``<study>/games/<id>``, or ``.study``/``.batches/<prefix>`` beside the games)."""
    from ..play.ledger import StudyLedger

    found: dict[str, tuple[dict[str, Any], str | None]] = {}
    read: set[Path] = set()
    for parent in sorted({Path(d).parent for d in game_dirs}):
        places = [parent.parent] if parent.name == "games" else []
        places += [parent / ".study"] + (sorted((parent / ".batches").iterdir()) if (parent / ".batches").is_dir() else [])
        for place in places:
            if place in read or not (place / "ledger.jsonl").is_file():
                continue
            read.add(place)
            ledger = StudyLedger(place)
            header = ledger.header() or {}
            for gid, row in ledger.rows().items():
                found.setdefault(str(gid), (header, row.get("arm")))
    return found


def _studies(games: list[GameRecords], ledgers: dict[str, tuple[dict[str, Any], str | None]]) -> list[dict[str, Any]]:
    """The studies (ledgers with a spec hash) whose games are analysed: name, spec hash, games, arms."""
    out: dict[tuple[Any, Any], dict[str, Any]] = {}
    for g in games:
        if g.entry["game_id"] not in ledgers:
            continue
        header, arm = ledgers[g.entry["game_id"]]
        key = (header.get("name"), header.get("spec_hash"))
        st = out.setdefault(key, {"name": key[0], "spec_sha256": key[1], "games": 0, "arms": {}})
        st["games"] += 1
        st["arms"][str(arm)] = st["arms"].get(str(arm), 0) + 1
    return list(out.values())


def _iso(t: Any) -> str | None:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if isinstance(t, (int, float)) else None


def _backends(games: list[GameRecords], ledgers: Any = None) -> list[dict[str, Any]]:
    """Per backend (name, type, requested model): the model ids and system fingerprints the API reported and
    the first and last ``created`` time, over the analysed games' ``game_over.backends``."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for g in games:
        described = (g.over.get("backends") if isinstance(g.over.get("backends"), dict) else None) or \
            (g.setup.get("backends") if isinstance(g.setup.get("backends"), dict) else {})
        for name, d in described.items():
            if not isinstance(d, dict):
                continue
            key = (str(name), str(d.get("type")), str(d.get("model")))
            b = out.setdefault(key, {"backend": key[0], "type": key[1], "model": key[2], "games": 0, "served_models": {},
                                     "system_fingerprints": {}, "created_first": None, "created_last": None})
            b["games"] += 1
            rep = d.get("api_reported") if isinstance(d.get("api_reported"), dict) else {}
            served = rep.get("models") or ({d["served_model"]: None} if d.get("served_model") else {})
            for field, values in (("served_models", served), ("system_fingerprints", rep.get("system_fingerprints") or {})):
                for v, k in values.items():
                    b[field][str(v)] = b[field].get(str(v), 0) + (k if isinstance(k, int) else 0)
            for end, pick in (("created_first", min), ("created_last", max)):
                t = rep.get(end)
                if isinstance(t, (int, float)):
                    b[end] = t if b[end] is None else pick(b[end], t)
    for b in out.values():
        b["created_first_utc"], b["created_last_utc"] = _iso(b["created_first"]), _iso(b["created_last"])
    return sorted(out.values(), key=lambda b: (b["backend"], b["model"]))


def _studies_md(studies: list[dict[str, Any]]) -> list[str]:
    return [f"- study {md_code(s['name'])}, spec sha256 `{s['spec_sha256']}`: {s['games']} games ("
            + ", ".join(f"arm {md_code(a)}: {k}" for a, k in s["arms"].items()) + ")" for s in studies]


def _arms_md(arms: list[dict[str, Any]]) -> list[str]:
    rows = ["| run configuration (sha256) | games | study / arm | rules | language | battery | models |", "|---|---|---|---|---|---|---|"]
    for a in arms:
        where = "; ".join(f"{md_inline(x['study'])} / {md_inline(x['arm'])}" for x in a["study_arms"]) or "–"
        rows.append(f"| `{a['config_sha256'] or 'n/a'}` | {a['games']} | {where} | {md_inline(a['rule_set'] or '–')} | "
                    f"{md_inline(a['language'] or '–')} | {md_inline(a['battery'] or '–')} | "
                    f"{md_inline(', '.join(a['models']) or '–')} |")
    return rows


def _backends_md(backends: list[dict[str, Any]]) -> list[str]:
    rows = ["| backend | type | model requested | model reported by the API | system fingerprint | responses created | games |",
            "|---|---|---|---|---|---|---|"]
    for b in backends:
        served = ", ".join(f"{m} ({k})" if k else m for m, k in b["served_models"].items()) or "–"
        fps = ", ".join(b["system_fingerprints"]) or "–"
        when = (f"{b['created_first_utc']} – {b['created_last_utc']}" if b["created_first_utc"] else "–")
        rows.append(f"| {md_inline(b['backend'])} | {md_inline(b['type'])} | {md_inline(b['model'])} | {md_inline(served)} | "
                    f"{md_inline(fps)} | {when} | {b['games']} |")
    return rows


@dataclass(frozen=True)
class Section:
    """One block of the analysis provenance: its key, how it is built from the analysed games (and their
    ledgers), its title and its lines in report.md (:mod:`.report_dir` renders every section in order)."""

    key: str
    build: Callable[[list[GameRecords], dict[str, tuple[dict[str, Any], str | None]]], Any]
    title: str
    markdown: Callable[[Any], list[str]]


SECTIONS: tuple[Section, ...] = (
    Section("studies", _studies, "Studies", _studies_md),
    Section("arms", _arms, "Run configurations (one hash per study arm or batch)", _arms_md),
    Section("backends", _backends, "Backends: the model identity and dates the API reported", _backends_md),
    Section("probe_layers", _probe_layers, "Probe layers: which answers, battery and backend the figures rest on", _probe_layers_md),
)


def analysis_provenance(c: Corpus, mode: Mode) -> dict[str, Any]:
    """The provenance block of analyze/dynamics/episodes/compare JSON and of ``report``'s output."""
    games = _games(c)
    ledgers = _ledgers(games)
    manifest = [g.entry for g in games]
    configs = sorted({g["config_sha256"] for g in manifest if g["config_sha256"]})
    return provenance({
        "analysis": {"mode": mode.name, "boot": mode.boot, "seed": mode.seed},
        "config_sha256": configs,
        "seeds": [g["seed"] for g in manifest],
        "selection": c.selection.get("filters", {}),
        **{sec.key: sec.build(games, ledgers) for sec in SECTIONS},
        "manifest": manifest,
    })
