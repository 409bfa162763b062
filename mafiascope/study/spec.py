"""The study spec (YAML): named backends with prices, arms, games, seeds, budget, executor.

    name: bots-quick
    seed: 0                      # seed base: game seeds derive from (seed, arm, index)
    games_per_arm: 4
    backends:
      bot-balanced: {type: bot, preset: balanced}
      gpt: {type: openai, model: gpt-4o-mini, api_key: "${OPENAI_API_KEY}",
            price: {prompt_per_mtok: 0.15, completion_per_mtok: 0.60}}
    arms:
      - name: classic-bots
        lineup: bot-balanced                 # one backend for every seat
        rules: classic                       # classic | classic_sheriff | sport | open_table | imbalanced | rules YAML
        probes: chained                      # a shipped battery name, a battery YAML, or none
        language: en
      - name: mixed
        lineup: {seats: [gpt, bot-balanced, ...]}   # seat by seat (one per seat)
      - name: roster
        lineup: {roster: [gpt, bot-balanced]}       # balanced roster, as the Arena schedules it
    budget: {money: 5.0, calls: 20000}
    fault_budget: 0.2
    probe_loss_budget: 0.05      # share of a game's probe calls that may get no answer before it is invalid
    probe_max_lag_s: null        # null: every probe call is answered however late; a number: skip calls that lag more
    executor: {kind: local, parallel: 4}      # or {kind: ray, address: "ray://host:10001"}

Errors name the file and the field (``arms.1.lineup.seats: ...``) like game configs do.
``${VAR}`` is expanded everywhere except secret fields (``api_key``, ``token``), which the
backends resolve themselves so no key is ever written into a plan, ledger or log.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from ..backends.registry import Source, mark_source, parse_backend_spec
from ..config import REPO_ROOT, ConfigError, format_validation_error, read_yaml, redact, shipped_config, validate_mapping
from ..engine.rules import CLASSIC, CLASSIC_SHERIFF, TOURNAMENT_DEFAULTS, VARIANT_ALIASES, RuleSet, tournament_rules
from ..play.usage import Price
from ..provenance import content_hash

_LATER_FIELDS = ("probe_loss_budget", "probe_max_lag_s")  # left out of the hash at their defaults
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
_BACKEND_ERR = re.compile(r"^backend '.*?' \(.*?\): field '(.*?)': (.*)$")
CLASSIC_RULES = {"classic": CLASSIC, "classic_sheriff": CLASSIC_SHERIFF}


class StudyBackend(BaseModel):
    """A backend-registry entry (``entry``) plus the study's own keys: ``price`` and ``latency_s``."""

    model_config = ConfigDict(extra="forbid")

    entry: dict[str, Any]
    price: Price | None = None
    latency_s: float | None = Field(None, gt=0, description="expected seconds per call, for the duration estimate")

    @property
    def type(self) -> str:
        return str(self.entry.get("type", "bot"))

    @property
    def limits(self) -> dict[str, Any]:
        return {"max_concurrency": self.entry.get("max_concurrency", 8), "rpm": self.entry.get("rpm")}


class Lineup(BaseModel):
    """Exactly one of: ``backend`` (every seat), ``seats`` (seat by seat), ``roster`` (balanced)."""

    model_config = ConfigDict(extra="forbid")

    backend: str | None = None
    seats: list[str] | None = None
    roster: list[str] | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _one(self) -> Lineup:
        given = [k for k in ("backend", "seats", "roster") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of backend, seats, roster (got {given or 'none'})")
        return self

    @property
    def mode(self) -> str:
        return "all" if self.backend else "seats" if self.seats else "roster"

    def names(self) -> list[str]:
        return [self.backend] if self.backend else list(self.seats or self.roster or [])


class Arm(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    lineup: Lineup
    rules: str = "classic"
    probes: str = "chained"  # a shipped battery name (chained, default, suspicion), a battery YAML path, or "none"
    language: Literal["en", "ru"] = "en"
    games: int | None = Field(None, ge=1, le=100000)

    @field_validator("lineup", mode="before")
    @classmethod
    def _short(cls, v: Any) -> Any:
        return {"backend": v} if isinstance(v, str) else v

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _NAME.match(v):
            raise ValueError(f"{v!r}: use 1-40 letters, digits, '_', '.', '-' (it names the arm's games)")
        return v


class Budget(BaseModel):
    model_config = ConfigDict(extra="forbid")

    money: float | None = Field(None, gt=0, description="stop before a game that would take the spend over this")
    calls: int | None = Field(None, ge=1, description="stop before a game that would take the calls over this")


class Executor(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["local", "ray"] = "local"
    parallel: int = Field(4, ge=1, le=1024, description="games in flight at once")
    address: str | None = None  # Ray cluster address; None starts a local Ray instance


class StudySpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    seed: int = 0
    games_per_arm: int = Field(10, ge=1, le=100000)
    backends: dict[str, StudyBackend]
    arms: list[Arm] = Field(min_length=1)
    budget: Budget = Field(default_factory=Budget)
    fault_budget: float = Field(0.2, ge=0, le=1, description="share of a game's calls that may fault before it is invalid")
    probe_loss_budget: float = Field(0.05, ge=0, le=1, description="share of a game's scheduled probe calls that may get "
                                     "no answer (failed or skipped) before it is invalid")  # fmt: skip
    probe_max_lag_s: float | None = Field(None, gt=0, le=86400, description="skip a probe call that would queue longer than "
                                          "this behind its backend's limits; default: never skip")  # fmt: skip
    executor: Executor = Field(default_factory=Executor)
    snapshots: bool = False
    max_tokens: int = Field(400, ge=16, le=32768)
    out: str | None = None  # study directory; default logs/studies/<name>
    source_path: str | None = Field(default=None, exclude=True)
    _source: Source = PrivateAttr(default=Source.STUDY)  # an operator's spec YAML: load_study_spec says so

    def backend_spec(self, name: str) -> Any:
        """The backend ``name`` as a validated spec that knows where this study spec came from (what its ``${VAR}``
        credentials may reach depends on it: backends/keys.py)."""
        spec = parse_backend_spec(name, self.backends[name].entry)
        mark_source([spec], self._source)
        return spec

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _NAME.match(v):
            raise ValueError(f"{v!r}: use 1-40 letters, digits, '_', '.', '-' (it names the study's games)")
        return v

    @field_validator("backends", mode="before")
    @classmethod
    def _backends(cls, v: Any) -> Any:
        if not isinstance(v, dict) or not v:
            raise ValueError("a non-empty mapping {name: backend entry} is required")
        out = {}
        for name, entry in v.items():
            if isinstance(entry, str):  # shorthand: a bot preset
                entry = {"type": "bot", "preset": entry}
            if not isinstance(entry, dict):
                out[name] = entry
                continue
            own = {k: entry[k] for k in ("price", "latency_s") if k in entry}
            out[name] = {"entry": {k: x for k, x in entry.items() if k not in own}, **own}
        return out

    @model_validator(mode="after")
    def _check(self) -> StudySpec:
        problems = []
        for name, b in self.backends.items():
            try:
                parse_backend_spec(name, b.entry)
            except ValueError as exc:
                for line in str(exc).splitlines():
                    m = _BACKEND_ERR.match(line)
                    problems.append(f"backends.{name}.{m.group(1)}: {m.group(2)}" if m else f"backends.{name}: {line}")
        names = [a.name for a in self.arms]
        for dup in sorted({n for n in names if names.count(n) > 1}):
            problems.append(f"arms: the arm name {dup!r} is used twice")
        for i, arm in enumerate(self.arms):
            for j, seat_backend in enumerate(arm.lineup.names()):
                if seat_backend not in self.backends:
                    field = "backend" if arm.lineup.mode == "all" else f"{arm.lineup.mode}.{j}"
                    problems.append(
                        f"arms.{i}.lineup.{field}: {seat_backend!r} is not in backends; allowed: {sorted(self.backends)}"
                    )
            try:
                rules = arm_rules(arm.rules, self.source_path)
            except ConfigError as exc:
                problems.append(f"arms.{i}.rules: {exc}")
                continue
            if arm.lineup.seats is not None and len(arm.lineup.seats) != rules.n_seats:
                problems.append(
                    f"arms.{i}.lineup.seats: {len(arm.lineup.seats)} seats given but rule set {rules.name} seats {rules.n_seats}"
                )
            if arm.probes != "none":
                try:
                    battery_path(arm.probes, arm.language, self.source_path)
                except ConfigError as exc:
                    problems.append(f"arms.{i}.probes: {exc}")
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def games_of(self, arm: Arm) -> int:
        return arm.games or self.games_per_arm

    def total_games(self) -> int:
        return sum(self.games_of(a) for a in self.arms)

    def study_dir(self, override: str | Path | None = None) -> Path:
        if override:
            return Path(override)
        return Path(self.out) if self.out else Path("logs") / "studies" / self.name

    def fingerprint(self) -> dict[str, Any]:
        """The spec as data with secrets redacted (what the spec hash covers). Settings added after studies
        were first run count only when they differ from their default, so a study started before them keeps
        its hash (and resumes)."""
        data = self.model_dump(mode="json", exclude={"out", "executor", "budget"})
        for name in _LATER_FIELDS:
            if data.get(name) == type(self).model_fields[name].default:
                del data[name]
        return redact(data)

    def spec_hash(self) -> str:
        """Covers the whole spec but the budget, executor and directory, which may change between a stop and a
        resume; a study may also grow (:meth:`arm_fingerprints`)."""
        return content_hash(self.fingerprint())

    def arm_fingerprints(self) -> dict[str, dict[str, Any]]:
        """What decides each arm's games, arm by arm (the ledger keeps it, so a study can grow: more games per
        arm or new arms keep the games played, while an arm whose games would differ is refused).

        An arm's games are decided by its line-up, rules, battery and language, the entries of the backends
        it seats (not their price or ``latency_s``: those only estimate and account), and the study's name,
        seed base, fault budget, snapshots and max_tokens (and the probe-loss budget and probe lag limit when set);
        not by how many games it has (game *i*'s seed and
        seating depend on (seed, arm, i) alone). Rules and batteries given as files count by their content."""
        study = {"name": self.name, "seed": self.seed, "fault_budget": self.fault_budget, "snapshots": self.snapshots,
                 "max_tokens": self.max_tokens}  # fmt: skip
        study.update({k: getattr(self, k) for k in _LATER_FIELDS if getattr(self, k) != type(self).model_fields[k].default})
        out = {}
        for arm in self.arms:
            used = sorted(set(arm.lineup.names()) | _host_backends(arm, self.source_path))
            out[arm.name] = redact({
                "lineup": arm.lineup.model_dump(exclude_none=True), "rules": _by_content(arm.rules, self.source_path),
                "probes": "none" if arm.probes == "none" else _by_content(arm.probes, self.source_path),
                "language": arm.language, "backends": {b: self.backends[b].entry for b in used if b in self.backends}, **study,
            })  # fmt: skip
        return out


def _by_content(ref: str, source: str | None) -> str | dict[str, str]:
    """A shipped name as it is; a file by its name and the hash of its bytes (an edited file is another arm)."""
    path = _find(ref, source)
    if path is None:
        return ref
    return {"file": ref, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def _host_backends(arm: Arm, source: str | None) -> set[str]:
    try:
        rules = arm_rules(arm.rules, source)
    except ConfigError:
        return set()
    host = rules.option("host_backend") if rules.family == "tournament" else None
    return {str(host)} if host else set()


def arm_rules(name: str, source: str | None = None) -> RuleSet:
    """``classic``, ``classic_sheriff``, a ten-seat variant (sport, open/open_table, imbalanced), or a YAML
    file holding a rule set or a game config with ``rules:``."""
    if name in CLASSIC_RULES:
        return CLASSIC_RULES[name]
    key = VARIANT_ALIASES.get(name, name)
    if key in TOURNAMENT_DEFAULTS:
        return tournament_rules(key)
    path = _find(name, source)
    if path is None:
        raise ConfigError(
            f"{name!r}: unknown rule set; allowed: classic, classic_sheriff, sport, open_table, imbalanced or a YAML path"
        )
    data = read_yaml(path, ConfigError, "rules")
    if isinstance(data, dict) and isinstance(data.get("rules"), dict):
        data = data["rules"]
    try:
        return RuleSet.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, str(path), data, "rule set")) from None


def battery_path(name: str, language: str, source: str | None = None) -> Path:
    from ..probes.dsl import BatteryError, load_battery, shipped_battery_path

    path = _find(name, source) or shipped_battery_path(name, language)
    if path is None:
        raise ConfigError(f"{name!r}: no such probe battery; use chained, default, suspicion, a battery YAML or none")
    try:
        load_battery(path)
    except BatteryError as exc:
        raise ConfigError(str(exc)) from None
    return path.resolve()


def _find(ref: str, source: str | None) -> Path | None:
    if not ref.endswith((".yaml", ".yml")):
        return None
    p = Path(ref)
    bases = [Path(source).parent] if source else []
    for base in [*bases, Path.cwd(), REPO_ROOT]:
        if (base / p).is_file():
            return base / p
    return shipped_config(p)  # configs/probes/x.yaml, rules/x.yaml: from the package when installed


def parse_study_spec(data: Any, source: str = "<study>") -> StudySpec:
    return validate_mapping(StudySpec, data, source, "study spec", {"source_path": source})


def load_study_spec(path: str | Path, source: Source = Source.STUDY) -> StudySpec:
    """The spec in the file ``path``; ``source``: who wrote it (:func:`~mafiascope.backends.keys.file_source` for a
    spec YAML the operator named)."""
    p = Path(path)
    spec = parse_study_spec(read_yaml(p, ConfigError, "study spec") or {}, str(p))
    spec._source = source
    return spec
