"""The checks a fork request passes before any branch starts: the probe mode, backend overrides,
the base state, and the two interventions (a replaced utterance, an overridden night action)."""

from __future__ import annotations

from typing import Any

from ..config import GameConfig
from ..engine.phases.classic import NIGHT_ORDER, NIGHT_ROLES
from ..engine.runner import initial_state, phases_for
from ..engine.state import GameState
from .interventions import NIGHT_STAGE_ACTION, OverrideNight, ReplaceUtterance, night_action_text
from .source import START, Key, ParentGame, ReplayError, battery_list, fmt_key

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
