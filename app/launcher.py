"""Launch offline games as subprocesses (`python -m mafiascope run ...`) and track them.

The game runs outside Streamlit's script thread and outside the page's reruns; it only
appends to its JSONL files, which the Live Game page tails. The registry of launched
processes (app/jobs.py) is a ``st.cache_resource`` singleton so every session sees running games.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st
import yaml

from mafiascope.config import read_yaml
from mafiascope.logs import GAME_FILE

from .jobs import BackgroundJob, JobRefused, Registry, Work, admit, parallel_cap, private_view, spawn
from .paths import CONFIG_DIR, runs_dir


HUMAN_TIMEOUT_S = 900  # an unanswered human move falls back (logged) after 15 minutes


@dataclass(kw_only=True)
class Launch(BackgroundJob):
    game_id: str  # the (first) game to open
    logs: str
    human_seat: str | None = None
    games: int = 1  # > 1: a batch whose games are <prefix>-0000 ... (mafiascope batch --id-prefix)
    prefix: str | None = None

    def finished(self) -> int:
        """Games of this launch whose log ends with game_over."""
        if self.games == 1:
            ids = [self.game_id]
        else:
            ids = [f"{self.prefix}-{i:04d}" for i in range(self.games)]
        done = 0
        for gid in ids:
            try:
                with open(Path(self.logs) / gid / GAME_FILE, "rb") as fh:
                    fh.seek(0, os.SEEK_END)
                    fh.seek(max(0, fh.tell() - 4096))
                    done += b'"game_over"' in fh.read()
            except OSError:
                pass
        return done


@st.cache_resource
def registry() -> Registry[Launch]:
    return Registry()


def configs() -> dict[str, Path]:
    return {p.stem: p for p in sorted(CONFIG_DIR.glob("*.yaml"))} if CONFIG_DIR.is_dir() else {}


def seat_names(config: Path) -> list[str]:
    """Seat names of a game config, when it lists them (for the 'take a seat' picker)."""
    try:
        data = read_yaml(config) or {}
    except Exception:
        return []
    for key in ("seats", "players"):
        seats = data.get(key) or (data.get("game") or {}).get(key)
        if isinstance(seats, list):
            return [str(s.get("name") or f"seat {i + 1}") if isinstance(s, dict) else str(s) for i, s in enumerate(seats)]
    n = data.get("num_players") or (data.get("game") or {}).get("num_players")
    return [f"seat {i + 1}" for i in range(int(n))] if isinstance(n, int) else []


def table_seats(config: Path, seed: int) -> list[tuple[str, str]]:
    """(seat label of :func:`seat_names`, the player's name in the game) in table order for ``seed``:
    the engine names and shuffles seats by the seed, so "seat 3" of the config is not the third at the table."""
    labels = seat_names(config)
    try:
        from mafiascope.config import load_game_config
        from mafiascope.play.seating import seating

        table = seating(load_game_config(config), int(seed))
    except Exception:  # an unreadable config: the labels alone (the launch reports the error)
        return [(lab, lab) for lab in labels]
    return [(labels[j], name) for j, name in table if j < len(labels)]


def describe_config(config: Path) -> str:
    """One line about a config: roles, round cap, seat backends."""
    try:
        data = read_yaml(config) or {}
    except Exception as exc:
        return f"(could not read {config.name}: {exc})"
    rules = data.get("rules") if isinstance(data.get("rules"), dict) else {}
    roles = rules.get("roles") or {}
    backends = data.get("backends") or {}
    kinds = sorted({str((b or {}).get("type", "?")) for b in backends.values() if isinstance(b, dict)})
    parts = []
    if roles:
        parts.append(", ".join(f"{n} {r}" for r, n in roles.items()))
    if rules.get("max_rounds"):
        parts.append(f"at most {rules['max_rounds']} rounds")
    if kinds:
        parts.append("backends: " + ", ".join(kinds) + (" (offline, no key needed)" if kinds == ["bot"] else ""))
    if data.get("language"):
        parts.append(f"language {data['language']}")
    return " · ".join(parts) or config.name


def human_config(config: Path, seat: str, out_dir: Path) -> Path:
    """A copy of ``config`` whose ``seat`` uses a backend of type ``human``."""
    data = read_yaml(config) or {}
    backends = data.setdefault("backends", {})
    backends["app_human"] = {"type": "human", "timeout_s": HUMAN_TIMEOUT_S}
    for key in ("seats", "players"):
        holder = data if isinstance(data.get(key), list) else (data.get("game") or {})
        seats = holder.get(key) if isinstance(holder, dict) else None
        if isinstance(seats, list):
            for i, s in enumerate(seats):
                name = (s.get("name") if isinstance(s, dict) else str(s)) or f"seat {i + 1}"
                if name == seat:
                    if isinstance(s, dict):
                        s["backend"] = "app_human"
                    else:
                        seats[i] = {"name": name, "backend": "app_human"}
            break
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{config.stem}.human.yaml"
    out.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return out


def lineup_config(config: Path, data: dict[str, Any], path: Path) -> Path:
    """Write a line-up's derived config (app/lineup.py: keys as ``${VAR}`` only) for the game process."""
    from .lineup import to_yaml

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_yaml(data, source=str(config)), encoding="utf-8")
    return path


def new_game_id(prefix: str = "live") -> str:
    return f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:4]}"


def launch_work(games: int) -> Work:
    """A launch of ``games`` games for the quotas: a batch plays up to 4 at once (fewer under the parallel quota)."""
    games = max(1, int(games))
    return Work("this game" if games == 1 else "this batch", games, parallel_cap(min(4, games)))


def launch(config: Path, *, seed: int, probes: bool = True, snapshots: bool = True, probes_file: Path | None = None,
           logs: Path | None = None, game_id: str | None = None, human_seat: str | None = None, games: int = 1,
           lineup: dict[str, Any] | None = None) -> Launch:
    """Start one game (``mafiascope run``) or, with ``games`` > 1, a batch (``mafiascope batch``).

    ``lineup``: the config data derived by the line-up editor (app/lineup.derive), written to
    ``<logs>/.launch/<gid>.yaml`` and launched instead of ``config``; a human seat overrides its seat.
    ``human_seat`` is a label of :func:`seat_names`; the launch records the player's name in the game."""
    work = launch_work(games)
    admit(work)  # the quotas (app/jobs.py), before anything is written
    logs = Path(logs or runs_dir())
    logs.mkdir(parents=True, exist_ok=True)
    gid = game_id or new_game_id()
    meta = logs / ".launch"
    meta.mkdir(parents=True, exist_ok=True)
    if games > 1 and human_seat:
        raise ValueError("a human seat plays one game at a time; launch a single game to take a seat")
    cfg = lineup_config(config, lineup, meta / f"{gid}.yaml") if lineup is not None else config
    human_name = dict(table_seats(Path(cfg), seed)).get(human_seat, human_seat) if human_seat else None
    if human_seat:
        cfg = human_config(cfg, human_seat, meta / gid)
    if games > 1:
        cmd = [sys.executable, "-m", "mafiascope", "batch", "-c", str(cfg), "-n", str(int(games)), "--parallel", str(work.parallel),
               "--seed-base", str(int(seed)), "--logs", str(logs), "--id-prefix", gid]
    else:
        cmd = [sys.executable, "-m", "mafiascope", "run", "-c", str(cfg), "--seed", str(int(seed)), "--logs", str(logs),
               "--game-id", gid]
    if not probes:
        cmd.append("--no-probes")
    if not snapshots:
        cmd.append("--no-snapshots")
    if probes and probes_file is not None:
        cmd += ["--probes-file", str(probes_file)]
    log_file = meta / f"{gid}.log"
    proc = spawn(cmd, log_file, work=work, start_new_session=True)  # keys: app/keys.child_env (the policy and allowed keys only)
    first = f"{gid}-0000" if games > 1 else gid
    item = Launch(cmd=cmd, proc=proc, log_file=str(log_file), game_id=first, logs=str(logs), human_seat=human_name,
                  games=int(games), prefix=gid if games > 1 else None)
    registry().add(gid, item)
    return item


def plays_here(game_id: str) -> bool:
    """Whether this session plays the human seats of ``game_id``: in public mode only in a game it launched (an open
    move holds the seat's private prompt: its role and, for the Mafia, its partners), anywhere outside it."""
    return not private_view() or registry().get(game_id) is not None


def pending_moves(logs: str | Path, game_id: str) -> list[dict[str, Any]]:
    """The game's open human moves, if this session plays it (:func:`plays_here`); none otherwise."""
    if not plays_here(game_id):
        return []
    try:
        from mafiascope.backends.human import list_pending
    except Exception:
        return []
    return list_pending(logs, game_id)


def answer(logs: str | Path, game_id: str, seat: str, request_id: str, text: str) -> None:
    """Answer a human seat's open move; :class:`JobRefused` when this session does not play the game."""
    from mafiascope.backends.human import write_reply

    if not plays_here(game_id):
        raise JobRefused(f"game {game_id}: another visitor plays its human seat")
    write_reply(logs, game_id, seat, request_id, text)
