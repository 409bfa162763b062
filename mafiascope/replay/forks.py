"""Fork a recorded game at a saved step and continue it N times.

Each branch is an ordinary game directory (``<logs>/<branch_id>/``) that opens as a whole
game: its ``game.jsonl`` is the setup record (with ``forked_from``, ``fork_point``,
``fork_batch_id``, ``replica_idx``, ``intervention``), then the parent's events up to the
fork point copied with ``inherited: true``, then the branch's own events. Its
``state.jsonl`` and ``introspection.jsonl`` likewise start with the parent's records up to
the fork point (``inherited: true``), so a branch can be forked again at any step, its own
or inherited. ``fork_point`` is the parent step whose snapshot the branch restarted from.

Seeds: a replica's state seed is derived from (parent seed, batch seed, fork point,
replica index), so replicas resample every later draw; ``keep_seed`` keeps the parent's
seed and counters, which makes an offline-bot branch without intervention replay the
parent exactly. The configuration always comes from the parent's own logs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..backends.base import Backend
from ..config import GameConfig
from ..engine.snapshots import SnapshotEncoder
from ..engine.phases.classic import NIGHT_ORDER, NIGHT_ROLES
from ..engine.runner import initial_state, phases_for, play_game
from ..engine.state import GameState
from ..logs.io import GAME_FILE, PROBE_FILE, STATE_FILE, JsonlWriter, dumps
from ..logs.probe_codec import ProbeEncoder
from ..logs.paths import UnsafePathError, claim_file, claim_game_dir, inside
from ..redaction import scrub
from .interventions import NIGHT_STAGE_ACTION, ForcedReply, Intervention, OverrideNight, ReplaceUtterance, night_action_text
from .source import START, Key, ParentGame, ReplayError, battery_list, fmt_key, redacted_backends
from ..logs import kinds as K

MAX_N = 200
MAX_PARALLEL = 64
PROBE_MODES = ("full", "suspicion", "none")
SUSPICION_PROBE = "suspicion_ranking"
EXPERIMENTS_DIR = "experiments"


@dataclass
class ForkPlan:
    """A validated fork request: everything is checked before any branch starts."""

    parent: ParentGame
    at: Key  # the step the user named
    base_key: Key  # the parent step whose snapshot the branches restart from
    base_state: GameState
    probe_memory: dict[str, Any] | None
    cfg: GameConfig
    n: int
    logs_dir: Path
    intervention: Intervention | None = None
    parallel: int = 1
    probes: str = "full"
    keep_seed: bool = False
    batch_seed: int = 0
    batch_id: str = ""
    backend_overrides: dict[str, str] = field(default_factory=dict)
    setup_extra: dict[str, Any] = field(default_factory=dict)  # experiment provenance
    write_batch_file: bool = True

    def describe(self) -> dict[str, Any]:
        return {
            "fork_batch_id": self.batch_id, "parent_game_id": self.parent.game_id, "parent_dir": str(self.parent.dir.resolve()),
            "at": fmt_key(self.at), "fork_point": list(self.base_key), "n": self.n, "parallel": self.parallel,
            "probes": self.probes, "keep_seed": self.keep_seed, "batch_seed": self.batch_seed,
            "intervention": self.intervention.as_dict() if self.intervention else None,
            "backend_overrides": self.backend_overrides, "logs_dir": str(self.logs_dir.resolve()),
        }  # fmt: skip


# ----------------------------------------------------------------------------- planning


def _probe_config(cfg: GameConfig, parent: ParentGame, mode: str) -> None:
    if mode not in PROBE_MODES:
        raise ReplayError(f"--probes {mode!r}: choose one of {', '.join(PROBE_MODES)}")
    if mode == "none":
        cfg.probes.enabled = False
    elif mode == "suspicion":
        battery = battery_list(parent.setup.get("probes")) or cfg.probes.probes
        keep = [p for p in battery or [] if p.get("id") == SUSPICION_PROBE]
        if keep and _valid_battery(keep):
            cfg.probes.probes, cfg.probes.battery = keep, None
        else:  # not in the parent's battery, or chained to probes that are dropped: the shipped one
            cfg.probes.probes, cfg.probes.battery = None, "suspicion"
        cfg.probes.enabled = True


def _valid_battery(probes: list[dict[str, Any]]) -> bool:
    from ..probes.dsl import parse_battery

    try:
        parse_battery({"name": "inline", "probes": probes})
    except ValueError:  # BatteryError: a probe chained to one that is dropped, a malformed probe
        return False
    return True


def _apply_backend_overrides(cfg: GameConfig, state: GameState, overrides: dict[str, str]) -> None:
    from ..backends.registry import BotSpec

    for seat, backend in overrides.items():
        if backend not in cfg.backends:
            preset = None
            if backend == "bot":
                preset = "balanced"
            elif backend.startswith("bot:"):
                preset = backend.split(":", 1)[1]
            if preset is None:
                raise ReplayError(f"--backend-override {seat}={backend}: {backend!r} is not a backend of the parent game "
                                  f"(have: {', '.join(sorted(cfg.backends))}) nor bot / bot:PRESET")  # fmt: skip
            from ..backends.bot import list_presets

            known = list(list_presets())
            if known and preset not in known:
                raise ReplayError(f"--backend-override {seat}={backend}: unknown bot preset {preset!r}; allowed: {known}")
            cfg.backends[backend] = BotSpec(preset=preset)
        targets = [s for s in state.seats] if seat in ("*", "all") else [s for s in state.seats if s.name == seat]
        if not targets:
            raise ReplayError(f"--backend-override {seat}={backend}: no seat named {seat!r} (seats: {', '.join(s.name for s in state.seats)})")
        for s in targets:
            s.backend = backend
            s.model_label = ""  # set from the backend instance when the branch starts


def _state_of(parent: ParentGame, key: Key, cfg: GameConfig) -> tuple[GameState, dict[str, Any] | None]:
    if key == START:
        from ..backends.registry import build_backends

        state = initial_state(cfg, seed=int(parent.setup["seed"]), game_id=parent.game_id, backends=build_backends(cfg.backends))
        want = [(p.get("name"), p.get("role")) for p in parent.setup.get("players") or []]
        if [(s.name, s.role) for s in state.seats] != want:
            raise ReplayError(f"game {parent.game_id}: the table could not be rebuilt from its setup; fork from a saved step instead")
        return state, None
    snap = parent.snapshot(key)
    try:
        state = GameState.model_validate(snap["state"])
    except Exception as exc:
        raise ReplayError(f"game {parent.game_id}: the snapshot at {fmt_key(key)} does not restore: {exc}") from None
    return state, snap.get("probe_memory")


def _alive_seat(state: GameState, name: str, where: str) -> None:
    try:
        seat = state.seat(name)
    except KeyError:
        raise ReplayError(f"{where}: no seat named {name!r} (seats: {', '.join(s.name for s in state.seats)})") from None
    if not seat.alive:
        raise ReplayError(f"{where}: {name} is dead at this point of the game")


def _candidates(state: GameState, seat: str, stage: str) -> list[str]:
    probe = state.clone()
    probe.pending.stage, probe.pending.remaining = stage, [seat]
    ask = phases_for(probe).next(probe)
    return list(getattr(ask, "candidates", []) or [])


def _plan_replacement(parent: ParentGame, at: Key, seat: str | None, text: str) -> tuple[Key, ReplaceUtterance]:
    ev = parent.utterance(at)
    if ev is None:
        raise ReplayError(f"game {parent.game_id}: no seat spoke at step {fmt_key(at)}; --replace-utterance needs the step of an utterance")
    speaker = ev.get("player")
    if seat and seat != speaker:
        known = {p.get("name") for p in parent.setup.get("players") or []}
        if seat not in known:
            raise ReplayError(f"--seat {seat}: no seat of that name (seats: {', '.join(sorted(n for n in known if n))})")
        raise ReplayError(f"step {fmt_key(at)} was said by {speaker}, not {seat}")
    if not text.strip():
        raise ReplayError("--replace-utterance: the replacement text is empty")
    base = parent.previous_key(at)
    if base is None:
        raise ReplayError(f"game {parent.game_id}: no snapshot before step {fmt_key(at)}; it cannot be replaced")
    return base, ReplaceUtterance(seat=str(speaker), text=text, step=list(at), kind=ev.get("kind"), original_text=ev.get("response"))


def _plan_night(parent: ParentGame, at: Key, seat: str, target: str) -> tuple[Key, OverrideNight]:
    ev = parent.utterance(at)
    if ev is not None and ev.get("player") == seat and ev.get("kind") in NIGHT_STAGE_ACTION:
        base = parent.previous_key(at)
        if base is None:
            raise ReplayError(f"game {parent.game_id}: no snapshot before step {fmt_key(at)}")
        return base, OverrideNight(seat, target, step=list(at), kind=ev["kind"], action=NIGHT_STAGE_ACTION[ev["kind"]],
                                   original_target=ev.get("target"))  # fmt: skip
    return at, OverrideNight(seat, target, step=None)


def plan_fork(
    game: str | Path | ParentGame,
    at: Key | str,
    n: int = 1,
    *,
    logs: str | Path | None = None,
    search_logs: str | Path | None = None,
    parallel: int = 1,
    probes: str = "full",
    backend_overrides: dict[str, str] | None = None,
    replace_text: str | None = None,
    seat: str | None = None,
    override_night: tuple[str, str] | None = None,
    keep_seed: bool = False,
    batch_seed: int | None = None,
    setup_extra: dict[str, Any] | None = None,
    batch_id: str | None = None,
) -> ForkPlan:
    """Validate a fork request and prepare its base state; raises ReplayError on any problem."""
    from .source import parse_key

    key = parse_key(at) if isinstance(at, str) else (int(at[0]), int(at[1]))
    if not isinstance(n, int) or not 1 <= n <= MAX_N:
        raise ReplayError(f"-n {n}: the number of branches must be between 1 and {MAX_N}")
    if not 1 <= parallel <= MAX_PARALLEL:
        raise ReplayError(f"--parallel {parallel}: must be between 1 and {MAX_PARALLEL}")
    if replace_text is not None and override_night is not None:
        raise ReplayError("give either --replace-utterance or --override-night, not both")
    if seat and replace_text is None:
        raise ReplayError("--seat goes with --replace-utterance")
    parent = game if isinstance(game, ParentGame) else ParentGame.load(game, search_logs or logs)
    if not parent.snapshots and key != START:
        raise ReplayError(f"game {parent.game_id}: its state.jsonl holds no snapshot; it cannot be forked")
    cfg = parent.config()
    intervention: Intervention | None = None
    base = key
    if replace_text is not None:
        base, intervention = _plan_replacement(parent, key, seat, replace_text)
    elif override_night is not None:
        base, intervention = _plan_night(parent, key, *override_night)
    elif not parent.has(key):
        parent.snapshot(key)  # raises the explanatory error
    state, memory = _state_of(parent, base, cfg)
    if state.over:
        raise ReplayError(f"game {parent.game_id}: the game is already over at {fmt_key(base)}")
    if isinstance(intervention, ReplaceUtterance):
        _alive_seat(state, intervention.seat, "--seat")
        if state.pending.stage != intervention.kind or not state.pending.remaining or state.pending.remaining[0] != intervention.seat:
            raise ReplayError(f"step {fmt_key(key)}: the saved state before it is not {intervention.seat}'s turn; it cannot be replaced")
    elif isinstance(intervention, OverrideNight):
        _check_night(state, intervention, key)
    _probe_config(cfg, parent, probes)
    overrides = dict(backend_overrides or {})
    _apply_backend_overrides(cfg, state, overrides)
    used = {s.backend for s in state.seats}
    hidden = redacted_backends(cfg, used)
    if hidden:
        raise ReplayError(f"backend(s) {', '.join(hidden)}: the key was redacted in the parent's log; "
                          "pass --backend-override SEAT=BACKEND (e.g. '*=bot') to continue with another backend")  # fmt: skip
    logs_dir = Path(logs) if logs else parent.dir.parent
    if batch_id is not None and not re.fullmatch(r"[a-z0-9]{4,24}", batch_id):
        raise ReplayError(f"--batch-id {batch_id!r:.60}: use 4-24 lowercase letters or digits")
    batch_id = batch_id or secrets.token_hex(5)
    _check_batch_id_free(logs_dir, batch_id, n)
    return ForkPlan(
        parent=parent, at=key, base_key=base, base_state=state, probe_memory=memory, cfg=cfg, n=n, logs_dir=logs_dir,
        intervention=intervention, parallel=parallel, probes=probes, keep_seed=keep_seed,
        batch_seed=batch_seed if batch_seed is not None else secrets.randbits(31), batch_id=batch_id,
        backend_overrides=overrides, setup_extra=dict(setup_extra or {}),
    )  # fmt: skip


def _check_batch_id_free(logs_dir: Path, batch_id: str, n: int) -> None:
    """A batch id names the batch record and every branch directory: a used one is refused up front
    (run_fork_batch claims the record exclusively, so two forks started together cannot share it either)."""
    used = [p for p in [experiments_dir(logs_dir) / f"fork-{batch_id}.json"] + [logs_dir / f"fork-{batch_id}-{i:03d}" for i in range(n)]
            if os.path.lexists(p)]  # fmt: skip
    if used:
        raise ReplayError(f"--batch-id {batch_id}: already used under {logs_dir} ({used[0]} exists); choose another batch id")


def _check_night(state: GameState, iv: OverrideNight, key: Key) -> None:
    _alive_seat(state, iv.seat, "--override-night")
    role = state.seat(iv.seat).role
    stage = next((st for st in NIGHT_ORDER if role in NIGHT_ROLES[st]), None)
    if stage is None:
        raise ReplayError(f"--override-night: {iv.seat} is a {role} and has no night action")
    cur = state.pending.stage
    ok = cur in NIGHT_ORDER and (
        NIGHT_ORDER.index(cur) < NIGHT_ORDER.index(stage) or (cur == stage and iv.seat in state.pending.remaining)
    )
    if not ok:
        raise ReplayError(f"--override-night: {iv.seat} has no night action left after step {fmt_key(key)}; "
                          f"give the step of its night action (see `fork --list`)")  # fmt: skip
    cands = _candidates(state, iv.seat, stage)
    if iv.target not in cands:
        dead = iv.target in [s.name for s in state.seats if not s.alive]
        why = "is dead" if dead else "is not a legal target"
        raise ReplayError(f"--override-night {iv.seat}={iv.target}: {iv.target} {why} (legal: {', '.join(cands)})")
    iv.kind, iv.action = stage, NIGHT_STAGE_ACTION[stage]
    iv.text = night_action_text(state.seat(iv.seat).language, iv.action, iv.target)
    if iv.step is None:
        iv.step = list(key)


# ----------------------------------------------------------------------------- running


@dataclass
class BranchResult:
    replica_idx: int
    game_id: str
    path: str
    winner: str | None = None
    rounds: int | None = None
    reason: str | None = None
    faults: int = 0
    acts: int = 0
    error: str | None = None
    seconds: float = 0.0
    invalid: bool = False  # over the fault budget (game_over.invalid): listed, left out of the batch's summary
    invalid_reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def branch_id(plan: ForkPlan, i: int) -> str:
    return f"fork-{plan.batch_id}-{i:03d}"


def replica_seed(plan: ForkPlan, i: int) -> int:
    if plan.keep_seed:
        return plan.base_state.seed
    return plan.base_state.derive_seed("fork", plan.batch_seed, plan.base_key[0], plan.base_key[1], i)


def _inherited_keys(parent: ParentGame, base: Key) -> list[Key]:
    if base == START:
        return []
    keys = parent.keys()
    return keys[: keys.index(base) + 1]


def _write_inherited(plan: ForkPlan, state: GameState, out_dir: Path) -> list[dict[str, Any]]:
    """Pre-write inherited snapshots and probe records into the claimed ``out_dir``; return the inherited game events."""
    parent, gid = plan.parent, state.game_id
    keys = _inherited_keys(parent, plan.base_key)
    keyset = set(keys)
    probes = [r for r in parent.probe_records() if (r.get("round"), r.get("public_msg_seq")) in keyset]
    penc = ProbeEncoder(gid, [s.name for s in state.seats], parent.probe_templates)
    if probes:  # written compact again, with the parent's question templates
        with open(out_dir / PROBE_FILE, "w", encoding="utf-8") as fh:
            for r in probes:
                fh.write("".join(dumps(line) + "\n" for line in penc.encode({**r, "game_id": gid, "inherited": True})))
    if keys and plan.cfg.snapshots:
        enc = SnapshotEncoder(penc.tables.lookup)  # memory entries refer to the copied probe records
        with open(out_dir / STATE_FILE, "w", encoding="utf-8") as fh:
            for snap in parent.snapshots[: len(keys)]:
                rec = {**snap, "game_id": gid, "inherited": True}
                if isinstance(rec.get("state"), dict):
                    rec["state"] = {**rec["state"], "game_id": gid}
                fh.write(dumps(enc.encode(rec) if isinstance(rec.get("state"), dict) else rec) + "\n")
    n_events = len(plan.base_state.events)
    recs = parent.inherited_records(n_events)
    if len(recs) != n_events or any(r.get("kind") != e.get("kind") for r, e in zip(recs, plan.base_state.events)):
        recs = [dict(e) for e in plan.base_state.events]  # the snapshot's own history is authoritative
    return [{**r, "game_id": gid, "inherited": True} for r in recs]


async def run_branch(plan: ForkPlan, i: int, backends: dict[str, Backend]) -> BranchResult:
    t0 = time.time()
    state = plan.base_state.clone()
    state.game_id = branch_id(plan, i)
    state.seed = replica_seed(plan, i)
    out_dir = plan.logs_dir / state.game_id
    res = BranchResult(i, state.game_id, str(out_dir))
    try:
        out_dir = claim_game_dir(plan.logs_dir, state.game_id)  # exclusive: never another batch's branch
        inherited = _write_inherited(plan, state, out_dir)
        bk = dict(backends)
        for s in state.seats:
            if not s.model_label:
                s.model_label = getattr(bk[s.backend], "model_label", s.backend)
        iv = plan.intervention
        if iv is not None:
            seat = state.seat(iv.seat)
            bk[seat.backend] = ForcedReply(bk[seat.backend], iv.seat, iv.kind or "", iv.text)

        def on_event(rec: dict[str, Any]) -> None:
            if rec.get("kind") == K.SETUP and inherited:
                with JsonlWriter(out_dir / GAME_FILE) as w:
                    for ev in inherited:
                        w.write(ev)
                inherited.clear()

        extra = {
            "forked_from": plan.parent.game_id, "fork_point": list(plan.base_key), "fork_batch_id": plan.batch_id,
            "replica_idx": i, "intervention": iv.as_dict() if iv else None, "fork_seed": state.seed,
            "fork_keep_seed": plan.keep_seed, "fork_probes": plan.probes, "inherited_events": len(plan.base_state.events),
            "parent_seed": plan.parent.setup.get("seed"), **plan.setup_extra,
        }  # fmt: skip
        gr = await play_game(plan.cfg, logs_dir=plan.logs_dir, state=state, setup_extra=extra,
                             probe_memory=plan.probe_memory, backends=bk, on_event=on_event, claimed=True)  # fmt: skip
        res.winner, res.rounds, res.reason, res.faults, res.acts = gr.winner, gr.rounds, gr.reason, gr.faults, gr.acts
        res.invalid, res.invalid_reason = bool(gr.invalid), gr.invalid_reason
    except Exception as exc:  # one failed branch never stops the batch
        res.error = f"{type(exc).__name__}: {exc}"
    res.seconds = round(time.time() - t0, 3)
    return res


def experiments_dir(logs_dir: str | Path) -> Path:
    return Path(logs_dir) / EXPERIMENTS_DIR


def write_json_atomic(path: Path, obj: Any, *, root: str | Path | None = None) -> None:
    """Write ``obj`` as JSON to ``path`` via a temporary file and a rename; with ``root`` (the logs
    directory) the path must lie inside it with no symlink on the way (mafiascope.logs.paths)."""
    if root is not None:
        path = inside(root, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(scrub(obj), ensure_ascii=False, indent=1, default=str), encoding="utf-8")
    os.replace(tmp, path)


async def run_fork_batch(plan: ForkPlan, on_result: Callable[[BranchResult], None] | None = None,
                         backends: dict[str, Backend] | None = None) -> dict[str, Any]:  # fmt: skip
    """Run the plan's N branches (``parallel`` at a time) and write the batch record.

    The branches are jobs of the one study runner (:mod:`mafiascope.study.runner`), played by
    :func:`run_branch` (a branch continues the saved state), with their ledger in
    ``<logs>/experiments/fork-<id>.ledger/`` next to the record. A branch over the fault budget is
    ``invalid`` there, flagged in ``branches[]``, listed in the record's ``invalid`` and left out of
    its ``summary``."""
    from ..backends.registry import build_backends
    from ..study.runner import Job, run_games_async, spec_hash
    from .summary import game_outcome, summarize

    if backends is None:
        backends = build_backends(plan.cfg.backends, logs_dir=plan.logs_dir)
    progress = experiments_dir(plan.logs_dir) / f"fork-{plan.batch_id}.progress.jsonl"
    record: dict[str, Any] = {"kind": "fork_batch", **plan.describe(), "created": time.time(), "status": "running"}
    if plan.write_batch_file:
        try:
            claim_file(plan.logs_dir, experiments_dir(plan.logs_dir) / f"fork-{plan.batch_id}.json")
        except (FileExistsError, UnsafePathError) as exc:
            raise ReplayError(f"--batch-id {plan.batch_id}: the batch record cannot be claimed ({exc}); "
                              "another fork holds this batch id") from None  # fmt: skip
        write_json_atomic(experiments_dir(plan.logs_dir) / f"fork-{plan.batch_id}.json", record, root=plan.logs_dir)
        prog = JsonlWriter(progress)
        prog.write({"event": "start", "fork_batch_id": plan.batch_id, "n": plan.n, "ts": time.time()})
    results: dict[int, BranchResult] = {}

    async def play(job: Job) -> dict[str, Any]:
        r = results[job.index] = await run_branch(plan, job.index, backends)
        if plan.write_batch_file:
            prog.write({"event": "branch", **r.as_dict(), "ts": time.time()})
        if on_result:
            on_result(r)
        if r.error is not None:
            raise BranchFailed(r.error)
        return {**r.as_dict(), "game_id": r.game_id}

    jobs = [Job(branch_id(plan, i), replica_seed(plan, i), "fork", i, logs_dir=plan.logs_dir, fields={"replica_idx": i})
            for i in range(plan.n)]  # fmt: skip
    header = {"name": f"fork-{plan.batch_id}", "spec_hash": spec_hash({"kind": "fork_batch", **plan.describe()}), "games": plan.n,
              "front_end": "fork_batch"}  # fmt: skip
    with contextlib.ExitStack() as stack:  # the ledger: next to the batch record, or scratch when there is no record
        ledger_dir = (experiments_dir(plan.logs_dir) / f"fork-{plan.batch_id}.ledger" if plan.write_batch_file
                      else Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mafiascope-fork-"))))  # fmt: skip
        outcome = await run_games_async(ledger_dir, header, jobs, lambda j: plan.cfg, games_dir=plan.logs_dir, parallel=plan.parallel,
                                        play=play)  # fmt: skip
    ordered = [results[i] for i in range(plan.n) if i in results]
    outcomes = []
    for r in ordered:
        if r.error is None and outcome.rows[r.game_id].get("state") == "finished":  # invalid branches are left out
            try:
                outcomes.append(game_outcome(r.path))
            except Exception:
                pass
    record.update(status="done", finished=time.time(), branches=[r.as_dict() for r in ordered],
                  failed=sum(1 for r in ordered if r.error), summary=summarize(outcomes),
                  invalid=[gid for gid, row in outcome.rows.items() if row.get("state") == "invalid"])  # fmt: skip
    if plan.write_batch_file:
        prog.write({"event": "done", "fork_batch_id": plan.batch_id, "ts": time.time()})
        prog.close()
        write_json_atomic(experiments_dir(plan.logs_dir) / f"fork-{plan.batch_id}.json", record, root=plan.logs_dir)
    return record


class BranchFailed(RuntimeError):
    """A branch that did not finish (its error is in its BranchResult)."""


def fork(game: str | Path, at: Key | str, n: int = 1, **kwargs: Any) -> dict[str, Any]:
    """Synchronous helper: plan and run a fork batch."""
    plan = plan_fork(game, at, n, **kwargs)
    return asyncio.run(run_fork_batch(plan))


def night_override_options(parent: Any, key: tuple[int, int]) -> list[dict[str, Any]]:
    """Who can still be given a night override from step ``key``, with their legal targets.

    One entry per seat, ``{"seat", "role", "action", "targets"}``, in seating order: a seat is listed and
    a target offered exactly when the engine's own check of ``--override-night SEAT=TARGET`` at this step
    accepts it (mafiascope.replay.forks: the same base snapshot, night stage and candidate list as
    :func:`plan_fork`), so the pickers never offer what the fork would refuse. Empty when the step is not
    at or before a night with an action left (a day step, the game's end, no snapshot)."""
    try:
        cfg = parent.config()
    except ReplayError:
        return []
    states: dict[Any, Any] = {}
    out = []
    for seat in [str(p.get("name")) for p in parent.setup.get("players") or []]:
        try:
            base, iv = _plan_night(parent, key, seat, "")
            if base not in states:
                states[base] = _state_of(parent, base, cfg)[0]
        except ReplayError:
            continue
        state = states[base]
        if state.over:
            return []
        targets, action = [], None
        for t in [s.name for s in state.seats]:
            probe = OverrideNight(seat, t, step=iv.step, kind=iv.kind, action=iv.action)
            try:
                _check_night(state, probe, key)
            except ReplayError:
                continue
            targets.append(t)
            action = probe.action
        if targets:
            out.append({"seat": seat, "role": state.seat(seat).role, "action": action, "targets": targets})
    return out
