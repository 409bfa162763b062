"""Line-up editor logic for the launch form (pure functions, no Streamlit).

Each seat of a game config keeps its own backend entry (``CONFIG``), takes an offline bot
preset (``"bot:<preset>"``) or a model defined in the form (``"model:<uid>"``): an
OpenAI-compatible endpoint with a model name, a base_url and the *name* of the environment
variable or ``st.secrets`` key that holds its API key. One model may sit in several seats.

:func:`derive` writes the choices into a copy of the config (new ``backends:`` entries, the
seats pointing at them); the key is only ever a ``"${VAR}"`` reference. :func:`problems`
validates with the engine's own validators (:func:`mafiascope.backends.registry.parse_backend_spec`
per model, :func:`mafiascope.config.parse_game_config` on the derived config) and names the
seat and the field of every problem.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import yaml

from mafiascope.backends.keys import KeyPolicy
from mafiascope.config import read_yaml

CONFIG = "config"
BOT_PRESETS = ("balanced", "cautious", "aggressive", "gullible", "analyst")
BACKEND_PREFIX = "lineup-"
SESSION_PREFIX = "MAFIASCOPE_SESSION_KEY_"  # a visitor's pasted key, for one session (app/keys.py)

# provider -> (base_url, key variable, a model name to start from)
PROVIDERS: dict[str, tuple[str, str, str]] = {
    "OpenAI": ("https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-4o-mini"),
    "DeepSeek": ("https://api.deepseek.com", "DEEPSEEK_API_KEY", "deepseek-chat"),
    "OpenRouter": ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", "qwen/qwen3-32b"),
    "vLLM (local)": ("http://127.0.0.1:8000/v1", "", "Qwen/Qwen3-8B"),
    "Ollama (local)": ("http://127.0.0.1:11434/v1", "", "qwen3:8b"),
}

_VAR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYISH = re.compile(r"^(sk|pk|rk|gsk|xai|hf)[-_]|^[A-Za-z0-9_\-]{40,}$")


@dataclass
class ModelDef:
    """A model defined in the form; ``uid`` is stable (widget keys, seat choices), ``name`` is shown."""

    uid: str
    name: str
    model: str = ""
    base_url: str = PROVIDERS["OpenAI"][0]
    key_var: str = PROVIDERS["OpenAI"][1]  # environment variable / st.secrets key; "" = no key
    temperature: float | None = None

    @property
    def choice(self) -> str:
        return f"model:{self.uid}"

    def spec(self, *, key: bool = True) -> dict[str, Any]:
        """The ``backends:`` entry: the key as a ``${VAR}`` reference, never a value.

        ValueError (without the value, which may be a pasted key) when the key variable is not a name."""
        out: dict[str, Any] = {"type": "openai", "model": self.model.strip(), "base_url": self.base_url.strip()}
        var = self.key_var.strip()
        if key and var:
            if key_var_problem(var):
                raise ValueError(f"model {self.name.strip()!r}: the API key variable is not a variable name")
            out["api_key"] = "${" + var + "}"
        if self.temperature is not None:
            out["temperature"] = float(self.temperature)
        return out


@dataclass(frozen=True)
class Problem:
    """One validation problem: ``seat`` (index) and/or ``model`` (uid) it belongs to, the field, the message."""

    where: str  # "seat 3", "model 'gpt'", "line-up"
    field: str
    message: str
    seat: int | None = None
    model: str | None = None

    @property
    def text(self) -> str:
        return f"{self.where}: {self.field}: {self.message}" if self.field else f"{self.where}: {self.message}"


# ----------------------------------------------------------------------------- seats


def load(path: Any) -> dict[str, Any]:
    """A config file's data ({} when unreadable; the launch reports that)."""
    from pathlib import Path

    try:
        data = read_yaml(Path(path))
    except Exception:
        return {}
    return data if isinstance(data, dict) else {}



def base_seats(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The config's seats as mappings; a config without ``seats:`` gets one per rules seat on its first backend."""
    seats = data.get("seats")
    if isinstance(seats, list) and seats:
        return [dict(s) if isinstance(s, dict) else {"name": str(s)} for s in seats]
    backends = data.get("backends") or {"bot": {"type": "bot"}}
    first = next(iter(backends)) if isinstance(backends, dict) and backends else "bot"
    roles = (data.get("rules") or {}).get("roles") if isinstance(data.get("rules"), dict) else None
    n = sum(int(v) for v in roles.values()) if isinstance(roles, dict) else 0
    if not n:
        try:
            from mafiascope.engine.rules import RuleSet

            n = RuleSet().n_seats
        except Exception:
            n = 0
    return [{"backend": first} for _ in range(n)]


def seat_labels(data: Mapping[str, Any]) -> list[str]:
    """Seat names as the launch form shows them (the seat's ``name``, else ``seat N``), as launcher.seat_names."""
    return [str(s.get("name") or f"seat {i + 1}") for i, s in enumerate(base_seats(data))]


# ----------------------------------------------------------------------------- choices


def options(models: Sequence[ModelDef]) -> list[str]:
    return [CONFIG] + [f"bot:{p}" for p in BOT_PRESETS] + [m.choice for m in models]


def option_label(choice: str, models: Sequence[ModelDef]) -> str:
    if choice == CONFIG:
        return "the config's own entry"
    if choice.startswith("bot:"):
        return f"bot · {choice[4:]}"
    m = _model(choice, models)
    return f"model · {m.name or '(unnamed)'}" if m else choice


def _model(choice: str, models: Sequence[ModelDef]) -> ModelDef | None:
    return next((m for m in models if m.choice == choice), None)


def _host(url: str) -> str:
    try:
        return urlsplit(url).netloc or url
    except ValueError:
        return url


def describe_entry(name: str, entry: Any) -> str:
    """A config backend entry in a few words (no secrets)."""
    if not isinstance(entry, dict):
        return f"`{name}` (not defined in the config)"
    kind = entry.get("type", "?")
    if kind == "bot":
        return f"`{name}`: offline bot, preset {entry.get('preset', 'balanced')}"
    if kind in ("openai", "bus"):
        where = f" @ {_host(str(entry.get('base_url') or entry.get('hub') or ''))}" if entry.get("base_url") or entry.get("hub") else ""
        return f"`{name}`: {kind} {entry.get('model', '?')}{where}"
    return f"`{name}`: {kind}"


def describe(choice: str, seat: Mapping[str, Any], data: Mapping[str, Any], models: Sequence[ModelDef]) -> str:
    """What a seat will be with ``choice``, in one line."""
    if choice.startswith("bot:"):
        return f"offline bot, preset {choice[4:]} (no key)"
    m = _model(choice, models)
    if m is not None:
        var = m.key_var.strip()
        key = ("key: (not a variable name)" if key_var_problem(var) else f"key ${var}") if var else "no key"
        if var.startswith(SESSION_PREFIX):
            key = "your pasted key (this session only)"
        temp = f" · temperature {m.temperature:g}" if m.temperature is not None else ""
        return f"openai {m.model.strip() or '(no model name)'} @ {_host(m.base_url.strip())} · {key}{temp}"
    name = str(seat.get("backend") or "bot")
    backends = data.get("backends") if isinstance(data.get("backends"), dict) else {}
    return "as configured: " + describe_entry(name, (backends or {}).get(name))


def backend_names(data: Mapping[str, Any], models: Sequence[ModelDef]) -> dict[str, str]:
    """choice -> the backend name it gets in the derived config (unique, not clashing with the config's)."""
    taken = set((data.get("backends") or {}) if isinstance(data.get("backends"), dict) else ())
    out: dict[str, str] = {}

    def pick(choice: str, stem: str) -> None:
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-") or "model"
        name, n = BACKEND_PREFIX + stem, 2
        while name in taken:
            name, n = f"{BACKEND_PREFIX}{stem}-{n}", n + 1
        taken.add(name)
        out[choice] = name

    for p in BOT_PRESETS:
        pick(f"bot:{p}", f"bot-{p}")
    for m in models:
        pick(m.choice, m.name or m.uid)
    return out


def _effective(choices: Mapping[int, str], n: int, skip: int | None) -> dict[int, str]:
    return {i: c for i, c in choices.items() if 0 <= i < n and i != skip and c and c != CONFIG}


def derive(data: Mapping[str, Any], choices: Mapping[int, str], models: Sequence[ModelDef], *,
           skip: int | None = None) -> dict[str, Any]:
    """A copy of the config with each chosen seat on its new backend entry.

    Only used entries are added; a model used by several seats is one entry. ``skip`` is a seat
    left as configured (the human seat, which launcher.human_config overrides afterwards).
    """
    out = copy.deepcopy(dict(data))
    seats = base_seats(out)
    chosen = _effective(choices, len(seats), skip)
    if not chosen:
        return out
    names = backend_names(data, models)
    backends = dict(out.get("backends") or {}) if isinstance(out.get("backends"), dict) else {}
    for i, choice in sorted(chosen.items()):
        if choice.startswith("bot:"):
            spec: dict[str, Any] = {"type": "bot", "preset": choice[4:]}
        else:
            m = _model(choice, models)
            if m is None:
                raise ValueError(f"seat {i + 1}: unknown choice {choice!r}")
            spec = m.spec()
        backends[names[choice]] = spec
        seats[i]["backend"] = names[choice]
    out["backends"] = backends
    out["seats"] = seats
    return out


def to_yaml(data: Mapping[str, Any], source: str = "") -> str:
    head = f"# Derived from {source} by the app's line-up editor.\n" if source else ""
    return head + yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True)


# ----------------------------------------------------------------------------- validation


_BACKEND_ERR = re.compile(r"^backend '[^']*' \([^)]*\): field '([^']*)': (.*)$")
_CONFIG_LINE = re.compile(r"^\s*(seats\.(\d+)|backends\.([^.:\s]+))(?:\.([^:]*))?:\s*(.*)$")


def key_var_problem(var: str) -> str | None:
    """Why ``var`` cannot name a key variable, or None. Never quotes ``var``: it may be a pasted key."""
    var = var.strip()
    if var and _KEYISH.search(var) and not var.isupper():
        return ("this looks like an API key itself; enter the NAME of the environment variable or st.secrets "
                "entry that holds the key (e.g. OPENAI_API_KEY)")
    if var and not _VAR.fullmatch(var):
        return ("not a variable name (letters, digits and _, not starting with a digit); enter the name of the "
                "environment variable or st.secrets entry, not the key")
    return None


def blocking(found: Sequence[Problem]) -> list[Problem]:
    """The problems that stop a launch: a seat's, or the line-up's as a whole (a model no seat uses does not)."""
    return [p for p in found if p.seat is not None or p.model is None]


def _model_problems(m: ModelDef, names: dict[str, str], dupes: set[str]) -> list[tuple[str, str]]:
    from mafiascope.backends.registry import parse_backend_spec

    out: list[tuple[str, str]] = []
    if not m.name.strip():
        out.append(("name", "give the model a name (it is how seats refer to it)"))
    elif m.name.strip() in dupes:
        out.append(("name", "two models have this name; names must be unique"))
    why = key_var_problem(m.key_var)
    if why:
        out.append(("API key variable", why))
    spec = m.spec(key=False)  # the key variable is checked above; the registry accepts any string there
    try:
        parse_backend_spec(names.get(m.choice, m.uid), spec)
    except ValueError as exc:
        for line in str(exc).splitlines():
            mm = _BACKEND_ERR.match(line.strip())
            out.append((mm.group(1), _msg(mm.group(2))) if mm else ("", line.strip()))
    return out


def _msg(text: str) -> str:
    return text.strip().removeprefix("Value error, ")


def problems(data: Mapping[str, Any], choices: Mapping[int, str], models: Sequence[ModelDef], *,
             skip: int | None = None, available: Container[str] | None = None, policy: KeyPolicy | None = None,
             source: str = "line-up") -> list[Problem]:
    """Every problem of a line-up: per model (``seat`` None), per seat using a broken model, the derived
    config's own validation, key variables the ``policy`` refuses for the model's base URL, and (when
    ``available`` is given) key variables that are set nowhere.
    An empty list means :func:`derive` gives a config the engine accepts."""
    seats = base_seats(data)
    labels = seat_labels(data)
    chosen = _effective(choices, len(seats), skip)
    names = backend_names(data, models)
    counts: dict[str, int] = {}
    for m in models:
        counts[m.name.strip()] = counts.get(m.name.strip(), 0) + 1
    dupes = {n for n, c in counts.items() if c > 1 and n}
    out: list[Problem] = []
    broken = False
    for m in models:
        users = [i for i, c in sorted(chosen.items()) if c == m.choice]
        for field, msg in _model_problems(m, names, dupes):
            broken = broken or bool(users)
            out.append(Problem(f"model {m.name.strip() or '(unnamed)'!r}", field, msg, model=m.uid))
            for i in users:
                out.append(Problem(f"{labels[i]} (model {m.name.strip() or '(unnamed)'!r})", field, msg, seat=i, model=m.uid))
    for i, c in sorted(chosen.items()):
        if not (c in names and (c.startswith("bot:") and c[4:] in BOT_PRESETS or _model(c, models))):
            out.append(Problem(labels[i], "backend", f"unknown choice {c!r}", seat=i))
            broken = True
    if not broken:
        out += _config_problems(derive(data, choices, models, skip=skip), labels, names, models, source)
    if available is not None or policy is not None:
        for m in models:
            var = m.key_var.strip()
            users = [i for i, c in sorted(chosen.items()) if c == m.choice]
            refused = policy.problem(var, m.base_url) if policy is not None and var and not key_var_problem(var) else None
            if users and refused:
                for i in users:
                    out.append(Problem(f"{labels[i]} (model {m.name.strip()!r})", "API key", refused, seat=i, model=m.uid))
            elif users and var and not key_var_problem(var) and available is not None and var not in available:
                for i in users:
                    out.append(Problem(f"{labels[i]} (model {m.name.strip()!r})", "API key",
                                       f"${var} is set neither in the environment nor in st.secrets "
                                       "(the game would stop at start)", seat=i, model=m.uid))
    return out


def _config_problems(derived: dict[str, Any], labels: list[str], names: dict[str, str], models: Sequence[ModelDef],
                     source: str) -> list[Problem]:
    from mafiascope.config import ConfigError, parse_game_config

    try:
        parse_game_config(derived, source)
    except ConfigError as exc:
        by_backend = {names[m.choice]: m for m in models if m.choice in names}
        out = []
        for line in str(exc).splitlines()[1:] or str(exc).splitlines():
            mm = _CONFIG_LINE.match(line)
            if mm and mm.group(2) is not None and int(mm.group(2)) < len(labels):
                i = int(mm.group(2))
                out.append(Problem(labels[i], mm.group(4) or "backend", _msg(mm.group(5)), seat=i))
            elif mm and mm.group(3) in by_backend:
                m = by_backend[mm.group(3)]
                out.append(Problem(f"model {m.name.strip()!r}", mm.group(4) or "", _msg(mm.group(5)), model=m.uid))
            elif line.strip():
                out.append(Problem(source, "", line.strip()))
        return out
    return []

