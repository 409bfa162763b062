"""Crash resume: finish games whose log stops before ``game_over``.

A game that died after its last move, while its probe calls drained (``probe_steps.jsonl``
holds ``acts_done``), is finished in place: its pending probe calls are asked
(mafiascope.probes.pending) and its ``game_over`` written; no move is played again. A game
that died mid-play first gets the pending probe calls of the steps up to its resume point,
so the continuation's chaining memory is complete; then:

A resumed game stays the same logical game in the same directory, under the same id:
it continues from its last complete snapshot with the same seed and counters (so an
offline-bot game ends exactly as it would have without the crash), and its setup record
gains ``resume_of`` (the game's own id) and ``resume_point`` ([round, msg_seq]).

The continuation is first written to a staging directory ``<parent>/.resume/<id>/<id>/``
(deep enough that game listings never see it): the setup, the game's own records up to
the snapshot (anything after it was half-done work and is redone), then the new records.
Only when the game has finished is the staging directory swapped in place of the old one
(two renames). A resume that is itself killed leaves the old directory untouched or, if
it died between the renames, is repaired by the next ``resume``. So a killed batch loses
no finished game, duplicates none, and every started game gets finished.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..play.game import play_game
from ..logs import LogFormatError, kinds, read_game
from ..logs.io import GAME_FILE, PROBE_FILE, STATE_FILE, JsonlWriter, dumps, list_game_dirs
from ..logs.probe_steps import STEPS_FILE, copy_steps
from ..probes.pending import finish_game, finish_pending, needs_finishing
from ..logs.probe_codec import ProbeEncoder
from ..logs.paths import UnsafePathError, claim_game_dir, game_dir, inside, safe_rename, safe_rmtree
from ..logs.schema import validate_game_id
from .fork_plan import state_at
from .source import START, Key, ParentGame, ReplayError, fmt_key

STAGING = ".resume"


def last_kind(game_dir: Path) -> str | None:
    """The kind of the game's last readable record (None when it has no setup record or cannot be read)."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            log = read_game(game_dir, skip_corrupt=True)
    except (OSError, LogFormatError):
        return None
    return kinds.of(log.records[-1]) if log.records else kinds.SETUP


def repair_staging(root: Path) -> list[str]:
    """Finish or undo swaps interrupted by a crash of an earlier resume; returns notes.

    Only staging directories strictly inside ``root`` are touched, none reached through a
    symlink, and only entries named like a game id (mafiascope.logs.paths)."""
    notes = []
    for stage in sorted(root.rglob(STAGING)) if root.is_dir() else []:
        try:
            inside(root, stage)
        except UnsafePathError as exc:
            notes.append(f"left alone: {exc}")
            continue
        if not stage.is_dir():
            continue
        base = stage.parent
        for entry in sorted(stage.iterdir()):
            if entry.name.endswith(".old") or entry.is_symlink() or not entry.is_dir():
                continue  # staging entries are real directories; anything else is not ours to touch
            try:
                gid = validate_game_id(entry.name)
                inside(base, entry)
            except ValueError as exc:  # UnsafePathError is a ValueError
                notes.append(f"left alone: {exc}")
                continue
            live, old, new = base / gid, stage / (gid + ".old"), entry / gid
            if not os.path.lexists(live) and old.is_dir() and not old.is_symlink():
                if (new / GAME_FILE).is_file() and not new.is_symlink() and last_kind(new) == kinds.GAME_OVER:
                    safe_rename(base, new, live)
                    notes.append(f"{gid}: completed an interrupted swap")
                else:
                    safe_rename(base, old, live)
                    notes.append(f"{gid}: restored the original after an interrupted resume")
            safe_rmtree(base, entry)
        for old in stage.glob("*.old"):
            if os.path.lexists(base / old.name[:-4]) and not old.is_symlink():
                safe_rmtree(base, old)
        try:
            stage.rmdir()
        except OSError:
            pass
    return notes


@dataclass
class Candidate:
    game_dir: Path
    game_id: str
    point: Key | None  # None = cannot be resumed
    reason: str = ""
    empty: bool = False
    finish_probes: bool = False  # its last move was made: only its pending probe calls and game_over are missing

    @property
    def resumable(self) -> bool:
        return self.point is not None or self.finish_probes

    def as_dict(self) -> dict[str, Any]:
        return {"game_id": self.game_id, "path": str(self.game_dir), "resume_point": fmt_key(self.point) if self.point else None,
                "finish_probes": self.finish_probes, "reason": self.reason}  # fmt: skip


def find_unfinished(logs: str | Path, *, min_idle: float = 0.0) -> list[Candidate]:
    out = []
    now = time.time()
    for d in list_game_dirs(logs):
        if d.parent.name == STAGING or STAGING in d.parts:
            continue
        try:  # LOGS may itself be one game directory: then it is checked inside its parent
            inside(logs, d) if d != Path(logs) else inside(Path(os.path.abspath(logs)).parent, os.path.abspath(d))
        except UnsafePathError as exc:
            out.append(Candidate(d, d.name, None, str(exc)))
            continue
        if last_kind(d) == kinds.GAME_OVER:
            continue
        if last_kind(d) is None:
            out.append(Candidate(d, d.name, None, "never started (no complete setup record); remove it with --drop-empty", empty=True))
            continue
        try:
            parent = ParentGame(d, need_snapshots=False, pending_ok=True)
        except ReplayError as exc:
            out.append(Candidate(d, d.name, None, str(exc)))
            continue
        idle = now - max((d / f).stat().st_mtime for f in (GAME_FILE, STATE_FILE, PROBE_FILE, STEPS_FILE) if (d / f).exists())
        if idle < min_idle:
            out.append(Candidate(d, parent.game_id, None, f"written {idle:.0f} s ago (still running? use --min-idle 0)"))
            continue
        try:  # the id names the staging directory: it must be valid and this directory's own
            validate_game_id(parent.game_id)
            why = "" if parent.game_id == d.name else f"setup.game_id {parent.game_id!r} is not the name of its directory"
        except ValueError as exc:
            why = f"setup.game_id: {exc}"
        if why:
            out.append(Candidate(d, d.name, None, f"{why}; not resumed"))
            continue
        if needs_finishing(d):
            out.append(Candidate(d, parent.game_id, None, "its last move was made: finishes its pending probe calls", finish_probes=True))
            continue
        keys = parent.keys()
        if keys:
            out.append(Candidate(d, parent.game_id, keys[-1]))
        elif parent.has(START):
            out.append(Candidate(d, parent.game_id, START, "no snapshot yet: restarts from the beginning"))
        else:
            out.append(Candidate(d, parent.game_id, None, "no snapshot and no seed/config to restart from"))
    return out


async def resume_game(cand: Candidate, backends: dict[str, Any] | None = None) -> dict[str, Any]:
    """Continue one unfinished game in place (see the module doc); returns its result."""
    from ..backends.registry import build_backends
    from .source import redacted_backends

    d, key = cand.game_dir, cand.point
    if cand.finish_probes:
        res = await finish_game(d, backends=backends)
        return {"game_id": res["game_id"], "path": str(d), "resume_point": "probes", "winner": res["winner"],
                "rounds": res["rounds"], "reason": res["reason"], "probes_finished": res["probes_finished"]}  # fmt: skip
    assert key is not None
    parent = ParentGame(d, need_snapshots=False, pending_ok=True)
    upto_k = int(parent.snapshot(key).get("step_index") or 0) if key != START else 0
    if upto_k:  # the calls of the steps kept must be answered before the continuation quotes them
        await finish_pending(d, backends=backends, upto=upto_k)
        parent = ParentGame(d, need_snapshots=False)
    cfg = parent.config()
    state, memory = state_at(parent, key, cfg)
    state.game_id = parent.game_id
    hidden = redacted_backends(cfg, {s.backend for s in state.seats})
    if hidden:
        raise ReplayError(f"game {parent.game_id}: the key of backend(s) {', '.join(hidden)} was redacted in the log; cannot resume")
    if parent.game_id != d.name:
        raise ReplayError(f"{d}: setup.game_id {parent.game_id!r:.140} is not the name of its directory; not resumed")
    base = d.parent
    stage_root = game_dir(base / STAGING, parent.game_id)  # the id is validated here, before any deletion
    safe_rmtree(base, stage_root)
    new = claim_game_dir(stage_root, parent.game_id)
    keys = parent.keys()
    upto = keys[: keys.index(key) + 1] if key != START else []
    with open(new / STATE_FILE, "w", encoding="utf-8") as fh:
        for snap in parent.snapshots[: len(upto)]:
            fh.write(dumps(snap) + "\n")
    keyset = set(upto)
    enc = ProbeEncoder(parent.game_id, [s.name for s in state.seats], None)
    with open(new / PROBE_FILE, "w", encoding="utf-8") as fh:
        records = parent.probe_records()
        enc.templates = parent.probe_templates
        for r in records:
            if (r.get("round"), r.get("public_msg_seq")) in keyset:
                fh.write("".join(dumps(line) + "\n" for line in enc.encode(r)))
    copy_steps(d, new, upto_k)  # the probe steps kept (the continuation appends its own)
    own = parent.inherited_records(len(state.events))
    if len(own) != len(state.events):
        own = [{"game_id": parent.game_id, **e} for e in state.events]
    pending = list(own)

    def on_event(rec: dict[str, Any]) -> None:
        if kinds.of(rec) == kinds.SETUP and pending:
            with JsonlWriter(new / GAME_FILE) as w:
                for ev in pending:
                    w.write(ev)
            pending.clear()

    prior = parent.setup.get("resumes") or []
    extra = {**{k: v for k, v in parent.setup.items() if k not in ("game_id", "kind")}, "resume_of": parent.game_id,
             "resume_point": list(key), "resumes": [*prior, {"point": list(key), "ts": time.time()}]}  # fmt: skip
    if backends is None:
        backends = build_backends(cfg.backends, logs_dir=d.parent)
    try:
        res = await play_game(cfg, logs_dir=stage_root, state=state, setup_extra=extra, probe_memory=memory,
                              backends=backends, on_event=on_event, claimed=True)  # fmt: skip
    except BaseException:
        safe_rmtree(base, stage_root)
        raise
    # swap: old -> .resume/<id>.old, staged -> live, drop old
    old = base / STAGING / (parent.game_id + ".old")
    safe_rmtree(base, old)
    safe_rename(base, d, old)
    safe_rename(base, new, d)
    safe_rmtree(base, old)
    safe_rmtree(base, stage_root)
    try:
        (base / STAGING).rmdir()
    except OSError:
        pass
    return {"game_id": parent.game_id, "path": str(d), "resume_point": fmt_key(key), "winner": res.winner,
            "rounds": res.rounds, "reason": res.reason}  # fmt: skip


async def resume_all(cands: list[Candidate], parallel: int = 4, on_result: Any = None) -> list[dict[str, Any]]:
    sem = asyncio.Semaphore(max(1, parallel))

    async def one(c: Candidate) -> dict[str, Any]:
        async with sem:
            try:
                r = await resume_game(c)
            except Exception as exc:
                r = {"game_id": c.game_id, "path": str(c.game_dir), "error": f"{type(exc).__name__}: {exc}"}
        if on_result:
            on_result(r)
        return r

    return list(await asyncio.gather(*(one(c) for c in cands if c.resumable)))
