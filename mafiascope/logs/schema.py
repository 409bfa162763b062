"""The single source of truth for every record mafiascope writes or reads.

Three JSONL files per game directory (``<logs>/<game_id>/``):

* ``game.jsonl``          -- :class:`Setup`, public events, private events (``visible_to``), :class:`GameOver`
* ``introspection.jsonl`` -- :class:`ProbeRecord`, one per probe call (stored compact since schema_version 3:
  read it with :func:`mafiascope.logs.io.iter_probe_records`, which yields this full shape)
* ``state.jsonl``         -- :class:`Snapshot`, one per resumable step

Field names follow the original MafiaScope logs wherever the concept is the same
(``kind``, ``round``, ``msg_seq``, ``public_msg_seq``, ``player_idx``, ``player_name``,
``probe_id``, ``answer_raw``, ``answer_parsed``, ``answer_parse_ok`` ...), so tools written
for either corpus read both. Every model allows extra fields: the importer keeps the
original records losslessly and newer writers may add fields without breaking old readers.

``SCHEMA_VERSION`` is bumped whenever a field changes meaning; readers accept every
version listed in ``SUPPORTED_SCHEMA_VERSIONS`` (tests/fixtures/logs holds one fixture per version).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

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


# --------------------------------------------------------------------------- setup


class Personality(Record):
    O: int = 50
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
    # fork / resume metadata (absent or null on root games)
    forked_from: str | None = None
    fork_point: list[int] | None = None
    fork_batch_id: str | None = None
    replica_idx: int | None = None
    intervention: dict[str, Any] | None = None
    resume_of: str | None = None


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


class Fault(Record):
    """A backend failure that was absorbed: the move fell back to a logged default."""

    error: str
    attempts: int = 1
    fallback: str  # e.g. "abstain", "skip_speech", "random_target"


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
    fault: Fault | None = None
    reask: bool = False  # the first reply was empty/garbage and the seat was asked again
    nominations: list[str] | None = None
    suspects: list[str] | None = None  # best move (ten-seat rules)
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


class NightSave(Event):
    kind: Literal["night_save"] = "night_save"
    saved: str


class NightNoKill(Event):
    kind: Literal["night_no_kill"] = "night_no_kill"
    reason: str = ""  # "no_target" | "split_shot" ...


class NightAnalysis(Event):
    kind: Literal["night_analysis"] = "night_analysis"
    night_result: str


class VoteTally(Event):
    kind: Literal["vote_tally"] = "vote_tally"
    tally: dict[str, int]
    votes: dict[str, str]  # voter -> target, valid votes only (as in the original)
    invalid: dict[str, str] = Field(default_factory=dict)  # voter -> raw reason
    stage: str | None = None  # "vote", "revote", "remove_all" ...


class DayEliminate(Event):
    kind: Literal["day_eliminate"] = "day_eliminate"
    eliminated: str
    role: str
    votes: int
    revealed: bool = False


class NoElimination(Event):
    kind: Literal["no_elimination"] = "no_elimination"
    reason: str  # "tie" | "no_valid_votes" | "no_vote_day" ...


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


# --------------------------------------------------------------------------- snapshots


class Pending(Record):
    stage: str
    remaining: list[str] = Field(default_factory=list)
    mafia_targets: list[str] = Field(default_factory=list)
    protected: str | None = None
    votes: dict[str, str] = Field(default_factory=dict)


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


def parse_event(d: dict[str, Any]) -> Setup | Event:
    """Validate one game.jsonl object into its typed record (unknown kinds stay generic)."""
    kind = d.get("kind")
    if kind == "setup":
        return Setup.model_validate(d)
    model = EVENT_MODELS.get(kind, Event)
    return model.model_validate(d)
