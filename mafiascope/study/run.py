"""``study run``: preflight, the ledger, and the Arena's local or Ray executor under a budget.

A study directory holds ``spec.json`` (the validated spec, secrets redacted), ``plan.json``
(schedule and estimate before anything ran), ``ledger.jsonl`` (:mod:`.ledger`) and the games
under ``games/<game id>/``. Running the same spec again continues where it stopped: games
never started, games whose runner died (replayed from scratch) and failed games (retried).
The budget is a hard cap: a game starts only if its expected cost fits in the budget nobody holds,
and plays under an allowance its calls reserve their worst case from (mafiascope/play/spend.py);
else the run stops cleanly and the remaining games stay pending, and a game the budget cannot carry
on is cut.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..backends.specs import Source, file_source
from ..config import SECRET_KEYS, ConfigError, GameConfig
from ..logs.io import loads_line
from ..play.ledger import DONE, WAIT, Runner, StudyLedger, held, runner_alive
from ..play.runner import Job, RunnerError, run_games, settle_game
from ..provenance import provenance
from .estimate import estimate_study
from .schedule import StudyGame, game_config, study_schedule
from .spec import StudySpec, parse_study_spec

GAMES_DIR = "games"
SPEC_FILE = "spec.json"
PLAN_FILE = "plan.json"


class StudyError(ValueError):
    """A user-facing study problem (one line: names the backend, field or directory)."""


# ---------------------------------------------------------------------- preflight


def _preflight(spec: StudySpec) -> None:
    """Check every backend the study seats before anything is written: its entry builds and every
    ``${VAR}`` secret it names is set and allowed for its URL (building resolves it: backends/clients.py).
    (The live backend preflight, ``run_preflight``, goes here.)"""
    from ..backends.base import BackendError
    from ..backends.registry import build_backend

    used = {b for arm in spec.arms for b in arm.lineup.names()}
    for name in sorted(used):
        entry = spec.backends[name].entry
        for key in SECRET_KEYS & set(entry):
            if entry[key] == "***":
                raise StudyError(f"backends.{name}.{key}: the key was written into the spec itself and is not kept in the "
                                 "study directory; run the spec YAML (better: api_key: \"${VAR}\")")  # fmt: skip
        try:
            build_backend(name, spec.backend_spec(name))
        except (BackendError, ValueError) as exc:
            raise StudyError(f"backends.{name}: {' '.join(str(exc).split())}") from None


# ---------------------------------------------------------------------- the plan


def plan_study(spec: StudySpec, rows: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Schedule and estimate (per arm and total), stamped with provenance."""
    schedule = study_schedule(spec)
    return {
        "study": spec.name,
        "spec_hash": spec.spec_hash(),
        "games": len(schedule),
        "arms": [
            {
                "name": a.name,
                "rules": a.rules,
                "language": a.language,
                "probes": a.probes,
                "lineup": a.lineup.mode,
                "games": spec.games_of(a),
            }
            for a in spec.arms
        ],  # fmt: skip
        "budget": spec.budget.model_dump(),
        "executor": spec.executor.model_dump(),
        "schedule": [g.as_dict() for g in schedule],
        "estimate": estimate_study(spec, schedule, rows),
        "provenance": provenance({"spec_hash": spec.spec_hash(), "seed": spec.seed}),
    }


def shipped_study(ref: str | Path) -> Path | None:
    """A study spec shipped in the package (``configs/studies/``), named as ``run -c`` names configs:
    ``bots_quick``, ``studies/bots_quick.yaml`` or ``configs/studies/bots_quick.yaml``."""
    from ..config import shipped_config

    found = shipped_config(ref)
    if found is None and len(Path(ref).parts) == 1:
        found = shipped_config(Path("studies") / ref)
    return found


def shipped_studies() -> list[str]:
    from ..config import CONFIG_DIR

    return sorted(p.stem for p in (CONFIG_DIR / "studies").glob("*.yaml"))


def load_study(path: str | Path) -> tuple[StudySpec, Path]:
    """A spec YAML (its study directory from ``out:``), a study directory (its saved ``spec.json``), or the
    name of a shipped spec (:func:`shipped_study`) when ``path`` is neither a file nor a directory here.

    Only a spec YAML named here is the operator's (:func:`~mafiascope.backends.keys.file_source`); a study
    directory's saved spec (``spec.json``, or the ``spec.yaml`` the app saved there) may have been written by
    anyone, so its ``${VAR}`` keys reach only their providers unless a key policy says otherwise."""
    from .spec import load_study_spec

    p = Path(path)
    if not p.exists() and not p.is_absolute():
        p = shipped_study(p) or p
    if not p.exists():
        raise StudyError(f"{path}: no such study spec or study directory, and no shipped study of that name "
                         f"(shipped: {', '.join(shipped_studies())})")  # fmt: skip
    if p.is_dir() and not (p / SPEC_FILE).is_file() and (p / "spec.yaml").is_file():  # saved by the app, not run yet
        try:
            return load_study_spec(p / "spec.yaml"), p
        except ConfigError as exc:
            raise StudyError(str(exc)) from None
    if p.is_dir():
        if not (p / SPEC_FILE).is_file():
            raise StudyError(f"{p}: not a study directory (no {SPEC_FILE}); give the spec YAML")
        data = loads_line((p / SPEC_FILE).read_text(encoding="utf-8"))
        source = data.pop("source_path", None) or str(p / SPEC_FILE)
        try:
            return parse_study_spec(data, source), p
        except ConfigError as exc:
            raise StudyError(str(exc)) from None
    try:
        spec = load_study_spec(p, Source.STUDY if p.name == SPEC_FILE else file_source())
    except ConfigError as exc:
        raise StudyError(str(exc)) from None
    return spec, spec.study_dir()


def _write_json(path: Path, obj: Any) -> None:
    tmp = path.with_suffix(path.suffix + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(obj, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _saved_spec(spec: StudySpec) -> dict[str, Any]:
    from ..config import redact

    data = redact(spec.model_dump(mode="json", exclude={"source_path"}))
    for name, b in data["backends"].items():  # back to the YAML shape: the entry's keys, then price / latency_s
        data["backends"][name] = {**b.pop("entry"), **{k: v for k, v in b.items() if v is not None}}
    data["source_path"] = (
        str(Path(spec.source_path).resolve()) if spec.source_path and Path(spec.source_path).exists() else spec.source_path
    )
    return data


def _saved_spec_hash(study_dir: Path) -> str | None:
    try:
        data = loads_line((study_dir / SPEC_FILE).read_text(encoding="utf-8"))
        data.pop("source_path", None)
        return parse_study_spec(data, str(study_dir / SPEC_FILE)).spec_hash()
    except (OSError, ValueError):
        return None


def _grown_plan(spec: StudySpec, study_dir: Path) -> dict[str, Any]:
    """plan.json after the study grew: the new schedule; each arm keeps the estimate it was first planned
    with (what ``estimate_vs_actual`` compares against), a new arm gets its estimate now."""
    old = loads_line((study_dir / PLAN_FILE).read_text(encoding="utf-8"))
    new = plan_study(spec)
    was = old.get("estimate", {}).get("arms", {})
    for name, row in new["estimate"]["arms"].items():
        if name in was:
            new["estimate"]["arms"][name] = {**was[name], "games_now": row["games"]}
    new["grown"] = [*old.get("grown", []), {"spec_hash": spec.spec_hash(), "games": new["games"], "from_games": old.get("games"),
                                            "arms_added": sorted(set(new["estimate"]["arms"]) - set(was))}]  # fmt: skip
    new["first_provenance"] = old.get("first_provenance") or old.get("provenance")
    return new


# ---------------------------------------------------------------------- running


# A game's allowance, in multiples of its arm's expected cost: the local executor tops it up from free
# budget when a game needs more, a Ray worker cannot ask, so it starts with more.
ALLOWANCE_FACTOR = {"local": 1.5, "ray": 3.0}


class _Budget:
    """The budget as a hard cap (docs/studies.md, "Budget"): a game is admitted only if its expected cost
    fits in the budget nobody holds (the cap less what every attempt spent and what running games hold),
    and it plays under an allowance of that free budget (``ALLOWANCE_FACTOR`` x expected, at most all of
    it), which its calls draw on call by call (mafiascope/play/spend.py) and ``top_up`` may raise."""

    def __init__(self, spec: StudySpec, schedule: list[StudyGame], rows: dict[str, dict[str, Any]], ledger: StudyLedger,
                 executor: str) -> None:  # fmt: skip
        self.spec, self.schedule, self.ledger = spec, schedule, ledger
        self.factor = ALLOWANCE_FACTOR.get(executor, ALLOWANCE_FACTOR["ray"])
        self.per_game: dict[str, dict[str, float]] = {}
        self.refresh(rows)

    def refresh(self, rows: dict[str, dict[str, Any]]) -> None:
        est = estimate_study(self.spec, self.schedule, rows)
        self.per_game = {
            arm: {"money": r["per_game"]["money"], "calls": r["per_game"]["calls"]} for arm, r in est["arms"].items()
        }

    def _free(self, rows: dict[str, dict[str, Any]]) -> tuple[float, float, float, float]:
        """(money spent, money held, calls spent, calls held) by every attempt (called under the ledger's lock).
        A running game of a runner that died counts its allowance as spent: it is claimed again later."""
        spent_m, spent_c = self.ledger.spent()
        held_m = held_c = 0.0
        alive: dict[str, bool] = {}
        for r in rows.values():
            if r.get("state") == "running":
                rid = str(r.get("runner"))
                alive.setdefault(rid, runner_alive(self.ledger.dir, rid))
                m, c = held(r)
                if alive[rid]:
                    held_m, held_c = held_m + m, held_c + c
                else:
                    spent_m, spent_c = spent_m + m, spent_c + c
        return spent_m, held_m, spent_c, held_c

    def __call__(self, row: dict[str, Any], rows: dict[str, dict[str, Any]]) -> str | dict[str, Any]:
        """Stop when the game does not fit even if the games in flight cost what they are expected to; wait
        (:data:`WAIT`) while it fits only once their allowances are freed; else admit it with an allowance."""
        exp = self.per_game.get(row["arm"], {"money": 0.0, "calls": 0.0})
        spent_m, held_m, spent_c, held_c = self._free(rows)
        fly = [
            r.get("expected") or {}
            for r in rows.values()
            if r.get("state") == "running" and runner_alive(self.ledger.dir, str(r.get("runner")))
        ]
        fly_m, fly_c = sum(float(e.get("money") or 0) for e in fly), sum(float(e.get("calls") or 0) for e in fly)
        b = self.spec.budget
        if b.money is not None and spent_m + fly_m + exp["money"] > b.money:
            return (f"budget: money {spent_m:.4f} spent + {fly_m:.4f} expected in flight + {exp['money']:.4f} expected "
                    f"for {row['game_id']} would exceed {b.money}")  # fmt: skip
        if b.calls is not None and spent_c + fly_c + exp["calls"] > b.calls:
            return (f"budget: calls {spent_c:.0f} made + {fly_c:.0f} expected in flight + {exp['calls']:.0f} expected "
                    f"for {row['game_id']} would exceed {b.calls}")  # fmt: skip
        if (b.money is not None and spent_m + held_m + exp["money"] > b.money) or (
            b.calls is not None and spent_c + held_c + exp["calls"] > b.calls
        ):
            return WAIT
        allowance = {"money": None if b.money is None else round(min(b.money - spent_m - held_m, self.factor * exp["money"]), 9),
                     "calls": None if b.calls is None else float(int(min(b.calls - spent_c - held_c, math.ceil(self.factor * exp["calls"]))))}  # fmt: skip
        return {"expected": {"money": round(exp["money"], 6), "calls": round(exp["calls"], 1)}, "allowance": allowance}

    def top_up(self, row: dict[str, Any], rows: dict[str, dict[str, Any]], want: dict[str, float]) -> dict[str, Any] | None:
        """A running game's allowance raised by ``want`` (at most what is free; None when the free budget
        cannot cover what it lacks, ``need_money`` / ``need_calls``)."""
        spent_m, held_m, spent_c, held_c = self._free(rows)
        cur = dict(row.get("allowance") or {})
        b = self.spec.budget
        if b.money is not None:
            free = b.money - spent_m - held_m
            if free + 1e-12 < want.get("need_money", 0.0):
                return None
            cur["money"] = round(
                float(cur.get("money") or 0.0) + min(free, max(want.get("money", 0.0), want.get("need_money", 0.0))), 9
            )
        if b.calls is not None:
            free_c = b.calls - spent_c - held_c
            if free_c < want.get("need_calls", 0.0):
                return None
            cur["calls"] = float(cur.get("calls") or 0.0) + float(
                int(min(free_c, max(want.get("calls", 0.0), want.get("need_calls", 0.0))))
            )
        return cur


class _Progress:
    """tqdm on stderr: games settled of the study, with spend and failures in the postfix."""

    def __init__(self, total: int, done: int, spent: float, quiet: bool):
        self.bar = None
        self.spent, self.failed, self.invalid, self.cut = spent, 0, 0, 0
        if not quiet:
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=done, unit="game", file=sys.stderr, dynamic_ncols=True, desc="study")
            self._post()

    def _post(self) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"spend {self.spent:.4f}, failed {self.failed}, invalid {self.invalid}, cut {self.cut}")

    def step(self, money_now: float, state: str) -> None:
        self.spent += money_now
        self.failed += state == "failed"
        self.invalid += state == "invalid"
        self.cut += state == "cut"
        if self.bar is not None:
            self.bar.update(1)
            self._post()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def settle_result(ledger: StudyLedger, runner: Runner, game_id: str, out: dict[str, Any] | BaseException, games_dir: Path,
                  prices: dict[str, Any]) -> tuple[str, float]:  # fmt: skip
    """A study game's settle (:func:`.runner.settle_game` on ``games_dir/<game id>``)."""
    return settle_game(ledger, runner, game_id, out, Path(games_dir) / game_id, prices)


def run_study(
    spec: StudySpec,
    study_dir: str | Path | None = None,
    *,
    executor: str | None = None,
    address: str | None = None,
    parallel: int | None = None,
    limit: int | None = None,
    quiet: bool = False,
    backend_factory: Callable[[GameConfig], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Run (or continue) a study; returns its summary. ``limit``: start at most this many games now."""
    study_dir = spec.study_dir(study_dir)
    kind = executor or spec.executor.kind
    par = parallel or spec.executor.parallel
    _preflight(spec)
    if kind not in ("local", "ray"):
        raise StudyError(f"executor: {kind!r} is not supported; choose local or ray")
    if kind == "ray":
        import importlib.util

        if importlib.util.find_spec("ray") is None:  # found before anything is written
            raise StudyError("--executor ray needs Ray: pip install 'mafiascope[ray]'")
    schedule = study_schedule(spec)
    header = {"name": spec.name, "spec_hash": spec.spec_hash(), "games": len(schedule), "arms": spec.arm_fingerprints(),
              "provenance": provenance({"spec_hash": spec.spec_hash(), "seed": spec.seed})}  # fmt: skip
    jobs = [Job(g.game_id, g.seed, g.arm, g.index, fields={"rules": g.rules}) for g in schedule]
    by_id = {g.game_id: g for g in schedule}
    games_dir = study_dir / GAMES_DIR
    prices = {b: s.price for b, s in spec.backends.items()}
    state: dict[str, Any] = {}

    def on_ledger(ledger: StudyLedger, created: bool) -> None:
        if created or not (study_dir / PLAN_FILE).is_file():
            _write_json(study_dir / SPEC_FILE, _saved_spec(spec))
            _write_json(study_dir / PLAN_FILE, plan_study(spec))
        elif (ledger.header() or {}).get("spec_hash") == spec.spec_hash() and _saved_spec_hash(study_dir) != spec.spec_hash():
            _write_json(study_dir / SPEC_FILE, _saved_spec(spec))  # the study grew (or its prices changed) now
            _write_json(study_dir / PLAN_FILE, _grown_plan(spec, study_dir))
        games_dir.mkdir(parents=True, exist_ok=True)
        rows0 = ledger.rows()
        state["ledger"], state["budget"] = ledger, _Budget(spec, schedule, rows0, ledger, kind)
        done = [r for r in rows0.values() if r.get("state") in DONE]
        state["progress"] = _Progress(len(schedule), len(done), sum(float(r.get("money") or 0) for r in done), quiet)

    def admit(row: dict[str, Any], rows: dict[str, dict[str, Any]]) -> str | dict[str, Any] | None:
        return state["budget"](row, rows) if (spec.budget.money or spec.budget.calls) else None

    def top_up(row: dict[str, Any], rows: dict[str, dict[str, Any]], want: dict[str, float]) -> dict[str, Any] | None:
        return state["budget"].top_up(row, rows, want)

    def on_settle(job: Job, st: str, out: Any, spend: float) -> None:
        state["progress"].step(spend, st)
        state["budget"].refresh(state["ledger"].rows())

    try:
        res = run_games(study_dir, header, jobs, lambda j: game_config(spec, by_id[j.game_id]), games_dir=games_dir,
                        executor=kind, parallel=par, address=address or spec.executor.address, backend_factory=backend_factory,
                        admit=admit, top_up=top_up, limit=limit, prices=prices, owns_game_dirs=True, on_settle=on_settle,
                        on_ledger=on_ledger)  # fmt: skip
    except RunnerError as exc:
        raise StudyError(str(exc)) from None
    finally:
        if "progress" in state:
            state["progress"].close()
    from .status import study_status

    st = study_status(spec, study_dir)
    return {**st, "played_now": len(res.started), "seconds_now": res.seconds, "stopped": res.stopped}
