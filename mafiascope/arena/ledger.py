"""The run's ledger: ``<run dir>/ledger.jsonl``, one JSON object per line, append-only.

    {"event": "plan", "params": {...}, "ts": ...}                       first line of a run
        params: roster, rules, games, seed, language, probes, mode (balanced | fixed), seating (fixed only)
    {"event": "scheduled", "game_id": ..., "rules": ..., "seed": ..., "seats": [...]}   (fixed: every role null)
    {"event": "finished", "game_id": ..., "winner": ..., "rounds": ..., "seconds": ..., "faults": ...}
    {"event": "failed", "game_id": ..., "error": ...}

Re-running the same command continues: finished games are skipped, a game that was
scheduled but not finished is played again from the start (its partial directory is removed).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from ..logs.io import read_jsonl
from ..logs.schema import run_record
from ..redaction import scrub

LEDGER_FILE = "ledger.jsonl"


class Ledger:
    def __init__(self, run_dir: str | Path):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LEDGER_FILE

    def exists(self) -> bool:
        return self.path.is_file()

    def records(self) -> list[dict[str, Any]]:
        return read_jsonl(self.path) if self.exists() else []

    def append(self, rec: dict[str, Any]) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        rec = {**rec, "ts": time.time()}
        run_record("arena_ledger", rec)  # checked against the schema before it is written
        # O_NOFOLLOW: a ledger.jsonl that is a symlink is refused (OSError), never appended through
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(scrub(rec), ensure_ascii=False, default=str) + "\n")
            fh.flush()

    def plan(self) -> dict[str, Any] | None:
        for r in self.records():
            if r.get("event") == "plan":
                return r.get("params")
        return None

    def status(self) -> dict[str, Any]:
        """Counts and id sets: scheduled, finished, failed (latest outcome per game wins)."""
        scheduled: list[str] = []
        state: dict[str, str] = {}
        winners: dict[str, str | None] = {}
        for r in self.records():
            ev, gid = r.get("event"), r.get("game_id")
            if ev == "scheduled" and gid not in state:
                scheduled.append(gid)
                state[gid] = "scheduled"
            elif ev in ("finished", "failed") and gid:
                state[gid] = ev
                if ev == "finished":
                    winners[gid] = r.get("winner")
        finished = [g for g in scheduled if state.get(g) == "finished"]
        failed = [g for g in scheduled if state.get(g) == "failed"]
        return {"scheduled": len(scheduled), "finished": len(finished), "failed": len(failed),
                "finished_ids": finished, "pending_ids": [g for g in scheduled if state.get(g) != "finished"],
                "winners": winners}  # fmt: skip
