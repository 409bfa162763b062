"""The one runner underneath every multi-game front end: a ledger, claims, and an executor.

``study run``, ``batch``, ``arena run``, ``validate ab`` and fork batches each turn their
arguments into a list of :class:`Job` (game id, seed, arm, index, where the game's directory
goes, and the row fields their outputs need) plus a header whose ``spec_hash`` says what
decides the games, then call :func:`run_games`. It

* writes (or, when it exists with the same hash, reuses) the study ledger in ``ledger_dir``
  (:mod:`.ledger`: pending / running / finished / failed / invalid rows, one atomic append each),
* claims each next game under the ledger's lock, so two runners never take one game, and
  resumes exactly where a run stopped: never-started games, games of a dead runner (their
  partial directory removed and replayed from scratch; one that died after its last move,
  while its probe calls drained, only gets those calls and its game_over) and failed games,
* plays them on the local or Ray executor (:mod:`mafiascope.play.executors`), or with the
  front end's own ``play`` coroutine (fork branches continue a saved state), and
* settles each row from the game's own logs: ``invalid`` when ``game_over.invalid`` (over the
  fault budget: counted, excluded from every front end's results), ``finished``, or ``failed``.

Front ends then build their outputs from the ledger's rows (:func:`settled`), so a resumed run
reports every game it holds, not only those played now.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..backends.registry import run_closing
from ..config import GameConfig, redact
from ..logs.paths import safe_rmtree
from ..probes.pending import needs_finishing
from ..provenance import content_hash
from .executors import WAITING
from .ledger import DONE, Runner, StudyLedger, Wait
from .usage import game_usage, money, totals

Admit = Callable[[dict[str, Any], dict[str, dict[str, Any]]], "str | dict[str, Any] | None"]
TopUp = Callable[[dict[str, Any], dict[str, dict[str, Any]], dict[str, float]], "dict[str, Any] | None"]


class RunnerError(ValueError):
    """A user-facing runner problem (another study in this ledger directory, an unknown executor ...)."""


@dataclass
class Job:
    """One game the runner may play. ``logs_dir``: the directory its game directory goes under
    (default: the runner's ``games_dir``); ``fields``: extra row fields (rules, seats, pair ...)."""

    game_id: str
    seed: int
    arm: str = "main"
    index: int = 0
    logs_dir: Path | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    allowance: Any = None  # its share of a hard budget while it runs (play/spend.py Allowance), set at its claim
    finish_probes: bool = False  # its moves are all logged: only its pending probe calls and game_over are missing

    def row(self) -> dict[str, Any]:
        return {"game_id": self.game_id, "arm": self.arm, "index": self.index, "seed": self.seed, **self.fields}


@dataclass
class RunOutcome:
    rows: dict[str, dict[str, Any]]  # every row of the ledger after the run, schedule order
    started: list[str]  # games this call claimed
    stopped: str | None  # why it stopped early (the budget), else None
    seconds: float
    created: bool  # the ledger was written by this call


def spec_hash(fingerprint: Any) -> str:
    """The hash of what decides a run's games (secrets redacted first, so a key never reaches a ledger)."""
    return content_hash(redact(fingerprint))


def config_fingerprint(cfg: GameConfig) -> dict[str, Any]:
    return redact(cfg.model_dump(mode="json"))


def settled(rows: dict[str, dict[str, Any]], state: str | tuple[str, ...] = DONE) -> list[dict[str, Any]]:
    states = (state,) if isinstance(state, str) else state
    return [r for r in rows.values() if r.get("state") in states]


def settle_game(ledger: StudyLedger, runner: Runner, game_id: str, out: dict[str, Any] | BaseException, gdir: Path,
                  prices: dict[str, Any]) -> tuple[str, float]:  # fmt: skip
    """Write a played game's ledger row: ``failed`` (an exception), ``cut`` (a budget's hard cap stopped it:
    ``game_over.cut``), ``invalid`` (its ``game_over`` says ``invalid: true``: over the fault budget) or
    ``finished``, with its usage per backend, its money and, under a budget, what its calls were charged
    (``metered``). Cut and invalid games are counted, their spend included, and excluded from results.
    Returns (state, money)."""
    if isinstance(out, BaseException):
        metered = getattr(out, "metered", None)  # what it spent under a budget still counts
        kind = getattr(out, "error_type", None) or type(out).__name__
        extra: dict[str, Any] = (
            {"metered": metered, "money": round(float(metered["money"]), 6)} if isinstance(metered, dict) else {}
        )
        ledger.settle(game_id, runner, "failed", error=f"{kind}: {out}"[:500], error_type=kind, **extra)
        return "failed", float(extra.get("money") or 0.0)
    use = game_usage(gdir)
    over = use["game_over"] or {}
    cut = over.get("cut") or out.get("cut")
    state = "cut" if cut else "invalid" if (over.get("invalid") or out.get("invalid")) else "finished"
    spend = money(use["by_backend"], prices)
    fields = {k: out.get(k) for k in ("winner", "rounds", "reason", "faults", "acts", "seconds")}
    if state != "finished":
        fields["invalid_reason"] = over.get("invalid_reason") or out.get("invalid_reason")
    if cut:
        fields["cut"] = cut
    if isinstance(out.get("metered"), dict):
        fields["metered"] = out["metered"]
    ledger.settle(
        game_id, runner, state, **fields, usage=totals(use["by_backend"]), by_backend=use["by_backend"], money=round(spend, 6)
    )
    return state, spend


class _Run:
    """One call of the runner: the ledger, this process's runner lock, claims and settles."""

    def __init__(self, ledger_dir: str | Path, header: dict[str, Any], jobs: list[Job], games_dir: str | Path, *,
                 admit: Admit | None, limit: int | None, prices: dict[str, Any] | None, owns_game_dirs: bool,
                 top_up: TopUp | None = None, executor: str = "local", on_claim: Callable[[Job], None] | None,
                 on_settle: Callable[[Job, str, dict[str, Any] | BaseException, float], None] | None,
                 on_ledger: Callable[[StudyLedger, bool], None] | None) -> None:  # fmt: skip
        self.games_dir = Path(games_dir)
        self.by_id = {j.game_id: j for j in jobs}
        if len(self.by_id) != len(jobs):
            raise RunnerError("two jobs share a game id")
        self.ledger = StudyLedger(ledger_dir)
        try:
            self.created = self.ledger.init(header, [j.row() for j in jobs])
        except ValueError as exc:
            raise RunnerError(str(exc)) from None
        if on_ledger is not None:
            on_ledger(self.ledger, self.created)
        self.admit, self.limit, self.prices, self.owns = admit, limit, prices or {}, owns_game_dirs
        self.top_up, self.executor = top_up, executor
        self.on_claim, self.on_settle = on_claim, on_settle
        self.started: list[str] = []
        self.stop: str | None = None
        self.t0 = time.time()
        self.runner = Runner(self.ledger.dir)

    def gdir(self, j: Job) -> Path:
        return Path(j.logs_dir or self.games_dir) / j.game_id

    def next_game(self) -> Job | None | Any:  # or WAITING (executors.py): ask again after a settle
        while True:
            if self.stop or (self.limit is not None and len(self.started) >= self.limit):
                return None
            row, refused = self.ledger.claim(self.runner, self.admit)
            if row is None:
                if isinstance(refused, Wait):
                    return WAITING
                if refused:
                    self.stop = refused
                    self.ledger.append({"event": "stop", "runner": self.runner.id, "reason": refused})
                return None
            job = self.by_id.get(row["game_id"])
            if job is None:  # a row no front end scheduled (a hand-edited ledger): settled, never played or crashed on
                self.ledger.settle(row["game_id"], self.runner, "failed", error="not in this run's schedule",
                                   error_type="NotScheduled")  # fmt: skip
                continue
            path = self.gdir(job)
            ours = self.owns or (int(row.get("attempts") or 0) > 0 and row.get("error_type") != "GameDirTaken")
            if ours and int(row.get("attempts") or 0) > 0 and not path.is_symlink() and needs_finishing(path):
                job = dataclasses.replace(job, finish_probes=True)  # died draining its probes: its moves are kept
            elif ours and (path.exists() or path.is_symlink()):
                try:  # a game whose runner died, or a failed attempt: replayed from scratch
                    safe_rmtree(path.parent, path)
                except ValueError as exc:  # a symlink where the game's directory should be: never followed
                    self.record(job, exc)
                    continue
            job.allowance = self._allowance(job, row)
            self.started.append(job.game_id)
            if self.on_claim:
                self.on_claim(job)
            return job

    def _allowance(self, job: Job, row: dict[str, Any]) -> Any:
        """The game's share of a hard budget, when its claim granted one; on the local executor it may ask
        for more (a ``reserve`` record, granted by ``top_up``), a Ray worker plays with what it was given."""
        share = row.get("allowance")
        if not isinstance(share, dict):
            return None
        from .spend import Allowance

        more = None
        if self.top_up is not None and self.executor == "local":
            top_up = self.top_up

            def more(want: dict[str, float]) -> dict[str, Any] | None:
                return self.ledger.reserve(job.game_id, self.runner, lambda r, rows: top_up(r, rows, want))

        return Allowance(share.get("money"), share.get("calls"), self.prices, more)

    def record(self, j: Job, out: dict[str, Any] | BaseException) -> None:
        state, spend = settle_game(self.ledger, self.runner, j.game_id, out, self.gdir(j), self.prices)
        if self.on_settle:
            self.on_settle(j, state, out, spend)

    def outcome(self) -> RunOutcome:
        self.runner.close()
        return RunOutcome(self.ledger.rows(), self.started, self.stop, round(time.time() - self.t0, 3), self.created)


async def run_games_async(
    ledger_dir: str | Path,
    header: dict[str, Any],
    jobs: list[Job],
    cfg_of: Callable[[Job], GameConfig],
    *,
    games_dir: str | Path,
    parallel: int = 4,
    backend_factory: Callable[[GameConfig], dict[str, Any]] | None = None,
    play: Callable[[Job], Awaitable[dict[str, Any]]] | None = None,
    admit: Admit | None = None,
    top_up: TopUp | None = None,
    limit: int | None = None,
    prices: dict[str, Any] | None = None,
    owns_game_dirs: bool = False,
    on_claim: Callable[[Job], None] | None = None,
    on_settle: Callable[[Job, str, dict[str, Any] | BaseException, float], None] | None = None,
    on_ledger: Callable[[StudyLedger, bool], None] | None = None,
) -> RunOutcome:
    """Run (or continue) ``jobs`` through the ledger in ``ledger_dir`` on the local executor, in the
    running event loop (front ends that are coroutines: batch, validate ab, fork batches).

    ``header`` must hold ``spec_hash``; a ledger there with another hash is refused. ``admit(row,
    rows)`` may refuse the next game with a reason (the study budget): the run then writes a
    ``stop`` record and starts nothing more; a verdict with ``allowance`` makes the game play under
    that share of a hard budget (:mod:`.spend`), which ``top_up(row, rows, want)`` may raise. ``play(job)``: the front end's own game (fork branches
    continue a saved state) instead of a fresh ``play_game``. ``owns_game_dirs``: the games'
    directories belong to this run alone, so one left over is removed before a game is played;
    otherwise only the directory of a game this ledger attempted before is removed (another
    writer's game with the same id is never touched: the engine refuses it, the row is ``failed``
    with ``error_type: GameDirTaken``, and a later run leaves that directory alone too). ``on_ledger(ledger, created)`` runs once the
    ledger exists, before any claim (an old front-end ledger is imported there)."""
    from .executors import execute_local

    run = _Run(ledger_dir, header, jobs, games_dir, admit=admit, limit=limit, prices=prices, owns_game_dirs=owns_game_dirs,
               top_up=top_up, on_claim=on_claim, on_settle=on_settle, on_ledger=on_ledger)  # fmt: skip
    try:
        await execute_local(run.next_game, cfg_of, run.games_dir, max(1, parallel), backend_factory, run.record, play=play)
    finally:
        run.runner.close()
    return run.outcome()


def run_games(
    ledger_dir: str | Path,
    header: dict[str, Any],
    jobs: list[Job],
    cfg_of: Callable[[Job], GameConfig],
    *,
    games_dir: str | Path,
    executor: str = "local",
    parallel: int = 4,
    address: str | None = None,
    backend_factory: Callable[[GameConfig], dict[str, Any]] | None = None,
    admit: Admit | None = None,
    top_up: TopUp | None = None,
    limit: int | None = None,
    prices: dict[str, Any] | None = None,
    owns_game_dirs: bool = False,
    on_claim: Callable[[Job], None] | None = None,
    on_settle: Callable[[Job, str, dict[str, Any] | BaseException, float], None] | None = None,
    on_ledger: Callable[[StudyLedger, bool], None] | None = None,
) -> RunOutcome:
    """:func:`run_games_async` from synchronous code, on the local executor or on Ray (``address``:
    a cluster, else a local instance; the driver alone claims games and writes the ledger)."""
    from .executors import ExecutorError, execute_ray

    if executor not in ("local", "ray"):
        raise RunnerError(f"executor: {executor!r} is not supported; choose local or ray")
    kw: dict[str, Any] = dict(admit=admit, top_up=top_up, limit=limit, prices=prices, owns_game_dirs=owns_game_dirs,
                              on_claim=on_claim, on_settle=on_settle, on_ledger=on_ledger)  # fmt: skip
    if executor == "local":
        return run_closing(run_games_async(ledger_dir, header, jobs, cfg_of, games_dir=games_dir, parallel=parallel,
                                           backend_factory=backend_factory, **kw))  # fmt: skip
    run = _Run(ledger_dir, header, jobs, games_dir, executor="ray", **kw)
    try:
        execute_ray(run.next_game, cfg_of, run.games_dir, max(1, parallel), address, run.record)
    except ExecutorError as exc:
        raise RunnerError(str(exc)) from None
    finally:
        run.runner.close()
    return run.outcome()
