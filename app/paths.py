"""Where logs live: bundled corpora, the user's runs, and the configurable roots."""

from __future__ import annotations

import os
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
    """A corpus label (see :func:`label_root`) of a bundled arena run: ten-seat bot games without probes,
    left out of the sidebar's default corpus selection (the Arena page reads them; a game link still opens)."""
    return Path(corpus).parent.as_posix() == Path(label_root(ARENA_DATA_DIR)).as_posix()


def parse_roots(text: str) -> list[Path]:
    """Roots typed by the user: separated by newlines, commas or the OS path separator."""
    parts: list[str] = []
    for line in text.replace(",", "\n").replace(os.pathsep, "\n").splitlines():
        if line.strip():
            parts.append(line.strip())
    return [Path(p).expanduser() for p in parts]


def label_root(root: Path) -> str:
    try:
        return str(root.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(root)


def corpus_name(corpus: str) -> str:
    """How a corpus (the :func:`label_root` of its games' folder) is named to a visitor: a study's games
    (``<runs>/studies/<name>/games``) as "study <name>", an arena run's (``.../arena/<run>``) as "arena <run>",
    any other folder by its name."""
    parts = Path(corpus).parts
    if len(parts) >= 3 and parts[-1] == "games" and parts[-3] == "studies":
        return f"study {parts[-2]}"
    if len(parts) >= 2 and parts[-2] == "arena":
        return f"arena {parts[-1]}"
    return (parts[-1] if parts else "") or corpus


def public_path(path: Path, roots: list[Path] | None = None) -> str:
    """How the app names a server path to a visitor: relative to the checkout or to the log root
    (or ``roots``) holding it, else its last part; never the server's absolute layout."""
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except (OSError, ValueError):
        pass
    for root in [*(roots or []), runs_dir(), *default_roots()]:
        try:
            return f"{root.name}/{path.resolve().relative_to(root.resolve())}"
        except (OSError, ValueError):
            continue
    return path.name


def public_command(cmd: list[str]) -> str:
    """A launched command line as a user would type it: ``mafiascope ...`` for ``python -m mafiascope ...`` (the
    interpreter and ``-m`` are the app's business), path arguments named by :func:`public_path`."""
    if "-m" in cmd[:2] and cmd[cmd.index("-m") + 1:cmd.index("-m") + 2] == ["mafiascope"]:
        cmd = cmd[cmd.index("-m") + 1:]
    return " ".join(public_path(Path(a)) if os.path.isabs(a) else a for a in cmd)
