"""A fork request, validated: :func:`plan_fork` checks everything (fork_checks) and prepares the
base state before any branch starts."""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import GameConfig
from ..engine.state import GameState
from .experiment_files import experiments_dir
from .fork_checks import _alive_seat, _apply_backend_overrides, _check_night, _plan_night, _plan_replacement, _probe_config, _state_of
from .interventions import Intervention, OverrideNight, ReplaceUtterance
from .source import START, Key, ParentGame, ReplayError, fmt_key, redacted_backends

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
