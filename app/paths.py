"""Where logs live: bundled corpora, the user's runs, and the configurable roots."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = REPO_ROOT / "data"
DEMO_DIR = DATA_DIR / "demo"
ARENA_DATA_DIR = DATA_DIR / "arena"  # bundled arena runs (data/arena/<run>: games + ledger.jsonl)
CONFIG_DIR = REPO_ROOT / "configs"
PROBE_DIR = CONFIG_DIR / "probes"
ENV_LOGS = "MAFIASCOPE_LOGS"
ENV_RUNS = "MAFIASCOPE_RUNS"
ENV_FREE_PATHS = "MAFIASCOPE_ALLOW_FREE_PATHS"  # "1": visitors may type any directory as a log root (local use)


def free_paths_allowed() -> bool:
    """Whether the app may read directories the operator did not configure (``MAFIASCOPE_ALLOW_FREE_PATHS=1``, and
    only in local mode: a public app never reads a path a visitor types)."""
    if os.environ.get(ENV_FREE_PATHS, "").strip().lower() not in ("1", "true", "yes", "on"):
        return False
    from .public_mode import settings  # imports this module

    return not settings().public


def runs_dir() -> Path:
    """Directory the Live Game page writes launched games into (``$MAFIASCOPE_RUNS`` or runs/)."""
    return Path(os.environ.get(ENV_RUNS) or (REPO_ROOT / "runs")).expanduser()


def default_roots() -> list[Path]:
    """Log roots offered by default, in order: $MAFIASCOPE_LOGS entries, data/demo, other data/ corpora, runs/."""
    roots: list[Path] = []
    env = os.environ.get(ENV_LOGS, "")
    for part in env.split(os.pathsep):
        if part.strip():
            roots.append(Path(part.strip()).expanduser())
    roots.append(DEMO_DIR)
    if DATA_DIR.is_dir():
        roots.extend(p for p in sorted(DATA_DIR.iterdir()) if p.is_dir() and p != DEMO_DIR and not p.name.startswith("."))
    roots.append(runs_dir())
    seen: set[str] = set()
    out: list[Path] = []
    for r in roots:
        key = str(r.resolve()) if r.exists() else str(r)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def within_roots(path: Path, roots: list[Path] | None = None) -> bool:
    """Whether ``path`` is one of ``roots`` (default: the configured :func:`default_roots`) or inside one
    (symlinks resolved, so ``..`` and links cannot leave them)."""
    try:
        p = path.expanduser().resolve()
    except (OSError, RuntimeError):
        return False
    for r in roots if roots is not None else default_roots():
        try:
            if p.is_relative_to(r.expanduser().resolve()):
                return True
        except (OSError, RuntimeError):
            continue
    return False


def is_bundled_arena(corpus: str) -> bool:
    """A corpus label (see :func:`public_path`) of a bundled arena run: ten-seat bot games without probes,
    left out of the sidebar's default corpus selection (the Arena page reads them; a game link still opens)."""
    return Path(corpus).parent.as_posix() == Path(public_path(ARENA_DATA_DIR)).as_posix()


def parse_roots(text: str) -> list[Path]:
    """Roots typed by the user: separated by newlines, commas or the OS path separator."""
    parts: list[str] = []
    for line in text.replace(",", "\n").replace(os.pathsep, "\n").splitlines():
        if line.strip():
            parts.append(line.strip())
    return [Path(p).expanduser() for p in parts]


def editable_path(root: Path) -> str:
    """A root as the free-paths box shows it for editing (local use only): relative to the checkout, else as given."""
    rel = _in_checkout(root)
    return rel if rel is not None else str(root)


def _in_checkout(path: Path) -> str | None:
    try:
        return path.resolve().relative_to(REPO_ROOT).as_posix()
    except (OSError, RuntimeError, ValueError):
        return None


@functools.lru_cache(maxsize=16)
def _outside_roots(logs_env: str, runs_env: str) -> tuple[tuple[Path, str, str], ...]:
    """``(root, resolved root, label)`` of the configured roots outside the checkout, in configured order; the roots
    (and so their labels) depend only on the two variables, the key of this cache."""
    inside = {r for r in (_in_checkout(p) for p in default_roots()) if r is not None}
    out: list[tuple[Path, str, str]] = []
    taken = set(inside)
    for root in default_roots():
        if _in_checkout(root) is not None:
            continue
        base = root.name or "root"
        label, n = base, 1
        while label in taken:
            n += 1
            label = f"{base}-{n}"
        taken.add(label)
        try:
            resolved = str(root.resolve())
        except (OSError, RuntimeError):
            resolved = str(root)
        out.append((root, resolved, label))
    return tuple(out)


def _outside() -> tuple[tuple[Path, str, str], ...]:
    return _outside_roots(os.environ.get(ENV_LOGS, ""), os.environ.get(ENV_RUNS, ""))


def root_labels() -> dict[Path, str]:
    """The configured roots (:func:`default_roots`) with the names the app shows for them: a root inside the checkout
    by its path there (``data/demo``), any other by its last component (``logs``; a second root of that name is
    ``logs-2``, in configured order). Stable and unique; never the server's absolute layout."""
    outside = {root: label for root, _, label in _outside()}
    return {r: outside.get(r) or _in_checkout(r) or r.name for r in default_roots()}


def public_path(path: Path, roots: list[Path] | None = None) -> str:
    """How the app names a server path to a visitor (the one helper for every label, caption, warning and command
    line the app shows): relative to the checkout, else to the configured root holding it, named by
    :func:`root_labels` (``logs-2/study-a``), or to one of ``roots`` (named by its last component), else only its
    last part (as typed, on a private machine that lets its user type any directory: ``free_paths_allowed``). Never
    the server's absolute layout otherwise, in public mode or not."""
    rel = _in_checkout(path)
    if rel is not None:
        return rel
    try:
        target = path.resolve()
    except (OSError, RuntimeError):
        return path.name
    places = [(resolved, label) for _, resolved, label in _outside()]
    for extra in roots or []:
        try:
            places.append((str(extra.resolve()), extra.name))
        except (OSError, RuntimeError):
            continue
    for resolved, label in sorted(places, key=lambda p: -len(p[0])):  # the deepest root holding it
        try:
            rest = target.relative_to(resolved).as_posix()
        except ValueError:
            continue
        return label if rest == "." else f"{label}/{rest}"
    return str(path) if free_paths_allowed() else path.name  # a typed root of a private machine keeps its path


# a server path in text ends where a path cannot go on: the end, a separator, a blank, quotes, brackets, a comma...
_PATH_END = r"(?=$|[/\s'\"`,;:)\]}>|]|\.(?:\s|$))"


@functools.lru_cache(maxsize=16)
def _hider(logs_env: str, runs_env: str, *env: str) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    """The pattern and names of :func:`hide_paths`; ``env``: the variables the cache and home directories come from
    (the cache's key, so a changed variable is seen)."""
    from mafiascope.cache_root import user_cache_root

    pairs: dict[str, str] = {}
    for root, resolved, label in _outside_roots(logs_env, runs_env):
        pairs[str(root)] = pairs[resolved] = label
    for place, name in ((user_cache_root(), "cache"), (REPO_ROOT, "."), (Path.home(), "~")):
        for form in (str(place), _resolved(place)):
            pairs.setdefault(form, name)
    forms = sorted((f for f in pairs if len(f) > 1 and f.startswith("/")), key=len, reverse=True)
    if not forms:
        return None, pairs
    return re.compile("(" + "|".join(re.escape(f) for f in forms) + ")" + _PATH_END), pairs


def _resolved(p: Path) -> str:
    try:
        return str(p.resolve())
    except (OSError, RuntimeError):
        return str(p)


def hide_paths(text: str) -> str:
    """``text`` (an error, a job's output, anything a page shows) with the server's directories named as the app names
    them: every configured root outside the checkout by its label (:func:`root_labels`), the checkout as ``.``, the
    cache directory as ``cache`` and the home directory as ``~``. :func:`app.text.md_escape` applies it to all the
    text it escapes, so a message quoting an exception shows no absolute server path."""
    if "/" not in text:
        return text
    env = os.environ
    pattern, pairs = _hider(env.get(ENV_LOGS, ""), env.get(ENV_RUNS, ""), env.get("MAFIASCOPE_CACHE_DIR", ""),
                            env.get("XDG_CACHE_HOME", ""), env.get("HOME", ""))  # fmt: skip
    return pattern.sub(lambda m: pairs[m.group(1)], text) if pattern is not None else text


def corpus_name(corpus: str) -> str:
    """How a corpus (the :func:`public_path` of its games' folder) is named to a visitor: a study's games
    (``<runs>/studies/<name>/games``) as "study <name>", an arena run's (``.../arena/<run>``) as "arena <run>",
    any other folder by its name."""
    parts = Path(corpus).parts
    if len(parts) >= 3 and parts[-1] == "games" and parts[-3] == "studies":
        return f"study {parts[-2]}"
    if len(parts) >= 2 and parts[-2] == "arena":
        return f"arena {parts[-1]}"
    return (parts[-1] if parts else "") or corpus


def public_command(cmd: list[str]) -> str:
    """A launched command line as a user would type it: ``mafiascope ...`` for ``python -m mafiascope ...`` (the
    interpreter and ``-m`` are the app's business), path arguments named by :func:`public_path`."""
    if "-m" in cmd[:2] and cmd[cmd.index("-m") + 1:cmd.index("-m") + 2] == ["mafiascope"]:
        cmd = cmd[cmd.index("-m") + 1:]
    return " ".join(public_path(Path(a)) if os.path.isabs(a) else a for a in cmd)
