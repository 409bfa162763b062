"""Non-invasiveness audit of recorded games (``mafiascope audit LOGS``).

For every snapshot in ``state.jsonl`` the acting context of every seat
(``players[].messages``) is scanned for

* ``probe_header``   -- the private-probe marker line (a probe call's message was kept);
* ``probe_question`` -- the text of a question from ``introspection.jsonl``;
* ``probe_answer``   -- the text of a probe answer (``answer_raw``, at least 24 characters);
* ``private_event``  -- the text of a private ``game.jsonl`` event (``visible_to`` set:
  night actions, check results, ...) in the context of a seat it was not visible to.

Each game's ``game.jsonl`` is also counted for ``setup`` and ``game_over`` records: more than
one of either means two writers shared the game id (``doubled_games``).

Contexts repeat from snapshot to snapshot, so each distinct (seat, message) text is
checked once; ``messages_checked`` counts every message of every snapshot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..engine.observation import PROBE_HEADER
from ..engine.snapshots import derive_contexts
from ..logs import LogFormatError, game_language, kinds, read_game
from ..logs.io import list_game_dirs

MIN_ANSWER_CHARS = 24
MIN_PRIVATE_CHARS = 12
_HEADER_MARKERS = (PROBE_HEADER, "[PRIVATE PROBE")


def _private_texts(events: list[dict[str, Any]]) -> list[tuple[str, set[str], str]]:
    """(text, seats allowed to see it, description) for every private event with identifying text."""
    from ..engine.observation import RENDERERS
    from ..engine import prompts

    out = []
    lang = game_language(next((e for e in events if kinds.of(e) == kinds.SETUP), {}), events)
    for ev in events:
        if kinds.of(ev) == kinds.SETUP:
            continue
        vt = ev.get("visible_to")
        if vt is None:
            continue
        allowed = set(vt)
        desc = f"{kinds.of(ev)} r{ev.get('round')} seq {ev.get('msg_seq')}"
        resp = ev.get("response")
        if isinstance(resp, str) and len(resp.strip()) >= MIN_PRIVATE_CHARS:
            out.append((resp.strip(), allowed, desc))
        render = RENDERERS.get(kinds.of(ev) or "")
        if render is not None and not isinstance(resp, str):
            try:
                line = render(ev, None, prompts.pack(lang), None)  # type: ignore[arg-type]
            except Exception:  # a renderer that needs the seat/state: the response text is enough
                line = None
            if line and len(line) >= MIN_PRIVATE_CHARS:
                out.append((line, allowed, desc))
    return out


def audit_game(gdir: Path) -> dict[str, Any]:
    gid = gdir.name
    res: dict[str, Any] = {"game_id": gid, "snapshots": 0, "messages_checked": 0, "leaks": 0, "by_kind": {}, "examples": [],
                           "setup_records": 0, "game_over_records": 0}  # fmt: skip
    try:
        log = read_game(gdir, skip_corrupt=True)
    except LogFormatError as exc:
        res["note"] = f"unreadable: {exc}"
        return res
    events = [log.raw_setup, *log.records]
    # more than one of either: two writers on one id
    res["setup_records"] = 1 + len(log.records_of(kinds.SETUP))
    res["game_over_records"] = len(log.records_of(kinds.GAME_OVER))
    if not log.has_snapshots:
        res["note"] = "no state.jsonl (snapshots off): nothing to audit"
        return res
    questions: set[str] = set()
    answers: set[str] = set()
    for rec in log.probe_dicts:
        q = (rec.get("question") or "").strip()
        if q:
            questions.add(q)
        a = rec.get("answer_raw")
        if isinstance(a, str) and len(a.strip()) >= MIN_ANSWER_CHARS:
            answers.add(a.strip())
    private = _private_texts(events)
    seen: set[tuple[str, str]] = set()

    def leak(kind: str, seat: str, snap: dict[str, Any], detail: str) -> None:
        res["leaks"] += 1
        res["by_kind"][kind] = res["by_kind"].get(kind, 0) + 1
        if len(res["examples"]) < 20:
            res["examples"].append({"kind": kind, "seat": seat, "round": snap.get("round"), "msg_seq": snap.get("msg_seq"), "detail": detail[:160]})

    for snap in log.iter_snapshot_dicts(derive_contexts):
        res["snapshots"] += 1
        for pl in snap.get("players") or []:
            seat = pl.get("name", "?")
            for msg in pl.get("messages") or []:
                res["messages_checked"] += 1
                content = msg.get("content") or ""
                key = (seat, content)
                if key in seen:
                    continue
                seen.add(key)
                if any(m in content for m in _HEADER_MARKERS):
                    leak("probe_header", seat, snap, content)
                for q in questions:
                    if q in content:
                        leak("probe_question", seat, snap, q)
                        break
                for a in answers:
                    if a in content:
                        leak("probe_answer", seat, snap, a)
                        break
                for text, allowed, desc in private:
                    if seat not in allowed and text in content:
                        leak("private_event", seat, snap, f"{desc}: {text}")
    return res


def audit_logs(root: str | Path) -> dict[str, Any]:
    dirs = list_game_dirs(root)
    games = [audit_game(d) for d in dirs]
    return {
        "games": len(games),
        "snapshots": sum(g["snapshots"] for g in games),
        "messages_checked": sum(g["messages_checked"] for g in games),
        "leaks": sum(g["leaks"] for g in games),
        "doubled_games": [{"game_id": g["game_id"], "setup_records": g["setup_records"], "game_over_records": g["game_over_records"]}
                          for g in games if g["setup_records"] > 1 or g["game_over_records"] > 1],  # fmt: skip
        "per_game": games,
    }
