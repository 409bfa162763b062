"""The one place where a path under a logs root is built, claimed or deleted.

Game ids come from log files, ledgers, URLs and forms, so none of them is trusted: every
directory mafiascope writes to or deletes under a logs root goes through these helpers.

* :func:`inside` -- ``path`` is strictly below ``root`` (after normalising ``..``) and no
  component between them is a symlink, so nothing written there lands elsewhere;
* :func:`game_dir` -- ``<root>/<game_id>`` for an id that passes the writer's validator;
* :func:`claim_game_dir` -- creates that directory exclusively (``os.mkdir``, no
  ``exist_ok``): of two writers given one id, exactly one gets it;
* :func:`safe_rmtree` / :func:`safe_rename` -- delete or move only what :func:`inside` accepts;
* :func:`staged_output` -- write a whole output (a report directory) into a fresh private directory,
  then move its files into place without following any symlink found in the destination.

The root itself may be a symlink (a logs directory on another disk): it is the caller's choice.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .schema import validate_game_id


class UnsafePathError(ValueError):
    """A path built from untrusted input would leave its logs root or pass through a symlink."""


class GameDirTaken(FileExistsError):
    """Another writer already holds this game directory."""


def inside(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> Path:
    """``path`` (absolute, or relative to the working directory like any path), rebuilt as
    ``root / relative``, if it lies strictly below ``root`` with no symlink on the way down (the
    last component included); raises :class:`UnsafePathError` otherwise."""
    try:
        base, target = Path(os.path.abspath(root)), Path(os.path.abspath(path))
        rel = target.relative_to(base)
    except ValueError:  # not below root, or a NUL byte
        raise UnsafePathError(f"{path!s:.300}: outside the logs directory {root}") from None
    if not rel.parts:
        raise UnsafePathError(f"{path}: is the logs directory {root} itself, not a directory inside it")
    cur = base
    for part in rel.parts:
        cur = cur / part
        try:
            link = cur.is_symlink()
        except OSError as exc:  # e.g. a name too long for the file system
            raise UnsafePathError(f"{path!s:.300}: {exc.strerror}") from None
        if link:
            raise UnsafePathError(f"{Path(root) / rel}: is a symlink (not followed)")
    return Path(root) / rel


def game_dir(root: str | os.PathLike[str], game_id: str) -> Path:
    """``<root>/<game_id>`` for a valid id (raises ValueError), never a symlink."""
    return inside(root, Path(root) / validate_game_id(game_id))


def claim_game_dir(root: str | os.PathLike[str], game_id: str) -> Path:
    """Create ``<root>/<game_id>`` exclusively; :class:`GameDirTaken` if it already exists."""
    Path(root).mkdir(parents=True, exist_ok=True)
    path = game_dir(root, game_id)
    try:
        os.mkdir(path)
    except FileExistsError:
        raise GameDirTaken(f"{path} already exists: game id {game_id!r} is taken (another run holds it); "
                           "refusing to write into another writer's game") from None  # fmt: skip
    return path


def claim_file(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> Path:
    """Create the empty file ``path`` (strictly inside ``root``) exclusively: FileExistsError if
    anything, a symlink included, is already there."""
    p = inside(root, path)
    p.parent.mkdir(parents=True, exist_ok=True)
    inside(root, p)  # a parent made a symlink meanwhile is still refused
    os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666))
    return p


def safe_rmtree(root: str | os.PathLike[str], path: str | os.PathLike[str], *, missing_ok: bool = True) -> None:
    """Delete the directory ``path`` only if :func:`inside` accepts it (strictly inside ``root``,
    not a symlink); symlinks within it are removed, never followed (``shutil.rmtree``)."""
    p = inside(root, path)
    if not p.exists():
        if missing_ok:
            return
        raise FileNotFoundError(str(p))
    shutil.rmtree(p)


def safe_rename(root: str | os.PathLike[str], src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    """``src.rename(dst)`` when both lie strictly inside ``root`` with no symlink on the way."""
    inside(root, src).rename(inside(root, dst))


def _real_dir(path: Path) -> None:
    """``path`` as a real directory: a symlink (or a file) there is removed first -- the link, never its target."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    path.mkdir(exist_ok=True)


@contextlib.contextmanager
def staged_output(out: str | os.PathLike[str]) -> Iterator[Path]:
    """A fresh, empty private directory inside ``out`` to write a whole output into. When the block ends
    without an error its files are moved into ``out`` (``os.replace``: a symlink already there is replaced
    itself, its target is never written; a symlinked subdirectory becomes a real one); the staging
    directory is removed either way. ``out`` itself may be a symlink: that is the caller's choice."""
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
    try:
        yield stage
        for dirpath, dirnames, filenames in os.walk(stage):
            rel = Path(dirpath).relative_to(stage)
            dest = root / rel
            if rel != Path("."):
                _real_dir(dest)
            for name in filenames:
                os.replace(Path(dirpath) / name, dest / name)
            dirnames.sort()
    finally:
        shutil.rmtree(stage, ignore_errors=True)
