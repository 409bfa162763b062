"""The single source of truth for every record mafiascope writes or reads.

Three JSONL files per game directory (``<logs>/<game_id>/``):

* ``game.jsonl``          -- :class:`Setup`, public events, private events (``visible_to``), :class:`GameOver`
* ``introspection.jsonl`` -- :class:`ProbeRecord`, one per probe call (stored compact since schema_version 3:
  read it with :func:`mafiascope.logs.io.iter_probe_records`, which yields this full shape)
* ``state.jsonl``         -- :class:`Snapshot`, one per resumable step

Field names follow the original MafiaScope logs wherever the concept is the same
(``kind``, ``round``, ``msg_seq``, ``public_msg_seq``, ``player_idx``, ``player_name``,
``probe_id``, ``answer_raw``, ``answer_parsed``, ``answer_parse_ok`` ...), so tools written
for either corpus read both. Every model allows extra fields, so the importer keeps the
original records losslessly and an older reader keeps a newer writer's fields; but every field our
own writers write is declared here (:func:`undeclared` finds any other, and tests/test_log_schema_writers.py
checks every record of every writer with it).

``SCHEMA_VERSION`` is bumped whenever a field changes meaning; readers accept every
version listed in ``SUPPORTED_SCHEMA_VERSIONS`` (tests/fixtures/logs holds one fixture per version).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from . import kinds as K
from .battery import BatterySnapshot

SCHEMA_VERSION = 3  # 2: compact snapshots in state.jsonl (deltas, derived contexts: logs/snapshots.py)
# 3: compact probe records in introspection.jsonl (logs/probe_codec.py); snapshots' probe memory refers to them
SUPPORTED_SCHEMA_VERSIONS = (0, 1, 2, 3)  # 0 = original MafiaScope logs (no schema_version field)

GAME_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")  # used with fullmatch: "$" would let a trailing newline through


def validate_game_id(game_id: str) -> str:
    """Return ``game_id`` if it is a safe directory name, else raise ValueError.

    Game ids come from URLs, CLI arguments and log files; none may contain path
    separators, ``..`` or start with a dot.
    """
    if not isinstance(game_id, str) or not GAME_ID_RE.fullmatch(game_id) or ".." in game_id:
        raise ValueError(
            f"invalid game id {game_id!r:.140}: use letters, digits, '.', '_' or '-' "
            "(no path separators, no leading dot, at most 128 characters)"
        )
    return game_id


# --------------------------------------------------------------------------- roles

ROLES = ("Mafia", "Don", "Doctor", "Sheriff", "Villager")
MAFIA_ROLES = frozenset({"Mafia", "Don"})
SIDE_MAFIA = "Mafia"
SIDE_TOWN = "Villagers"  # the original's name for the town side; kept for compatibility
DRAW = "Draw"


def side_of(role: str) -> str:
    return SIDE_MAFIA if role in MAFIA_ROLES else SIDE_TOWN


class Record(BaseModel):
    """Base of every record: unknown fields are kept (lossless import, forward compatibility)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


def undeclared(record: BaseModel, where: str = "") -> list[str]:
    """The paths of the fields of a validated record, nested records included, that its model does not
    declare (kept by ``extra="allow"``): empty for every record our writers produce."""
    out = [f"{where}{k}" for k in (record.model_extra or {})]
    for name in type(record).model_fields:
        out += _undeclared_in(getattr(record, name), f"{where}{name}")
    return out


def _undeclared_in(value: Any, where: str) -> list[str]:
    if isinstance(value, BaseModel):
        return undeclared(value, where + ".")
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _undeclared_in(v, f"{where}[{i}]")]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _undeclared_in(v, f"{where}.{k}")]
    return []


# --------------------------------------------------------------------------- setup


class Personality(Record):
    O: int = 50  # noqa: E741 - the Big Five letters (OCEAN), as the logs name them
    C: int = 50
    E: int = 50
    A: int = 50
    N: int = 50

    @field_validator("O", "C", "E", "A", "N", mode="before")
    @classmethod
    def _clip(cls, v: Any) -> int:
        v = int(round(float(v)))
        if not 0 <= v <= 100:
            raise ValueError("Big Five traits are 0-100")
        return v


class SeatInfo(Record):
    """One seat as recorded in ``setup.players`` (original field names: model, backend)."""

    name: str
    role: str = ""  # hand-made logs may leave it out; the engine always writes it
    model: str = ""  # model label shown to researchers
    backend: str = ""  # backend registry name
    personality: Personality = Field(default_factory=Personality)
    idx: int | None = None
    language: str | None = None
    preset: str | None = None  # offline bot preset, when the backend is a bot


class ResumePoint(Record):
    point: list[int]
    ts: float


class Setup(Record):
    game_id: str
    kind: Literal["setup"] = "setup"
    round: int = 0
    ts: float = 0.0
    players: list[SeatInfo]
    schema_version: int = SCHEMA_VERSION
    library_version: str | None = None
    rule_set: str | None = None  # e.g. "classic", "sport", "open_table", "imbalanced"
    rules: dict[str, Any] | None = None  # the full RuleSet as data
    seed: int | None = None
    language: str | None = None
    game_type: str | None = None
    config: dict[str, Any] | None = None  # config snapshot (secrets removed)
    backends: dict[str, dict[str, Any]] | None = None  # provenance per backend, no secrets
    probes: BatterySnapshot | None = None  # the probe battery as recorded (every shape old logs hold)
    # fork / resume metadata (absent or null on root games; docs/replay.md)
    forked_from: str | None = None
    fork_point: list[int] | None = None  # the parent step whose snapshot the branch restarted from
    fork_batch_id: str | None = None
    replica_idx: int | None = None
    intervention: dict[str, Any] | None = None
    fork_seed: int | None = None  # the branch's state seed
    fork_keep_seed: bool | None = None  # the parent's seed and counters were kept
    fork_probes: str | None = None  # "full" | "suspicion" | "none"
    inherited_events: int | None = None  # events copied from the parent (``inherited: true``)
    parent_seed: int | None = None
    experiment: str | None = None  # the attribution or bifurcation experiment the branch belongs to
    utterance: list[int] | None = None  # attribution: the step of the utterance the arm is about
    arm: str | None = None  # attribution: "pre" | "post"
    imported_from: dict[str, Any] | None = None  # `mafiascope import`: {format, source} of an original log
    resume_of: str | None = None
    resume_point: list[int] | None = None  # the step the last resume continued from
    resumes: list[ResumePoint] | None = None  # every resume of the game, in order
    feedback_to_context: bool | None = None  # original MafiaScope logs: probe answers fed back to the seats


# --------------------------------------------------------------------------- events

# Kinds with a speaker and a free-text reply; each occupies one msg_seq (constants: logs/kinds.py).
UTTERANCE_KINDS = K.UTTERANCE_KINDS
NIGHT_ACTION_KINDS = K.NIGHT_ACTION_KINDS


class Event(Record):
    """Any game.jsonl record other than setup; ``visible_to`` None means public."""

    game_id: str
    kind: str
    round: int = 0
    ts: float = 0.0
    msg_seq: int | None = None
    visible_to: list[str] | None = None
    inherited: bool = False  # a fork's copy of its parent's event


class Fault(Record):
    """A backend failure that was absorbed: the move fell back to a logged default."""

    error: str
    attempts: int = 1
    fallback: str  # e.g. "abstain", "skip_speech", "random_target"
    fatal: bool = False  # retrying cannot help (e.g. HTTP 401/404): batches may stop early


class Utterance(Event):
    """A seat's reply: intro, speech, vote, night action, last words ..."""

    player: str
    player_idx: int | None = None
    response: str = ""  # always written by the engine; hand-made logs may leave it out
    prompt: str | None = None  # the instruction the seat received for this turn
    # parsed action / vote (None for plain speech)
    action: str | None = None  # "kill" | "protect" | "check" | "vote" | "nominate" ...
    target: str | None = None
    target_valid: bool | None = None
    parse_note: str | None = None  # how the target was read, or why it could not be
    targets: list[str] | None = None  # a list move as read (best-move suspects, nominations)
    fault: Fault | None = None
    retried_faults: list[dict[str, Any]] | None = None  # transport faults absorbed by retries before this reply
    reask: bool = False  # the first reply was empty/garbage and the seat was asked again
    first_reply: str | None = None  # ... and what it said the first time
    nominations: list[str] | None = None
    nomination_note: str | None = None  # ten-seat rules: why a nomination did not count ("already nominated")
    passed: bool = False  # ten-seat rules: the seat passed its turn on the open floor
    suspects: list[str] | None = None  # best move (ten-seat rules)
    ballot: str | None = None  # ten-seat rules: the vote stage this vote belongs to ("vote", "runoff", "remove_all")
    order: list[str] | None = None  # ten-seat rules: the Don's shot order as read from this reply
    tally_target: str | None = None  # imported original logs: whom the original's tally counted this vote for
    latency_ms: int | None = None


class SheriffResult(Event):
    kind: Literal["night_sheriff_result"] = "night_sheriff_result"
    sheriff: str
    checked: str
    result: str  # "Mafia" | "Not Mafia"


class DonResult(Event):
    kind: Literal["night_don_result"] = "night_don_result"
    don: str
    checked: str
    result: str  # "Sheriff" | "Not Sheriff"


class NightKill(Event):
    kind: Literal["night_kill"] = "night_kill"
    victim: str
    first_shot: bool = False  # ten-seat rules: the game's first night kill (the victim gets the best move)


class NightSave(Event):
    kind: Literal["night_save"] = "night_save"
    saved: str


class NightNoKill(Event):
    kind: Literal["night_no_kill"] = "night_no_kill"
    reason: str = ""  # "no_target" | "split_shot" ...
    missed: bool = False  # ten-seat rules: the Mafia shot at different players (a split shot)


class NightAnalysis(Event):
    kind: Literal["night_analysis"] = "night_analysis"
    night_result: str


class VoteTally(Event):
    kind: Literal["vote_tally"] = "vote_tally"
    tally: dict[str, int]
    votes: dict[str, str]  # voter -> target, valid votes only (as in the original)
    invalid: dict[str, str] = Field(default_factory=dict)  # voter -> raw reason
    stage: str | None = None  # "vote", "revote", "remove_all" ...
    candidates: list[str] | None = None  # ten-seat rules: who could be voted for at this stage


class DayEliminate(Event):
    kind: Literal["day_eliminate"] = "day_eliminate"
    eliminated: str
    role: str
    votes: int
    revealed: bool = False
    reason: str | None = None  # ten-seat rules: how the seat left ("vote", "remove_all" ...)


class NoElimination(Event):
    kind: Literal["no_elimination"] = "no_elimination"
    reason: str  # "tie" | "no_valid_votes" | "no_vote_day" ...
    tied: list[str] | None = None  # the players tied at the top


class Nomination(Event):
    """Tournament rules: a seat put another up for the vote."""

    kind: Literal["nomination"] = "nomination"
    nominator: str
    nominee: str


class NightShots(Event):
    """Tournament rules: each Mafioso's shot (None = no shot) and whether they agreed."""

    kind: Literal["night_shots"] = "night_shots"
    shots: dict[str, str | None] = Field(default_factory=dict)
    landed: bool = False


class ShotOrder(Event):
    """Tournament rules: the Don's order of targets for the nights to come (Mafia only)."""

    kind: Literal["shot_order"] = "shot_order"
    don: str
    order: list[str] = Field(default_factory=list)


class HostLine(Event):
    kind: Literal["host"] = "host"
    text: str
    template: str | None = None  # the host text pack's key the line was made from
    host: str | None = None  # "template", or the model label of the backend that retold it
    template_text: str | None = None  # the template's line, when a backend retold it
    host_error: str | None = None  # why the backend's retelling was not used (the template's line was)


class GameOver(Event):
    kind: Literal["game_over"] = "game_over"
    winner: str  # "Mafia" | "Villagers" | "Draw"
    reason: str = ""  # "no_mafia_left" | "mafia_parity" | "round_cap"
    roles: dict[str, str] | None = None
    backends: dict[str, dict[str, Any]] | None = None
    cost: dict[str, Any] | None = None
    faults: int = 0
    # fault budget (engine/faults.py); absent on old logs
    moves: int | None = None  # seat turns of the game
    moves_fell_back: int | None = None  # of which the backend failed and the engine fell back
    fault_budget: float | None = None
    invalid: bool = False  # more than fault_budget of the moves fell back: not data
    invalid_reason: str | None = None  # "<k> of <n> moves fell back (> 20%): <first causes>"
    # probe-loss budget (engine/faults.py judge_probes); absent on unprobed games and old logs
    probes_scheduled: int | None = None  # probe calls the battery asked for
    probes_lost: int | None = None  # of which failed or skipped (no answer)
    probe_loss_budget: float | None = None
    cut: str | None = None  # why a study's budget cap stopped the game (winner "", reason "budget_cut", invalid)
    # failed probe calls are in cost.probes.errors and never count toward the budget


EVENT_MODELS: dict[str, type[Event]] = {k: Utterance for k in UTTERANCE_KINDS}
EVENT_MODELS.update(
    {
        "night_sheriff_result": SheriffResult,
        "night_don_result": DonResult,
        "night_kill": NightKill,
        "night_save": NightSave,
        "night_no_kill": NightNoKill,
        "night_analysis": NightAnalysis,
        "vote_tally": VoteTally,
        "day_eliminate": DayEliminate,
        "no_elimination": NoElimination,
        "nomination": Nomination,
        "night_shots": NightShots,
        "shot_order": ShotOrder,
        "host": HostLine,
        "game_over": GameOver,
    }
)


# --------------------------------------------------------------------------- probes


class ProbeRecord(Record):
    """One probe call (introspection.jsonl). Key: (round, public_msg_seq, player_idx, probe_seq)."""

    timestamp: float = 0.0
    game_id: str
    round: int
    public_msg_seq: int  # -1 = round end
    player_idx: int
    player_name: str
    probe_seq: int
    probe_id: str
    question: str = ""
    answer_raw: str | None = None
    answer_parsed: Any = None
    answer_parse_ok: bool = False
    answer_repaired: bool = False  # parse needed fence stripping / truncation repair
    answer_valid: bool | None = None  # parsed value matched the probe's expected shape
    model: str = ""
    role: str = ""
    phase: str = ""
    latency_ms: int | None = None
    chain_used_raw_fallback: bool = False
    error: str | None = None  # transport failure; answer_raw stays None
    speaker: bool | None = None  # the probed seat produced the step's message
    tokens_prompt: int | None = None
    tokens_completion: int | None = None
    tokens_estimated: bool | None = None
    # written by our probe engine since schema 1 (docs/probes.md)
    step_index: int | None = None  # the game step the question was asked at (0 = first)
    when: str | None = None  # the step kind that asked it: "after_each_message" | "after_night_action" | "after_round"
    answer_norm: Any = None  # the answer normalised to its shape or declared schema (names matched to seats)
    think_stripped: bool | None = None  # a <think> block was removed before parsing
    finished_ts: float | None = None  # when the answer arrived
    attempts: int | None = None  # transport attempts of the call
    lagged: bool = False  # not asked: the backend's probe queue was over probes.max_lag_s
    inherited: bool = False  # a fork's copy of its parent's record


# --------------------------------------------------------------------------- snapshots


class Pending(Record):
    """Where the state machine stood (mafiascope.engine.state.Pending)."""

    stage: str
    remaining: list[str] = Field(default_factory=list)
    mafia_targets: list[str] = Field(default_factory=list)
    protected: str | None = None
    check: str | None = None
    votes: dict[str, str] = Field(default_factory=dict)
    invalid: dict[str, str] = Field(default_factory=dict)
    data: dict[str, Any] = Field(default_factory=dict)  # rule-family specific scratch


class SnapshotPlayer(Record):
    name: str
    idx: int
    role: str
    backend_name: str = ""
    model_label: str = ""
    personality: Personality = Field(default_factory=Personality)
    language: str = "en"
    alive: bool = True
    messages: list[dict[str, str]] = Field(default_factory=list)


class Snapshot(Record):
    """Everything needed to continue a game from this step (state.jsonl).

    ``state`` holds the engine's own serialised :class:`mafiascope.engine.state.GameState`;
    ``players[].messages`` are the seats' acting contexts (for audits and the original's tools).
    Since schema_version 2 the file stores deltas; read it with ``GameLog.snapshots()``
    (mafiascope.logs.snapshots) or :func:`mafiascope.engine.snapshots.iter_snapshots`, which yield this full shape.
    """

    game_id: str
    round: int
    msg_seq: int  # -1 = round end
    phase: str
    pending: Pending | None = None
    night_result: str | None = None
    sheriff_checks: dict[str, str] = Field(default_factory=dict)
    alive: list[str] = Field(default_factory=list)
    players: list[SnapshotPlayer] = Field(default_factory=list)
    ts: float = 0.0
    step_index: int | None = None
    state: dict[str, Any] | None = None
    probe_memory: dict[str, Any] | None = None
    schema_version: int = SCHEMA_VERSION
    # compact records (schema_version 2, mafiascope/engine/snapshots.py): state.events holds only the
    # events after the first `events_from`; players[].messages are derived from the state
    events_from: int | None = None
    contexts: str | None = None
    inherited: bool = False  # a fork's copy of its parent's snapshot


def parse_event(d: dict[str, Any]) -> Setup | Event:
    """Validate one game.jsonl object into its typed record (unknown kinds stay generic)."""
    kind = d.get("kind")
    if kind == "setup":
        return Setup.model_validate(d)
    model = EVENT_MODELS.get(kind, Event) if isinstance(kind, str) else Event
    return model.model_validate(d)


# --------------------------------------------------------------------------- run files
# The JSONL files that schedule and follow games rather than record them: a study's ledger
# (``<study>/ledger.jsonl``, mafiascope/play/ledger.py: every front end's runner ledger), an Arena
# run's ledger (``<run>/ledger.jsonl``, mafiascope/arena/ledger.py) and an experiment's progress file
# (``--progress FILE``, mafiascope/replay/progress.py; ``fork-<id>.progress.jsonl``). Each record is
# checked against its model here when it is written (:func:`run_record`), like the game's own records.


class RunRecord(Record):
    event: str
    ts: float | None = None


class GameResult(RunRecord):
    """A played game's outcome as the runner reports it (mafiascope/play/executors.py)."""

    winner: str | None = None
    rounds: int | None = None
    reason: str | None = None
    faults: int | None = None
    acts: int | None = None
    seconds: float | None = None
    invalid: bool | None = None
    invalid_reason: str | None = None
    cut: str | None = None  # stopped by a budget's hard cap
    metered: dict[str, Any] | None = None  # what its calls were charged under a budget (play/spend.py)


class StudyHeader(RunRecord):
    event: Literal["study"] = "study"
    name: str | None = None
    spec_hash: str
    games: int
    front_end: str | None = None  # batch, arena, validate_ab, fork_batch (absent: a study)
    arms: dict[str, Any] | None = None  # what decides each arm's games (a study may grow)
    provenance: dict[str, Any] | None = None


class StudyExtend(RunRecord):
    event: Literal["extend"] = "extend"
    spec_hash: str
    games: int | None = None
    arms: dict[str, Any] | None = None
    added: int


class StudyRow(RunRecord):
    """A scheduled game; front ends add the row fields their outputs need."""

    event: Literal["row"] = "row"
    game_id: str
    arm: str
    index: int
    seed: int
    state: str = "pending"
    rules: str | None = None  # study, arena
    seats: list[dict[str, Any]] | None = None  # arena
    replica_idx: int | None = None  # fork batch
    pair: int | None = None  # validate ab: the pair and the arm's place in it
    order: int | None = None


class StudyState(GameResult):
    """A claim (``running``, with what the budget expects of it) or a settle."""

    event: Literal["state"] = "state"
    game_id: str
    state: str
    runner: str
    usage: dict[str, float] | None = None
    by_backend: dict[str, dict[str, float]] | None = None
    money: float | None = None
    error: str | None = None
    error_type: str | None = None
    expected: dict[str, float] | None = None
    allowance: dict[str, Any] | None = None


class StudyReserve(RunRecord):
    event: Literal["reserve"] = "reserve"
    game_id: str
    runner: str
    allowance: dict[str, Any]


class StudyStop(RunRecord):
    event: Literal["stop"] = "stop"
    runner: str
    reason: str


class ArenaPlanParams(Record):
    roster: dict[str, Any]
    rules: list[str]
    games: int
    seed: int
    language: str | None = None
    probes: str | bool | None = None
    mode: str = "balanced"
    seating: list[Any] | None = None


class ArenaPlan(RunRecord):
    event: Literal["plan"] = "plan"
    params: ArenaPlanParams


class ArenaScheduled(RunRecord):
    event: Literal["scheduled"] = "scheduled"
    game_id: str
    rules: str
    seed: int
    seats: list[dict[str, Any]]


class ArenaFinished(GameResult):
    event: Literal["finished"] = "finished"
    game_id: str
    rules: str


class ArenaFailed(RunRecord):
    event: Literal["failed"] = "failed"
    game_id: str
    error: str


class ProgressStart(RunRecord):
    event: Literal["start"] = "start"
    total: int | None = None
    experiment_id: str | None = None
    fork_batch_id: str | None = None
    n: int | None = None


class ProgressUnit(GameResult):
    """One finished unit: a fork branch, a continuation, an A/B game, a re-asked state."""

    event: Literal["unit", "branch"] = "unit"
    game_id: str | None = None
    error: str | None = None
    path: str | None = None
    replica_idx: int | None = None  # fork branch
    variant_idx: int | None = None  # bifurcation continuation
    arm: str | None = None  # A/B game
    step: str | int | None = None  # re-asked state: its step label (R1.2)
    disagreements: int | None = None
    pairs: int | None = None


class ProgressDone(RunRecord):
    event: Literal["done"] = "done"
    path: str | None = None
    fork_batch_id: str | None = None


class BatchSent(RunRecord):
    """``probes ask --batch``: a batch the provider accepted (``<logs>/.probe_layers/<layer>/batches.jsonl``)."""

    event: Literal["batch"] = "batch"
    batch_id: str
    input_file_id: str | None = None
    position: int
    backend: str
    calls: int
    file: str | None = None  # the request file kept beside the ledger


class BatchDone(RunRecord):
    """How a batch ended: completed, failed, expired, cancelled, not found, or abandoned (its backend not in the run)."""

    event: Literal["done"] = "done"
    batch_id: str
    status: str


RUN_FILE_MODELS: dict[str, dict[str, type[RunRecord]]] = {
    "study_ledger": {
        m.model_fields["event"].default: m for m in (StudyHeader, StudyExtend, StudyRow, StudyState, StudyReserve, StudyStop)
    },
    "arena_ledger": {m.model_fields["event"].default: m for m in (ArenaPlan, ArenaScheduled, ArenaFinished, ArenaFailed)},
    "progress": {"start": ProgressStart, "unit": ProgressUnit, "branch": ProgressUnit, "done": ProgressDone},
    "batch_ledger": {"batch": BatchSent, "done": BatchDone},
}


def run_record(file: str, rec: dict[str, Any]) -> RunRecord:
    """``rec`` validated as the record of its ``event`` in a run file (a key of :data:`RUN_FILE_MODELS`);
    ValueError naming the file kind, the event and the field when it does not validate or carries a field
    not declared here."""
    models = RUN_FILE_MODELS[file]
    model = models.get(rec.get("event"))  # type: ignore[arg-type]
    if model is None:
        raise ValueError(f"{file} record: event {rec.get('event')!r} is not one of {', '.join(models)}")
    try:
        typed = model.model_validate(rec)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "record"
        raise ValueError(f"{file} {rec.get('event')} record: {where}: {first['msg']}") from None
    if bad := undeclared(typed):
        raise ValueError(f"{file} {rec.get('event')} record: {', '.join(bad)} not declared in mafiascope/logs/schema.py")
    return typed
