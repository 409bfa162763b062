"""One branch of a fork batch: its ids and seed, the parent's prefix copied into its directory
(``inherited: true``), and the game played on from the base state."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..backends.base import Backend
from ..play.game import play_game
from ..engine.snapshots import SnapshotEncoder
from ..engine.state import GameState
from ..logs.io import GAME_FILE, PROBE_FILE, STATE_FILE, JsonlWriter, dumps
from ..logs.paths import claim_game_dir
from ..logs.probe_codec import ProbeEncoder
from ..logs.probe_steps import copy_steps
from .fork_plan import ForkPlan
from .interventions import ForcedReply
from .source import START, Key, ParentGame
from ..logs import kinds as K


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
    copy_steps(parent.dir, out_dir, plan.base_state.step_index)
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
