"""Game configuration files (YAML), validated with errors that name file, field and allowed values.

A config names a rule set, the seats (role optional, backend name, personality), the
backend registry and the probe battery. ``${VAR}`` is allowed only in credential fields
(``api_key``, ``token``, header values), which backends resolve under the key policy when they build
their HTTP client (backends/clients.py), so that no secret is ever copied into a log; anywhere else it
is an error naming the field (it is never expanded).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .backends.specs import (
    CREDENTIAL_FIELDS,
    REFERENCE_RULE,
    BackendSpec,
    BotSpec,
    Source,
    file_source,
    mark_source,
    misplaced_reference,
)
from .engine.rules import RuleSet
from .logs.schema import Personality
from .redaction import scrub, scrub_text
from .safe_yaml import MAX_YAML_BYTES, YamlLimitError, decode_yaml_bytes, load_bounded

REPO_ROOT = Path(__file__).resolve().parent.parent


def _shipped_config_dir() -> Path:
    """The configs, batteries, rule sets and rosters shipped inside the package.

    In a checkout the top-level ``configs`` is a symlink to ``mafiascope/configs``; it is preferred
    there so that paths shown to users and recorded in logs read ``configs/...`` as documented.
    Installed from a wheel, the package's own directory is used. They are read as files (paths
    are handed to child processes), so the package must be installed unzipped, as pip does.
    """
    pkg = Path(str(resources.files(__package__ or "mafiascope").joinpath("configs")))
    top = REPO_ROOT / "configs"
    try:
        if top.is_dir() and top.resolve() == pkg.resolve():
            return top
    except OSError:
        pass
    return pkg


CONFIG_DIR = _shipped_config_dir()
SECRET_KEYS = CREDENTIAL_FIELDS

# Big-Five presets (O, C, E, A, N) used when a seat names one or gives none.
PERSONALITY_PRESETS: dict[str, dict[str, int]] = {
    "anxious": {"O": 45, "C": 60, "E": 30, "A": 50, "N": 70},
    "steady": {"O": 55, "C": 70, "E": 55, "A": 75, "N": 25},
    "provocateur": {"O": 70, "C": 40, "E": 85, "A": 30, "N": 60},
    "outgoing": {"O": 65, "C": 35, "E": 90, "A": 40, "N": 50},
    "creative": {"O": 80, "C": 55, "E": 70, "A": 60, "N": 35},
    "caretaker": {"O": 60, "C": 80, "E": 50, "A": 90, "N": 45},
    "methodical": {"O": 50, "C": 75, "E": 40, "A": 65, "N": 30},
}


class ConfigError(ValueError):
    """A config problem, phrased for the user: file, field path, what is allowed."""


class SeatSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: str = "bot"
    role: str | None = None
    name: str | None = None
    personality: Personality | str | None = None  # Big-Five values or a preset name

    @model_validator(mode="after")
    def _preset(self) -> SeatSpec:
        if isinstance(self.personality, str) and self.personality not in PERSONALITY_PRESETS:
            raise ValueError(f"unknown personality preset {self.personality!r}; allowed: {sorted(PERSONALITY_PRESETS)}")
        return self


class ProbesConfig(BaseModel):
    """Which probe battery runs; the battery itself is validated by mafiascope.probes."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    battery: str | None = None  # path to a battery YAML (relative to the config file or the repo)
    probes: list[dict[str, Any]] | None = None  # inline battery
    max_concurrency: int | None = Field(
        None, ge=1, le=1024, description="probe calls in flight per game; default: one step's probes of every seat"
    )
    max_lag_s: float | None = Field(
        None,
        gt=0,
        le=86400,
        description="skip a probe call that would queue longer than this behind its backend's limits (recorded as skipped); default: never skip, every call is answered however late",
    )
    loss_budget: float = Field(
        0.05,
        ge=0,
        le=1,
        description="share of a game's scheduled probe calls that may get no answer (failed or skipped) before the game is invalid",
    )


def _default_bot() -> BackendSpec:
    """The backend a config without ``backends`` seats everyone with: one balanced offline bot."""
    return BotSpec()


class GameConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = "game"
    rules: RuleSet = Field(default_factory=RuleSet)
    language: str = "en"
    seats: list[SeatSpec] = Field(default_factory=list)
    backends: dict[str, BackendSpec] = Field(default_factory=lambda: {"bot": _default_bot()})
    probes: ProbesConfig = Field(default_factory=ProbesConfig)
    snapshots: bool = True
    max_tokens: int = Field(400, ge=16, le=32768)
    reask: bool = True  # one re-ask with a format reminder after an empty/unreadable reply
    fault_budget: float = Field(0.2, ge=0, le=1, description="share of moves that may fall back before the game is invalid")
    seed: int | None = None
    source_path: str | None = Field(default=None, exclude=True)

    @field_validator("language")
    @classmethod
    def _language(cls, v: str) -> str:
        if v not in ("en", "ru"):
            raise ValueError(f"{v!r} is not supported; allowed: ['en', 'ru']")
        return v

    @model_validator(mode="before")
    @classmethod
    def _explicit_seats(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("seats"), list) and not data["seats"]:
            raise ValueError("seats: the list is empty; omit 'seats' for one default seat per role, or list one entry per seat")
        return data

    @model_validator(mode="after")
    def _check(self) -> GameConfig:
        if not self.backends:  # found by tests/test_fuzz_inputs.py: "backends: {}" raised StopIteration
            raise ValueError("backends: the mapping is empty; name at least one backend (e.g. bot: {type: bot})")
        if not self.seats:
            self.seats = [SeatSpec(backend=next(iter(self.backends))) for _ in range(self.rules.n_seats)]
        if len(self.seats) != self.rules.n_seats:
            raise ValueError(f"seats: {len(self.seats)} seats given but the rules need {self.rules.n_seats} ({self.rules.roles})")
        for i, s in enumerate(self.seats):
            if s.backend not in self.backends:
                raise ValueError(f"seats.{i}.backend: {s.backend!r} is not in backends; allowed: {sorted(self.backends)}")
        given = [s.role for s in self.seats if s.role]
        if given:
            if len(given) != len(self.seats):
                raise ValueError("seats: give a role for every seat or for none")
            counts: dict[str, int] = {}
            for r in given:
                counts[r] = counts.get(r, 0) + 1
            if {k: v for k, v in counts.items() if v} != {k: v for k, v in self.rules.roles.items() if v}:
                raise ValueError(f"seats: roles {counts} do not match rules.roles {self.rules.roles}")
        names = [s.name for s in self.seats if s.name]
        if len(names) != len(set(names)):
            raise ValueError("seats: seat names must be unique")
        return self

    def snapshot(self) -> dict[str, Any]:
        """The config as data for the setup record, with secrets replaced."""
        return redact(self.model_dump(mode="json"))


def config_from_setup(setup: dict[str, Any], battery: list[dict[str, Any]] | None) -> GameConfig:
    """A recorded game's configuration rebuilt from its setup record (``setup.config``; the battery as
    recorded in ``setup.probes`` inline instead of the file it was read from). ConfigError names the game."""
    gid = setup.get("game_id")
    raw = setup.get("config")
    if not isinstance(raw, dict):
        raise ConfigError(f"game {gid}: setup.config is missing; the game's configuration cannot be rebuilt")
    raw = {k: v for k, v in raw.items() if k != "source_path"}
    if battery:
        raw["probes"] = {**(raw.get("probes") or {}), "battery": None, "probes": battery}
    try:
        cfg = GameConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"game {gid}: setup.config does not validate any more: {exc}") from None
    mark_source(cfg.backends.values(), Source.LOG)  # whoever wrote the log chose its base URLs
    return cfg


def redacted_backends(cfg: GameConfig, used: set[str]) -> list[str]:
    """Backends of ``used`` whose secret a recorded config holds only as ``***`` (a game's log redacts a
    literal key): a fork, resume or late probe call cannot use them."""
    out = []
    for name, spec in cfg.backends.items():
        if name in used and any(isinstance(v, str) and "***" in v for v in spec.model_dump().values()):
            out.append(name)
    return out


def redact(obj: Any) -> Any:
    """``obj`` scrubbed by :func:`mafiascope.redaction.scrub`: a ``"${VAR}"`` secret reference is kept
    (forks resolve it again), a literal secret, URL credentials and known key fragments become ``***``."""
    return scrub(obj)


def check_references(obj: Any) -> None:
    """A ConfigError naming the field when ``${VAR}`` appears outside a credential field (it is never expanded)."""
    where = misplaced_reference(obj)
    if where is not None:
        raise ConfigError(f"{where}: {REFERENCE_RULE}")


# pydantic error types whose message does not show the offending value (it is added as "(got ...)")
_NO_INPUT_TYPES = {"missing", "extra_forbidden", "value_error", "assertion_error", "union_tag_invalid", "union_tag_not_found"}


def _short(value: Any, limit: int = 60) -> str:
    """A value quoted in an error, without anything key-shaped (a key pasted into the wrong field is not echoed)."""
    text = scrub_text(repr(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _clean_loc(loc: tuple[Any, ...], data: Any, missing: bool) -> tuple[tuple[Any, ...], int | None]:
    """``loc`` without pydantic's union-branch labels (``openai``, ``Personality``, ``str``,
    ``function-after[...]``): a part that is not a key/index of the input there is a label, except
    the last part of a "missing" error (the absent field). Returns (loc, length of the cleaned path
    where the first union label was dropped, or None)."""
    out: list[Any] = []
    cur, union_at = data, None
    for i, part in enumerate(loc):
        if isinstance(part, str) and part.startswith("function-"):
            continue
        if isinstance(cur, dict) and part in cur:
            out.append(part)
            cur = cur[part]
        elif isinstance(cur, list) and isinstance(part, int) and 0 <= part < len(cur):
            out.append(part)
            cur = cur[part]
        elif (missing and i == len(loc) - 1) or data is None:  # the absent field; or no input to walk
            out.append(part)
        elif union_at is None:
            union_at = len(out)
    return tuple(out), union_at


def _lines(loc: tuple[Any, ...], msg: str) -> list[tuple[tuple[Any, ...], str]]:
    return [(loc, line.strip()) for line in msg.splitlines() if line.strip()]


def validation_problems(exc: ValidationError, data: Any = None) -> list[tuple[tuple[Any, ...], str]]:
    """``[(field path, message)]``, one per problem, each message a single line.

    The path has no union-branch labels (``backends.x.openai.model`` -> ``backends.x.model``); a
    value the user gave is shown as ``(got ...)`` where pydantic's message does not quote it (never
    for a secret field); an unknown tag names the allowed ones; the alternatives of a union
    (``Personality | str``) give one problem, or the problems of the alternative the value was meant
    for; a multi-line validator message becomes one problem per line.
    """
    items: list[tuple[tuple[Any, ...], str] | tuple[Any, ...]] = []  # a problem, or a union's base path
    unions: dict[tuple[Any, ...], list[tuple[tuple[Any, ...], str, str]]] = {}
    for err in exc.errors(include_url=False):
        loc, union_at = _clean_loc(tuple(err["loc"]), data, err["type"] == "missing")
        ctx = err.get("ctx") or {}
        msg = str(err["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
        if err["type"] == "union_tag_invalid":
            disc = str(ctx.get("discriminator", "type")).strip("'")
            loc, msg = loc + (disc,), f"unknown {disc} {ctx.get('tag')!r}; allowed: [{ctx.get('expected_tags')}]"
        elif err["type"] == "union_tag_not_found":
            disc = str(ctx.get("discriminator", "type")).strip("'")
            loc, msg = loc + (disc,), "Field required"
        elif err["type"] not in _NO_INPUT_TYPES and not any(str(x) in SECRET_KEYS for x in loc):
            msg = f"{msg} (got {_short(err.get('input'))})"
        if union_at is None:
            items.extend(_lines(loc, msg))
            continue
        base = loc[:union_at]
        if base not in unions:
            items.append(base)
            unions[base] = []
        unions[base].append((loc, err["type"], msg))
    result: list[tuple[tuple[Any, ...], str]] = []
    for item in items:
        if len(item) == 2 and isinstance(item[0], tuple):
            result.append(item)
            continue
        base, alts = item, unions[item]
        # an alternative that got past its type check (deeper path, or a value error) says what is wrong
        specific = [a for a in alts if a[0] != base or not (a[1].endswith("_type") or a[1].endswith("_parsing"))]
        if specific:
            for loc, _, msg in specific:
                result.extend(_lines(loc, msg))
            continue
        got = next((m[m.rindex(" (got ") :] for _, _, m in alts if " (got " in m), "")
        wants = [m.replace(got, "").removeprefix("Input should be ") for _, _, m in alts]
        result.extend(_lines(base, "Input should be " + " or ".join(dict.fromkeys(wants)) + got))
    return result


def loc_text(loc: tuple[Any, ...]) -> str:
    return ".".join(str(x) for x in loc)


def format_validation_error(exc: ValidationError, source: str, data: Any = None, what: str = "configuration") -> str:
    """``<source>: invalid <what>`` then one indented line per problem: ``  <field.path>: <message>``."""
    lines = [f"{source}: invalid {what}"]
    for loc, msg in validation_problems(exc, data):
        lines.append(f"  {loc_text(loc)}: {msg}" if loc else f"  {msg}")
    return "\n".join(lines)


def validate_mapping(
    model: type[BaseModel], data: Any, source: str, what: str = "configuration", extra: dict[str, Any] | None = None
) -> Any:
    """A YAML mapping validated as ``model`` (``${VAR}`` only in credential fields); every problem as a ConfigError
    naming ``source``."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping")
    try:
        check_references(data)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    try:
        return model.model_validate({**data, **(extra or {})})
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, source, data, what)) from None


def parse_game_config(data: dict[str, Any], source: str = "<config>") -> GameConfig:
    cfg = validate_mapping(GameConfig, data, source)
    cfg.source_path = source
    return cfg


def yaml_error_text(exc: yaml.YAMLError) -> str:
    """PyYAML's error in one line: ``at line L, column C: <problem> (<context> at line L2, column C2)``,
    without its ``in "<unicode string>"`` block, quoted source line and caret."""
    problem, mark = getattr(exc, "problem", None), getattr(exc, "problem_mark", None)
    if not problem:
        return " ".join(str(exc).split())
    context, cmark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    text = (f"at line {mark.line + 1}, column {mark.column + 1}: " if mark else "") + str(problem)
    if context:
        if cmark is None or (mark is not None and (cmark.line, cmark.column) == (mark.line, mark.column)):
            text += f" ({context})"
        else:
            text += f" ({context} at line {cmark.line + 1}, column {cmark.column + 1})"
    note = getattr(exc, "note", None)
    return text + (f"; {' '.join(str(note).split())}" if note else "")


def parse_yaml_text(text: str, source: str = "<yaml>", error_cls: type[Exception] = ConfigError) -> Any:
    """YAML within the limits of :mod:`mafiascope.safe_yaml` (size, aliases, expansion, depth); a
    problem is ``error_cls("<source>: not valid YAML at line L, column C: ...")`` or
    ``error_cls("<source>: refused: too many YAML aliases ...")``, one line."""
    try:
        return load_bounded(text)
    except YamlLimitError as exc:
        raise error_cls(f"{source}: refused: {exc}") from None
    except yaml.YAMLError as exc:
        raise error_cls(f"{source}: not valid YAML {yaml_error_text(exc)}") from None
    except ValueError as exc:  # a scalar the constructor refuses, e.g. an integer of 5000 digits
        raise error_cls(f"{source}: not valid YAML: {' '.join(str(exc).split())[:200]}") from None


def parse_yaml_bytes(data: bytes, source: str = "<yaml>", error_cls: type[Exception] = ConfigError) -> Any:
    """:func:`parse_yaml_text` of raw bytes (an upload or a file): over the size cap, or not UTF-8, is
    ``error_cls("<source>: ...")`` naming the byte offset."""
    try:
        text = decode_yaml_bytes(data)
    except YamlLimitError as exc:
        raise error_cls(f"{source}: refused: {exc}") from None
    except UnicodeDecodeError as exc:
        raise error_cls(f"{source}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    return parse_yaml_text(text, source, error_cls)


def read_yaml(path: str | Path, error_cls: type[Exception] = ConfigError, what: str = "config") -> Any:
    """The parsed YAML of a file; ``error_cls("<path>: <what> file not found")``, ``"...: not UTF-8 text ..."``,
    ``"...: refused: larger than 1024 KiB"`` or ``"...: not valid YAML at line L, column C: <problem>"`` otherwise
    (one line). Only the first MAX_YAML_BYTES + 1 bytes are ever read."""
    path = Path(path)
    if not path.is_file():
        raise error_cls(f"{path}: {what} file not found")
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_YAML_BYTES + 1)
    except OSError as exc:
        raise error_cls(f"{path}: cannot read the {what} file ({exc.strerror or exc})") from None
    return parse_yaml_bytes(data, str(path), error_cls)


def load_game_config(path: str | Path) -> GameConfig:
    """A config file the process was told to read: its backends are the operator's (:func:`file_source`), so their
    ``${VAR}`` credentials may name any variable when no key policy is set (docs/security.md, "Credentials")."""
    data = read_yaml(path)
    if data is None:
        raise ConfigError(f"{Path(path)}: the config file is empty (a config is a mapping; see configs/classic.yaml)")
    cfg = parse_game_config(data, str(Path(path)))
    mark_source(cfg.backends.values(), file_source())
    return cfg


def shipped_config(ref: str | Path, suffix: str = ".yaml") -> Path | None:
    """A shipped file named relative to the configs directory, with or without a leading
    ``configs/`` and the ``.yaml`` suffix: ``classic``, ``configs/classic.yaml``,
    ``probes/chained_en.yaml`` -> ``<CONFIG_DIR>/...``; None for absolute paths or no such file."""
    p = Path(ref)
    if p.is_absolute() or not p.parts:
        return None
    if p.parts[0] == "configs":
        p = Path(*p.parts[1:]) if len(p.parts) > 1 else Path()
    for cand in (p, p.with_name(p.name + suffix) if p.name and not p.suffix else None):
        if cand is not None and cand.parts and (CONFIG_DIR / cand).is_file():
            return CONFIG_DIR / cand
    return None


def resolve_path(ref: str, cfg: GameConfig) -> Path:
    """A path named in a config: relative to the config file, else the working dir, else the repo,
    else the shipped configs (``configs/probes/x.yaml`` and ``probes/x.yaml`` both work)."""
    p = Path(ref)
    if p.is_absolute():
        return p
    bases = [Path(cfg.source_path).parent] if cfg.source_path and cfg.source_path != "<config>" else []
    bases += [Path.cwd(), REPO_ROOT]
    for base in bases:
        if (base / p).exists():
            return base / p
    return shipped_config(p, suffix="") or p
