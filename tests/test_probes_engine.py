"""The probe engine in games: non-invasiveness, chaining, ordering, memory, errors, parse rates."""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mafiascope.engine.snapshots import iter_snapshots
from mafiascope.backends.base import Completion, CompletionRequest
from mafiascope.config import load_game_config
from mafiascope.play.game import WALL_CLOCK_FIELDS, play_game
from mafiascope.engine.state import GameState
from mafiascope.logs.io import iter_probe_records, read_jsonl
from mafiascope.probes.dsl import load_battery

bot = pytest.importorskip("mafiascope.backends.bot")
REPO = Path(__file__).resolve().parents[1]
PROBE_FIELDS = ("probes", "cost", "backends", "probes_scheduled", "probes_lost", "probe_loss_budget")  # setup.probes (battery),
# game_over.cost/backends (wall-clock sums) and the probe-loss budget's figures


class TimedBackend:
    """A bot seat whose probe calls take a seeded random time; records start/finish per call seed."""

    type = "bot"

    def __init__(self, inner: Any, max_delay: float = 0.002, fail: set[str] | None = None):
        self.inner, self.name, self.model_label = inner, inner.name, inner.model_label
        self.max_delay, self.fail = max_delay, fail or set()
        self.times: dict[int, tuple[float, float]] = {}
        self.acts: list[int | None] = []

    async def complete(self, req: CompletionRequest) -> Completion:
        if req.kind == "act":
            self.acts.append(req.seed)
            return await self.inner.complete(req)
        t0 = time.perf_counter()
        await asyncio.sleep(random.Random(req.seed).random() * self.max_delay)
        if req.purpose in self.fail:
            c = Completion(ok=False, error="ERROR: connection reset by peer", attempts=3)
        else:
            c = await self.inner.complete(req)
        self.times[req.seed] = (t0, time.perf_counter())
        return c

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    async def aclose(self) -> None:
        pass


def backends_for(cfg, **kw) -> dict[str, TimedBackend]:
    return {name: TimedBackend(bot.BotBackend(name, preset=getattr(spec, "preset", "balanced")), **kw) for name, spec in cfg.backends.items()}


def transcript(path: Path) -> list[str]:
    out = []
    for rec in read_jsonl(path):
        rec = {k: v for k, v in rec.items() if k not in WALL_CLOCK_FIELDS and k not in PROBE_FIELDS and k != "game_id"}
        if rec.get("kind") == "setup":
            rec.get("config", {}).pop("probes", None)
        out.append(json.dumps(rec, sort_keys=True, ensure_ascii=False))
    return out


def run(cfg, tmp: Path, gid: str, seed: int, probes: bool, backends=None, **kw):
    return asyncio.run(play_game(cfg, logs_dir=tmp, seed=seed, game_id=gid, probes=probes, backends=backends or backends_for(cfg), **kw))


@pytest.mark.parametrize("config, seed", [("configs/classic.yaml", 1), ("configs/classic.yaml", 2), ("configs/classic_ru.yaml", 3),
                                          ("configs/classic_sheriff.yaml", 4), ("configs/classic.yaml", 5)])  # fmt: skip
@pytest.mark.slow
def test_probing_does_not_change_the_game(tmp_path, config, seed):
    cfg = load_game_config(REPO / config)
    on = run(cfg, tmp_path, "on", seed, True)
    off = run(cfg, tmp_path, "off", seed, False)
    a, b = transcript(tmp_path / "on" / "game.jsonl"), transcript(tmp_path / "off" / "game.jsonl")
    assert a == b and len(a) > 20
    assert (tmp_path / "on" / "introspection.jsonl").stat().st_size > 0 and not (tmp_path / "off" / "introspection.jsonl").exists()
    # the acting contexts in every snapshot are identical too
    sa = [[p["messages"] for p in s["players"]] for s in iter_snapshots(tmp_path / "on" / "state.jsonl")]
    sb = [[p["messages"] for p in s["players"]] for s in iter_snapshots(tmp_path / "off" / "state.jsonl")]
    assert sa == sb
    assert on.winner == off.winner


def _seed_of(game_seed: int, r: dict[str, Any]) -> int:
    return GameState.derive_seed(SimpleNamespace(seed=game_seed), "probe", r["round"], r["public_msg_seq"], r["player_idx"], r["probe_seq"])  # type: ignore[arg-type]


@pytest.mark.slow
def test_chains_respect_dependencies_and_carry_answers(tmp_path):
    cfg = load_game_config(REPO / "configs/classic.yaml")
    backends = backends_for(cfg, max_delay=0.003)
    run(cfg, tmp_path, "g", 11, True, backends)
    recs = list(iter_probe_records(tmp_path / "g"))
    times = {k: v for b in backends.values() for k, v in b.times.items()}
    battery = load_battery(REPO / "configs/probes/chained_en.yaml")
    order = [p.id for p in battery.active]
    refs = {p.id: p.chain_refs() for p in battery.active}
    by_seat: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(recs, key=lambda r: (r["step_index"], r["probe_seq"])):
        by_seat.setdefault(r["player_name"], []).append(r)
    checked = overlaps = 0
    for seat, rs in by_seat.items():
        for i, r in enumerate(rs):
            start = times[_seed_of(11, r)][0]
            for kind, ref in refs[r["probe_id"]]:
                same = [x for x in rs if x["step_index"] == r["step_index"] and x["probe_id"] == ref]
                if kind == "prev" and same and order.index(ref) < order.index(r["probe_id"]):
                    dep = same[0]
                else:
                    earlier = [x for x in rs if x["step_index"] < r["step_index"] and x["probe_id"] == ref]
                    dep = earlier[-1] if earlier else None
                if dep is None:
                    continue
                assert times[_seed_of(11, dep)][1] <= start, (r, dep)  # never starts before its input is done
                assert json.dumps(dep["answer_parsed"], ensure_ascii=False, separators=(",", ":")) in r["question"]
                checked += 1
    assert checked > 300
    # and calls for different seats did overlap (pipelining)
    spans = sorted(times.values())
    overlaps = sum(1 for a, b in zip(spans, spans[1:]) if b[0] < a[1])
    assert overlaps > 50


@pytest.mark.slow
def test_first_step_chain_values_are_na_and_records_are_complete(tmp_path):
    cfg = load_game_config(REPO / "configs/classic.yaml")
    run(cfg, tmp_path, "g", 2, True)
    recs = list(iter_probe_records(tmp_path / "g"))
    first = [r for r in recs if r["step_index"] == 1 and r["probe_id"] == "role_assessment"]
    assert first and all("was: N/A" in r["question"] for r in first)
    fields = ("timestamp", "game_id", "round", "public_msg_seq", "player_idx", "player_name", "probe_seq", "probe_id", "question",
              "answer_raw", "answer_parsed", "answer_parse_ok", "answer_repaired", "answer_valid", "model", "role", "phase",
              "latency_ms", "chain_used_raw_fallback", "error", "speaker", "tokens_prompt", "tokens_completion", "tokens_estimated")  # fmt: skip
    for r in recs:
        assert all(f in r for f in fields)
    keys = [(r["round"], r["public_msg_seq"], r["player_idx"], r["probe_seq"]) for r in recs]
    assert len(keys) == len(set(keys))
    # own_turn probes only for the speaker; night action steps probe only the actor; round ends everyone alive
    assert all(r["speaker"] for r in recs if r["probe_id"] == "planned_action")
    night = [r for r in recs if r["phase"] == "night"]
    assert night and all(r["speaker"] for r in night)
    assert any(r["public_msg_seq"] == -1 and r["phase"] == "round_end" for r in recs)
    assert not any(r["probe_id"] == "planned_action" for r in recs if r["public_msg_seq"] == -1)
    over = read_jsonl(tmp_path / "g" / "game.jsonl")[-1]
    cost = over["cost"]["probes"]
    assert over["kind"] == "game_over" and cost["calls"] == len(recs) and set(cost["by_probe"]) == {
        "role_assessment", "suspicion_ranking", "social_map", "personality_profile", "planned_action"}


@pytest.mark.slow
def test_transport_failure_is_an_error_record_and_chains_get_na(tmp_path):
    cfg = load_game_config(REPO / "configs/classic.yaml")
    run(cfg, tmp_path, "g", 3, True, backends_for(cfg, fail={"role_assessment"}))
    recs = list(iter_probe_records(tmp_path / "g"))
    ra = [r for r in recs if r["probe_id"] == "role_assessment"]
    assert ra and all(r["error"] and r["answer_raw"] is None and r["answer_parse_ok"] is False for r in ra)
    sm = [r for r in recs if r["probe_id"] == "social_map"]
    assert all("ERROR" not in r["question"] and "right now: N/A" in r["question"] for r in sm)
    assert all(r["answer_parse_ok"] for r in sm)
    assert read_jsonl(tmp_path / "g" / "game.jsonl")[-1]["cost"]["probes"]["errors"] == len(ra)


def test_unparsable_answer_chains_raw_text_flagged(tmp_path):
    from mafiascope.config import parse_game_config

    data = json.loads(json.dumps(load_game_config(REPO / "configs/classic.yaml").model_dump(mode="json")))
    data["probes"] = {"probes": [{"id": "mood", "question": "You are {player}. In one word, how do you feel?", "max_tokens": 40},
                                 {"id": "echo", "question": "Earlier you said: {prev_mood}. Last time: {last_echo}. Now say it again."}]}  # fmt: skip
    cfg = parse_game_config(data)
    run(cfg, tmp_path, "g", 4, True)
    recs = list(iter_probe_records(tmp_path / "g"))
    mood = [r for r in recs if r["probe_id"] == "mood"]
    echo = [r for r in recs if r["probe_id"] == "echo"]
    assert mood and all(r["answer_parse_ok"] is False and r["answer_valid"] is None and r["answer_raw"] for r in mood)
    assert all(r["chain_used_raw_fallback"] for r in echo)
    assert all(not r["chain_used_raw_fallback"] for r in mood)


@pytest.mark.slow
def test_memory_at_is_exact_and_restorable(tmp_path):
    cfg = load_game_config(REPO / "configs/classic.yaml")
    run(cfg, tmp_path, "g", 6, True)
    recs = list(iter_probe_records(tmp_path / "g"))
    snaps = list(iter_snapshots(tmp_path / "g" / "state.jsonl"))
    assert len(snaps) > 10
    for s in snaps:
        k = s["step_index"]
        mem = s["probe_memory"]
        assert mem["step_index"] == k
        for seat, per in mem["seats"].items():
            for pid, entry in per.items():
                mine = [r for r in recs if r["player_name"] == seat and r["probe_id"] == pid and r["step_index"] <= k]
                last = max(mine, key=lambda r: r["step_index"])
                assert entry["step_index"] == last["step_index"]
                assert entry["value"] == json.dumps(last["answer_parsed"], ensure_ascii=False, separators=(",", ":"))
    # restore into a new engine: the first chained question after the fork quotes the remembered answer
    from mafiascope.engine.phases.base import ProbeStep
    from mafiascope.probes.scheduler import ProbeEngine

    mid = snaps[len(snaps) // 2]
    state = GameState.model_validate(mid["state"])
    eng = ProbeEngine(load_battery(REPO / "configs/probes/chained_en.yaml"), state, backends_for(cfg), tmp_path / "fork")
    eng.restore(mid["probe_memory"])
    seat = state.alive_names()[0]
    assert eng.memory_at(mid["step_index"])["seats"][seat] == mid["probe_memory"]["seats"][seat]

    async def go() -> None:
        state.step_index += 1
        eng.on_step(state, ProbeStep(state.round, -1, "round_end", [seat], step_index=state.step_index))
        await eng.drain()

    asyncio.run(go())
    fork = list(iter_probe_records(tmp_path / "fork"))
    ra = next(r for r in fork if r["probe_id"] == "role_assessment")
    assert mid["probe_memory"]["seats"][seat]["role_assessment"]["value"] in ra["question"]


@pytest.mark.parametrize("lang", ["en", "ru"])
@pytest.mark.slow
def test_bots_answer_every_default_probe(tmp_path, lang):
    from mafiascope.config import parse_game_config

    data = json.loads(json.dumps(load_game_config(REPO / ("configs/classic.yaml" if lang == "en" else "configs/classic_ru.yaml")).model_dump(mode="json")))
    data["probes"] = {"battery": f"default_{lang}"}
    cfg = parse_game_config(data)
    run(cfg, tmp_path, "g", 9, True)
    recs = list(iter_probe_records(tmp_path / "g"))
    ids = {"role_beliefs", "role_assessment", "suspicion_ranking", "planned_action", "social_map", "personality_profile"}
    assert {r["probe_id"] for r in recs} == ids
    for pid in ids:
        rs = [r for r in recs if r["probe_id"] == pid]
        ok = sum(r["answer_parse_ok"] and r["answer_valid"] for r in rs)
        assert ok / len(rs) >= 0.99, (pid, ok, len(rs))
