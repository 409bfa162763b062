"""The ten-seat family's words: its protocol lines (NOMINATE:, SUSPECTS:, ORDER:), how a speech
names players and passes, and the host, whose template lines an LLM backend may retell
(options ``host: llm`` and ``host_backend: NAME``; it never decides anything).
"""

from __future__ import annotations

import re
from typing import Any

from ...backends.base import CompletionRequest
from ...logs import kinds as K
from ...logs.schema import HostLine
from .. import prompts
from ..markers import PROTOCOL_MARKERS, ActionMarker, Markers
from ..parsing import match_name, parse_list, strip_think
from ..records import event
from ..state import GameState
from .base import Outcome


def names_csv(names: list[str]) -> str:
    return ", ".join(names)


def host_line(state: GameState, key: str, **kw: Any) -> dict[str, Any]:
    p = prompts.pack(state.language)
    text = p.ten[key].format(**kw)
    return event(HostLine, state.game_id, round=state.round, text=text, template=key, host="template")


def mentioned(text: str, names: list[str]) -> list[str]:
    """Players named in a speech (whole-word, case-insensitive; Russian inflections via the parser)."""
    out: list[str] = []
    for tok in re.findall(r"[\w’']+", text or ""):
        if len(tok) < 3:
            continue
        name, note = match_name(tok, names)
        if name and note in ("exact", "russian inflection") and name not in out:
            out.append(name)
    return out


# the ten-seat protocol lines: the shared ones plus nominations, the best move and the Don's order
MARKERS: Markers = PROTOCOL_MARKERS.with_actions(
    nominate=ActionMarker(heads=("NOMINATE", "ВЫСТАВЛЯЮ")),
    suspects=ActionMarker(heads=("SUSPECTS", "ПОДОЗРЕВАЮ")),
    order=ActionMarker(heads=("ORDER", "ПОРЯДОК")),
)


def parse_order(text: str, names: list[str]) -> list[str]:
    """The Don's ``ORDER: A, B, C`` line (last one wins), resolved among ``names``."""
    return parse_list(text, "order", names, limit=len(names), markers=MARKERS)


def is_pass(text: str, word: str) -> bool:
    t = re.sub(r"[*_`.!\s]+", " ", text or "").strip().upper()
    return t in (word.upper(), "PASS") or (len(t) <= 24 and t.split(" ")[0] in (word.upper(), "PASS"))


async def narrate(state: GameState, outcome: Outcome, backends: dict[str, Any]) -> None:
    """Retell template host lines through an LLM backend (options host=llm, host_backend=NAME).

    The host sees only the public template line it retells; a failed call keeps the template.
    """
    if state.rules.option("host") != "llm":
        return
    backend = backends.get(str(state.rules.option("host_backend", "")))
    if backend is None:
        return
    p = prompts.pack(state.language)
    for ev in outcome.events:
        if ev.get("kind") != K.HOST or ev.get("visible_to") is not None:
            continue
        messages = [{"role": "system", "content": p.ten["host_system"]}, {"role": "user", "content": ev["text"]}]
        req = CompletionRequest(messages, 120, "act", "host", "host", state.derive_seed("host", state.round, ev["text"]),
                                game_id=state.game_id)  # fmt: skip
        try:
            c = await backend.complete(req)
        except Exception as exc:  # the host never stops a game
            ev["host_error"] = str(exc)[:200]
            continue
        text = strip_think(c.text) if c.ok else ""
        if text:
            ev["template_text"], ev["text"], ev["host"] = ev["text"], text, getattr(backend, "model_label", "llm")
        else:
            ev["host_error"] = (c.error or "empty reply")[:200]
