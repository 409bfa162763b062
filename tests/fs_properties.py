"""Property checks of the filesystem defences (docs/security.md), shared by tests/test_security_fs.py
and bench/fs_fuzz.py: hostile ids and symlinks fed to resume, fork, import and arena resume must
leave everything outside a temporary logs root unchanged.

Each check takes one generated input and a fresh scratch directory laid out as::

    <scratch>/logs/      the logs root handed to the operation (plus a finished game "done")
    <scratch>/outside/   a victim directory that must never change

and returns nothing; it raises AssertionError on an escape. :class:`Tally` counts inputs and
escapes so a run can print ``fs-ids[resume]: N inputs, 0 escapes``.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from mafiascope.logs.schema import validate_game_id

OUT, LOGS = "{OUT}", "{LOGS}"

# ids an attacker would write into setup.game_id, a ledger, a batch id or a directory name
HOSTILE = st.one_of(
    st.sampled_from(["..", ".", "/", "a/../..", "../outside", "../outside/victim", "x/..", "./..", "..\\..", "a\x00b",
                     "g\n", "g\r\n", " ", "", "~", "-rf", ".resume", ".resume/..", ".hidden", "done", "u", "a" * 129,
                     "a" * 300, "é", "ä/../..", "\u202e..", "..\u2215..", "%2e%2e", "\t", "CON", OUT, OUT + "/victim",
                     LOGS, LOGS + "/..", LOGS + "/done"]),  # fmt: skip
    st.text(max_size=300),  # any unicode, NUL and separators included
    st.lists(st.sampled_from(["..", ".", "a", "", "done", "outside"]), min_size=1, max_size=6).map("/".join),
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,20}", fullmatch=True),  # valid ids: the paths that do run
)


def materialise(raw: str, scratch: Path) -> str:
    """The generated id with the placeholders for absolute paths into the scratch dir filled in."""
    return raw.replace(OUT, str(scratch / "outside")).replace(LOGS, str(scratch / "logs"))


def is_valid_id(s: str) -> bool:
    try:
        validate_game_id(s)
        return True
    except ValueError:
        return False


def is_file_name(s: str) -> bool:
    """Whether ``s`` can be one directory entry's name on this file system."""
    return bool(s) and s not in (".", "..") and "/" not in s and "\x00" not in s and len(os.fsencode(s)) <= 255


def snapshot(root: Path) -> dict[str, Any]:
    """Every entry under ``root`` without following symlinks: file bytes, link targets, directories."""
    out: dict[str, Any] = {}
    if not root.exists():
        return out
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            key = str(p.relative_to(root))
            out[key] = ("link", os.readlink(p)) if p.is_symlink() else p.read_bytes() if p.is_file() else "dir"
    return out


@dataclass
class Tally:
    """Inputs tried and escapes seen by one property (printed as ``fs-ids[name]: N inputs, E escapes``)."""

    name: str
    inputs: int = 0
    escapes: int = 0

    def line(self) -> str:
        return f"fs-ids[{self.name}]: {self.inputs} inputs, {self.escapes} escapes"


class Layout:
    """A fresh scratch directory: logs root with a finished game, and the victim outside it."""

    def __init__(self, scratch: Path, finished: Path):
        self.scratch, self.logs, self.outside = scratch, scratch / "logs", scratch / "outside"
        (self.outside / "victim").mkdir(parents=True)
        (self.outside / "victim" / "keep.txt").write_text("keep")
        (self.outside / "secret.txt").write_text("TOP SECRET")
        self.logs.mkdir()
        shutil.copytree(finished, self.logs / "done")
        self.before = {"outside": snapshot(self.outside), "done": snapshot(self.logs / "done")}

    def check(self, tally: Tally, what: str) -> None:
        """Nothing outside the logs root changed, and the finished game is intact."""
        tally.inputs += 1
        after = {"outside": snapshot(self.outside), "done": snapshot(self.logs / "done")}
        escaped = after != self.before or not self.scratch.is_dir()
        if not escaped:
            escaped = any(b"TOP SECRET" in v for v in snapshot(self.logs).values() if isinstance(v, bytes))
        if escaped:
            tally.escapes += 1
        assert not escaped, f"{what}: something outside the logs root changed or a secret was copied in"


def set_game_id(game: Path, gid: str) -> None:
    lines = (game / "game.jsonl").read_text().splitlines(keepends=True)
    setup = json.loads(lines[0])
    setup["game_id"] = gid
    (game / "game.jsonl").write_text(json.dumps(setup) + "\n" + "".join(lines[1:]))


def plant_link(at: Path, target: Path) -> None:
    at.parent.mkdir(parents=True, exist_ok=True)
    if not os.path.lexists(at):
        at.symlink_to(target, target_is_directory=target.is_dir())


# ----------------------------------------------------------------------------- the operations


def resume_property(lay: Layout, crashed: Path, raw: str, dirname_from_id: bool, link: bool, tally: Tally) -> None:
    """An unfinished game whose setup.game_id (and maybe directory name) is hostile, maybe a
    symlinked game dir and a symlinked .resume: `mafiascope resume` touches nothing outside."""
    import asyncio

    from mafiascope.replay.resume import find_unfinished, repair_staging, resume_all

    gid = materialise(raw, lay.scratch)
    name = gid if dirname_from_id and is_file_name(gid) and gid not in ("done",) else "u"
    shutil.copytree(crashed, lay.logs / name)
    set_game_id(lay.logs / name, gid)
    if link:
        plant_link(lay.logs / "linked", lay.outside / "victim")
        plant_link(lay.logs / ".resume", lay.outside)
    repair_staging(lay.logs)
    cands = find_unfinished(lay.logs)
    if not is_valid_id(gid) or gid != name:
        assert all(c.point is None for c in cands if c.game_dir.name == name), "a hostile id was accepted for resume"
    asyncio.run(resume_all(cands, parallel=2))
    lay.check(tally, f"resume with setup.game_id={gid!r}")


def fork_property(lay: Layout, parent: Path, raw: str, link: bool, tally: Tally) -> None:
    """A fork with a hostile --batch-id from a parent whose setup.game_id is hostile, maybe with a
    symlink where a branch directory goes: nothing outside the logs root changes."""
    import asyncio

    from mafiascope.replay.forks import plan_fork, run_fork_batch
    from mafiascope.replay.source import ParentGame, ReplayError

    gid = materialise(raw, lay.scratch)
    shutil.copytree(parent, lay.logs / "p")
    set_game_id(lay.logs / "p", gid)
    if link:
        if is_file_name(f"fork-{gid}-000"):
            plant_link(lay.logs / f"fork-{gid}-000", lay.outside / "victim")
        plant_link(lay.logs / "experiments", lay.outside)
    try:
        pg = ParentGame(lay.logs / "p")
        plan = plan_fork(pg, pg.keys()[3], 1, logs=lay.logs, batch_id=gid, keep_seed=True)
        asyncio.run(run_fork_batch(plan))
    except (ReplayError, ValueError):
        pass
    lay.check(tally, f"fork with batch id / parent id {gid!r}")


def import_property(lay: Layout, raw: str, link: bool, tally: Tally) -> None:
    """An original-format corpus whose game directory and setup.game_id are hostile, with symlinks to
    a secret file and to a directory outside: import copies no target and writes only into DEST."""
    from mafiascope.analytics.original_format import import_corpus

    gid = materialise(raw, lay.scratch)
    src, dest = lay.scratch / "src", lay.logs / "imported"
    name = gid if is_file_name(gid) else "g1"
    (src / name).mkdir(parents=True)
    recs = [{"game_id": gid, "kind": "setup", "round": 0, "players": [{"name": "Ann", "role": "Mafia"}, {"name": "Bob", "role": "Villager"}]},
            {"game_id": gid, "kind": "game_over", "round": 1, "winner": "Mafia"}]  # fmt: skip
    (src / name / "game.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    if link:
        plant_link(src / name / "introspection.jsonl", lay.outside / "secret.txt")
        plant_link(src / "manifest.txt", lay.outside / "secret.txt")
        plant_link(dest / name, lay.outside / "victim")
    try:
        import_corpus(src, dest)
    except ValueError:
        pass
    lay.check(tally, f"import of a game named {gid!r}")


def arena_property(lay: Layout, template_run: Path, raws: list[str], link: bool, tally: Tally) -> None:
    """A run directory whose ledger names hostile game ids, maybe with a symlink where a pending game's
    directory is: continuing the run deletes and writes nothing outside it."""
    from mafiascope.arena.ledger import Ledger
    from mafiascope.arena.run import ArenaError, run_arena

    from .test_arena_run import ROSTER, scripted_factory

    run = lay.logs / "run"
    shutil.copytree(template_run, run, symlinks=True)
    led = Ledger(run)
    pending = led.status()["pending_ids"]
    # a crafted ledger is written by hand, not through the run's writer (which checks each record's schema)
    with led.path.open("a", encoding="utf-8") as fh:
        for i, raw in enumerate(raws):
            gid = materialise(raw, lay.scratch)
            fh.write(json.dumps({"event": ("failed", "scheduled", "finished")[i % 3], "game_id": gid, "error": "x"}) + "\n")
    if link and pending:
        plant_link(run / pending[0], lay.outside / "victim")
    try:
        run_arena(ROSTER, "sport", 2, run, quiet=True, backend_factory=scripted_factory, limit=1)
    except (ArenaError, ValueError, OSError):
        pass
    lay.check(tally, f"arena resume with ledger ids {raws!r}")
