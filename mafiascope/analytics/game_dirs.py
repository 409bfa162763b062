"""Finding the game directories of a load's sources, one directory scan each.

The same directories, in the same order, as :func:`mafiascope.logs.io.list_game_dirs` with
``Path.resolve`` (tested against them), found with ``os.scandir``: a child's type and symlink
flag come with its entry, and each candidate's ``game.jsonl`` is stat'ed once. That stat is
handed on (:class:`Found`) as the file's half of the cache signature and as the proof that the
game still exists, so a warm load makes two system calls a game instead of six, and builds a
``Path`` for each game once (at 10,000 games the ``Path`` objects and repeated stats were
~0.7 s of a ~0.9 s warm load).
"""

from __future__ import annotations

import errno
import glob as _glob
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..logs.io import GAME_FILE

# the errors Path.is_file / is_dir / is_symlink answer False for (pathlib's _IGNORED_ERRNOS)
_IGNORED = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


@dataclass
class Found:
    """Game directories by resolved parent (sorted), each with the ``os.stat`` of its ``game.jsonl``
    taken while scanning (keyed by directory name: a directory's children have distinct names)."""

    dirs: dict[Path, list[Path]] = field(default_factory=dict)
    stats: dict[Path, dict[str, os.stat_result]] = field(default_factory=dict)


def _game_stat(d: str) -> os.stat_result | None:
    """``d/game.jsonl``'s stat when it is a regular file (``is_game_dir``'s rule), else None."""
    try:
        st = os.stat(d + "/" + GAME_FILE)
    except OSError as e:
        if e.errno not in _IGNORED:
            raise
        return None
    except ValueError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def _is_dir(e: os.DirEntry) -> bool:
    try:
        return e.is_dir()
    except OSError as err:  # DirEntry forgives only ENOENT, Path.is_dir the pathlib set
        if err.errno not in _IGNORED:
            raise
        return False


def _entries(d: str) -> list[os.DirEntry]:
    with os.scandir(d) as it:
        return sorted(it, key=lambda e: e.name)


def _children(root: str) -> list[tuple[str, str, bool, os.stat_result]]:
    """``list_game_dirs(root)`` for a root that is no game directory: (directory holding it, name,
    is a symlink, game.jsonl's stat) of each child or grandchild game directory, in its order."""
    if not Path(root).is_dir():
        return []
    found = []
    for child in _entries(root):
        if not _is_dir(child):
            continue
        st = _game_stat(child.path)
        if st is not None:
            found.append((root, child.name, child.is_symlink(), st))
            continue
        for c in _entries(child.path):
            if _is_dir(c):
                st = _game_stat(c.path)
                if st is not None:
                    found.append((child.path, c.name, c.is_symlink(), st))
    return found


Hit = tuple[Path, str, str, os.stat_result]  # resolved directory, its parent (a string), its name, game.jsonl's stat


def _found(sources: list[str | Path] | str | Path) -> dict[str, Hit]:
    """Each game directory of ``sources`` (directories and glob patterns), resolved, once, in the order
    found."""
    if isinstance(sources, (str, Path)):
        sources = [sources]
    out: dict[str, Hit] = {}
    parents: dict[str, str] = {}  # each parent resolved once: a game directory that is no symlink is its child
    for src in sources:
        s = str(src)
        paths = [Path(p) for p in sorted(_glob.glob(s))] if any(ch in s for ch in "*?[") else [Path(s)]
        for p in paths:
            st = _game_stat(str(p))
            if st is not None:  # the source is a game directory itself
                if p.name in ("", ".", "..") or p.is_symlink():
                    _add(out, p.resolve(), st)
                else:
                    _add_child(out, parents, str(p.parent), p.name, st)
                continue
            for parent, name, link, st in _children(str(p)):
                if link:
                    _add(out, Path(os.path.join(parent, name)).resolve(), st)
                else:
                    _add_child(out, parents, parent, name, st)
    return out


def _add(out: dict[str, Hit], r: Path, st: os.stat_result) -> None:
    out[str(r)] = (r, str(r.parent), r.name, st)


def _add_child(out: dict[str, Hit], parents: dict[str, str], parent: str, name: str, st: os.stat_result) -> None:
    """``parent / name`` with ``parent`` resolved (once per parent): a child that is no symlink resolves so."""
    if parent not in parents:
        parents[parent] = str(Path(parent).resolve())
    base = parents[parent]
    r = Path(base.rstrip("/") + "/" + name)
    out[str(r)] = (r, base, name, st)


def find_game_dirs(sources: list[str | Path] | str | Path) -> list[Path]:
    """Game directories from directories and glob patterns (resolved, each once, in the order found)."""
    return [hit[0] for hit in _found(sources).values()]


def scan(sources: list[str | Path] | str | Path) -> Found:
    """:func:`find_game_dirs` grouped by parent (parents sorted), with the stats taken on the way."""
    dirs: dict[str, list[Path]] = {}
    stats: dict[str, dict[str, os.stat_result]] = {}
    for r, parent, name, st in _found(sources).values():
        dirs.setdefault(parent, []).append(r)
        stats.setdefault(parent, {})[name] = st
    paths = {k: Path(k) for k in dirs}
    return Found({paths[k]: v for k, v in sorted(dirs.items(), key=lambda kv: paths[kv[0]])},
                 {paths[k]: v for k, v in stats.items()})
