"""A fork request, validated: :func:`plan_fork` checks everything before any branch starts (the
probe mode, backend overrides, the base state, and the two interventions: a replaced utterance, an
overridden night action) and prepares the base state; :func:`night_override_options` offers exactly
the night overrides those checks accept."""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import GameConfig
from ..engine.phases.classic import NIGHT_ORDER, NIGHT_ROLES
from ..engine.state import GameState
from ..play.game import initial_state, phases_for
from .experiment_files import experiments_dir
from .interventions import NIGHT_STAGE_ACTION, Intervention, OverrideNight, ReplaceUtterance, night_action_text
from .source import START, Key, ParentGame, ReplayError, battery_list, fmt_key, redacted_backends

MAX_N = 200
MAX_PARALLEL = 64


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
        base, intervention = plan_night(parent, key, *override_night)
    elif not parent.has(key):
        parent.snapshot(key)  # raises the explanatory error
    state, memory = state_at(parent, base, cfg)
    if state.over:
        raise ReplayError(f"game {parent.game_id}: the game is already over at {fmt_key(base)}")
    if isinstance(intervention, ReplaceUtterance):
        _alive_seat(state, intervention.seat, "--seat")
        if state.pending.stage != intervention.kind or not state.pending.remaining or state.pending.remaining[0] != intervention.seat:
            raise ReplayError(f"step {fmt_key(key)}: the saved state before it is not {intervention.seat}'s turn; it cannot be replaced")
    elif isinstance(intervention, OverrideNight):
        check_night(state, intervention, key)
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


PROBE_MODES = ("full", "suspicion", "none")
SUSPICION_PROBE = "suspicion_ranking"


def _probe_config(cfg: GameConfig, parent: ParentGame, mode: str) -> None:
    if mode not in PROBE_MODES:
        raise ReplayError(f"--probes {mode!r}: choose one of {', '.join(PROBE_MODES)}")
    if mode == "none":
        cfg.probes.enabled = False
    elif mode == "suspicion":
        battery = battery_list(parent.setup.get("probes")) or cfg.probes.probes
        keep = [p for p in battery or [] if p.get("id") == SUSPICION_PROBE]
        if keep and valid_battery(keep):
            cfg.probes.probes, cfg.probes.battery = keep, None
        else:  # not in the parent's battery, or chained to probes that are dropped: the shipped one
            cfg.probes.probes, cfg.probes.battery = None, "suspicion"
        cfg.probes.enabled = True


def valid_battery(probes: list[dict[str, Any]]) -> bool:
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


def state_at(parent: ParentGame, key: Key, cfg: GameConfig) -> tuple[GameState, dict[str, Any] | None]:
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


def plan_night(parent: ParentGame, at: Key, seat: str, target: str) -> tuple[Key, OverrideNight]:
    ev = parent.utterance(at)
    if ev is not None and ev.get("player") == seat and ev.get("kind") in NIGHT_STAGE_ACTION:
        base = parent.previous_key(at)
        if base is None:
            raise ReplayError(f"game {parent.game_id}: no snapshot before step {fmt_key(at)}")
        return base, OverrideNight(seat, target, step=list(at), kind=ev["kind"], action=NIGHT_STAGE_ACTION[ev["kind"]],
                                   original_target=ev.get("target"))  # fmt: skip
    return at, OverrideNight(seat, target, step=None)



def check_night(state: GameState, iv: OverrideNight, key: Key) -> None:
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
            base, iv = plan_night(parent, key, seat, "")
            if base not in states:
                states[base] = state_at(parent, base, cfg)[0]
        except ReplayError:
            continue
        state = states[base]
        if state.over:
            return []
        targets, action = [], None
        for t in [s.name for s in state.seats]:
            probe = OverrideNight(seat, t, step=iv.step, kind=iv.kind, action=iv.action)
            try:
                check_night(state, probe, key)
            except ReplayError:
                continue
            targets.append(t)
            action = probe.action
        if targets:
            out.append({"seat": seat, "role": state.seat(seat).role, "action": action, "targets": targets})
    return out
