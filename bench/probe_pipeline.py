"""Probe scheduling benchmark: unprobed vs sequential vs pipelined probing vs the critical-path bound.

One 7-seat classic game (offline bots, fixed seed) with the chained English battery; every
call goes over real HTTP to the loopback dev server (``mafiascope.backends.devserver``),
which answers after ``--latency-ms`` (``--standin`` replaces HTTP by an in-process bot
that sleeps the same time). The game is identical in every mode (same seed; probes never
change it), so the four figures compare schedules of the same calls:

* unprobed   -- the game alone;
* sequential -- the original schedule: one probe call at a time, and the game waits for
  every probe of a step before the next seat is asked;
* pipelined  -- the probe engine as shipped (``--concurrency`` calls in flight, the game
  never waits, chains order only a seat's dependent calls);
* bound      -- the longest path through the dependency graph of the pipelined run: acts
  in game order (each costing the unprobed game's wall time per act), each step's probes
  after the act that opened it and after their chain inputs, every probe taking the mean
  measured probe latency; unlimited concurrency.

Usage: python bench/probe_pipeline.py [--latency-ms 20] [--seed 5] [--concurrency 64] [--standin] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mafiascope.backends.base import Completion, CompletionRequest  # noqa: E402
from mafiascope.config import load_game_config  # noqa: E402
from mafiascope.play import game as runner_mod  # noqa: E402
from mafiascope.play.game import play_game  # noqa: E402
from mafiascope.logs.io import iter_probe_records, read_jsonl  # noqa: E402
from mafiascope.probes.dsl import load_battery  # noqa: E402

PRESETS = ["balanced", "cautious", "aggressive", "gullible", "analyst", "balanced", "cautious"]


class StandIn:
    """In-process stand-in for an HTTP model: a bot that answers after a fixed delay."""

    type = "bot"

    def __init__(self, name: str, preset: str, latency_s: float):
        from mafiascope.backends.bot import BotBackend

        self.inner = BotBackend(name, preset=preset)
        self.name, self.model_label, self.latency_s = name, self.inner.model_label, latency_s

    async def complete(self, req: CompletionRequest) -> Completion:
        await asyncio.sleep(self.latency_s)
        c = await self.inner.complete(req)
        c.latency_ms = int(self.latency_s * 1000)
        return c

    def describe(self) -> dict[str, Any]:
        return {"type": "standin", "latency_s": self.latency_s}

    async def aclose(self) -> None:
        pass


class Gate:
    """Wraps a backend: counts acts; in sequential mode an act waits until all probes so far are done."""

    def __init__(self, inner: Any, box: dict[str, Any]):
        self.inner, self.box = inner, box
        self.name, self.type, self.model_label = inner.name, inner.type, inner.model_label

    async def complete(self, req: CompletionRequest) -> Completion:
        if req.kind == "act":
            hook = self.box.get("hook")
            if self.box["sequential"] and hook is not None:
                await hook.idle()
            c = await self.inner.complete(req)
            self.box["acts_done"] += 1
            return c
        return await self.inner.complete(req)

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    async def aclose(self) -> None:
        await self.inner.aclose()


def _config(base_url: str | None, concurrency: int) -> Any:
    from mafiascope.config import parse_game_config

    cfg = load_game_config(ROOT / "configs" / "classic.yaml")
    data = cfg.model_dump(mode="json")
    data["probes"] = {"enabled": True, "battery": str(ROOT / "configs/probes/chained_en.yaml"), "max_concurrency": concurrency}
    if base_url:
        data["backends"] = {f"b{i}": {"type": "openai", "model": f"bot-{p}", "base_url": base_url, "max_concurrency": 256,
                                      "max_retries": 0, "label": f"bot-{p}"} for i, p in enumerate(PRESETS)}  # fmt: skip
    else:
        data["backends"] = {f"b{i}": {"type": "bot", "preset": p} for i, p in enumerate(PRESETS)}
    data["seats"] = [{"backend": f"b{i}"} for i in range(len(PRESETS))]
    data.pop("source_path", None)
    return parse_game_config(data, "bench")


async def _play(mode: str, logs: Path, seed: int, base_url: str | None, latency_s: float, concurrency: int) -> dict[str, Any]:
    from mafiascope.backends.registry import build_backends

    cfg = _config(base_url, 1 if mode == "sequential" else concurrency)
    if base_url:
        inner = build_backends(cfg.backends, logs_dir=logs)
    else:
        inner = {n: StandIn(n, s.preset, latency_s) for n, s in cfg.backends.items()}  # type: ignore[union-attr]
    box: dict[str, Any] = {"sequential": mode == "sequential", "acts_done": 0, "hook": None, "steps": {}}
    backends = {n: Gate(b, box) for n, b in inner.items()}
    orig = runner_mod._probe_hook

    def hook_factory(*a: Any, **k: Any) -> Any:
        hook, snap = orig(*a, **k)
        if hook is not None:
            box["hook"] = hook
            on_step = hook.on_step

            def recording(state: Any, step: Any) -> Any:
                box["steps"][step.step_index] = box["acts_done"]
                return on_step(state, step)

            hook.on_step = recording  # type: ignore[method-assign]
        return hook, snap

    runner_mod._probe_hook = hook_factory
    try:
        t0 = time.perf_counter()
        res = await play_game(cfg, logs_dir=logs, seed=seed, game_id=mode, probes=mode != "unprobed", backends=backends)
        wall = time.perf_counter() - t0
    finally:
        runner_mod._probe_hook = orig
        for b in inner.values():
            await b.aclose()
    over = read_jsonl(logs / mode / "game.jsonl")[-1]
    return {"wall_s": wall, "acts": res.acts, "rounds": res.rounds, "winner": res.winner, "cost": over.get("cost"), "steps": box["steps"]}


def critical_path(recs: list[dict[str, Any]], steps: dict[int, int], n_acts: int, act_s: float, probe_s: float) -> float:
    """Longest path: acts back to back; a probe starts after its step's act and its chain inputs."""
    refs = {p.id: p.chain_refs() for p in load_battery(ROOT / "configs/probes/chained_en.yaml").active}
    order = list(refs)
    done: dict[tuple[str, int, str], float] = {}
    latest: dict[tuple[str, str], float] = {}
    end = n_acts * act_s
    for step in sorted({r["step_index"] for r in recs}):
        opened = steps.get(step, 0) * act_s
        rs = sorted((r for r in recs if r["step_index"] == step), key=lambda r: (r["player_name"], r["probe_seq"]))
        new: dict[tuple[str, str], float] = {}
        for r in rs:
            seat, pid = r["player_name"], r["probe_id"]
            start = opened
            for kind, ref in refs[pid]:
                if kind == "prev" and (seat, ref) in new and order.index(ref) < order.index(pid):
                    start = max(start, new[(seat, ref)])
                elif (seat, ref) in latest:
                    start = max(start, latest[(seat, ref)])
            fin = start + probe_s
            new[(seat, pid)] = fin
            done[(seat, step, pid)] = fin
            end = max(end, fin)
        latest.update(new)
    return end


async def bench(latency_ms: float, seed: int, concurrency: int, standin: bool) -> dict[str, Any]:
    latency_s = latency_ms / 1000.0
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp)
        proc = None
        url = None
        if not standin:  # the dev server runs in its own process, like a remote model server
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "mafiascope", "dev-server", "--port", "0", "--json", "--latency-ms", str(latency_ms),
                stdout=asyncio.subprocess.PIPE, cwd=str(ROOT))  # fmt: skip
            assert proc.stdout is not None
            url = json.loads(await asyncio.wait_for(proc.stdout.readline(), 30))["base_url"]
        try:
            runs = {m: await _play(m, logs, seed, url, latency_s, concurrency) for m in ("unprobed", "sequential", "pipelined")}
        finally:
            if proc is not None:
                proc.terminate()
                await proc.wait()
        recs = list(iter_probe_records(logs / "pipelined"))
        pc = runs["pipelined"]["cost"]["probes"]
        ac = runs["pipelined"]["cost"]["act"]
        probe_s = pc["latency_ms"] / pc["calls"] / 1000.0
        # an act costs what it costs in the unprobed game (latency + engine and bot work per turn)
        act_s = max(ac["latency_ms"] / ac["calls"] / 1000.0, runs["unprobed"]["wall_s"] / runs["unprobed"]["acts"])
        bound = critical_path(recs, runs["pipelined"]["steps"], ac["calls"], act_s, probe_s)
        same = [json.dumps({k: v for k, v in r.items() if k not in ("ts", "latency_ms", "cost", "probes", "backends", "config", "game_id")}, sort_keys=True)
                for r in read_jsonl(logs / "sequential" / "game.jsonl")] == [
               json.dumps({k: v for k, v in r.items() if k not in ("ts", "latency_ms", "cost", "probes", "backends", "config", "game_id")}, sort_keys=True)
                for r in read_jsonl(logs / "pipelined" / "game.jsonl")]  # fmt: skip
    seq, pipe = runs["sequential"]["wall_s"], runs["pipelined"]["wall_s"]
    return {
        "transport": "standin" if standin else "devserver-http",
        "latency_ms": latency_ms,
        "seed": seed,
        "seats": 7,
        "battery": "chained_en",
        "max_concurrency": concurrency,
        "acts": runs["pipelined"]["acts"],
        "probe_calls": pc["calls"],
        "rounds": runs["pipelined"]["rounds"],
        "unprobed_s": round(runs["unprobed"]["wall_s"], 3),
        "sequential_s": round(seq, 3),
        "pipelined_s": round(pipe, 3),
        "bound_s": round(bound, 3),
        "speedup_vs_sequential": round(seq / pipe, 2),
        "pipelined_over_bound": round(pipe / bound, 3),
        "max_in_flight": pc.get("max_in_flight"),
        "mean_probe_latency_ms": round(probe_s * 1000, 1),
        "act_cost_ms": round(act_s * 1000, 1),
        "same_game_in_every_mode": same,
        "targets_met": seq / pipe >= 5 and pipe / bound <= 1.3,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency-ms", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=64, help="ProbesConfig.max_concurrency of the pipelined run (config default: 16)")
    ap.add_argument("--standin", action="store_true", help="in-process sleeping bots instead of HTTP to the dev server")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    r = asyncio.run(bench(args.latency_ms, args.seed, args.concurrency, args.standin))
    if args.json:
        print(json.dumps(r))
        return 0
    print(f"7-seat classic game, seed {r['seed']}, chained_en battery, {r['acts']} acts + {r['probe_calls']} probe calls, "
          f"{r['latency_ms']:.0f} ms per call ({r['transport']}), max_concurrency {r['max_concurrency']}")  # fmt: skip
    print(f"  unprobed            {r['unprobed_s']:8.2f} s")
    print(f"  sequential probing  {r['sequential_s']:8.2f} s   (original schedule)")
    print(f"  pipelined probing   {r['pipelined_s']:8.2f} s   ({r['speedup_vs_sequential']}x faster than sequential, max {r['max_in_flight']} in flight)")
    print(f"  critical-path bound {r['bound_s']:8.2f} s   (pipelined = {r['pipelined_over_bound']}x the bound)")
    print(f"  same game in every mode: {r['same_game_in_every_mode']}; targets (>=5x, <=1.3x bound) met: {r['targets_met']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
