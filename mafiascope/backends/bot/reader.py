"""Reading the text protocol: the system prompt (identity) and observation lines (events).

Everything here is a pure function of text. Observation lines are recognised with
:func:`mafiascope.engine.prompts.observation_patterns`; a line that matches no pattern (or
names no known player) continues the previous observation, so multi-line speeches are kept
whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from mafiascope.engine import prompts
from mafiascope.engine.parsing import parse_vote
from mafiascope.lexicon.names import russian_spellings

PROBE_MARKER = re.compile(r"\[(?:PRIVATE PROBE|ПРИВАТН\w* (?:ВОПРОС|ПРОБ\w*))[^\]\n]*\]", re.I)
CYRILLIC = re.compile(r"[А-Яа-яЁё]")

# the case endings a name's last letter gives way to (Дана -> Даны, Грей -> Грея); others add theirs
_ENDINGS = {"а": "[аыуеой]", "й": "[йяюе]"}


def cyrillic_name_regex(name: str) -> str:
    """The Cyrillic spellings of a pool name with their case forms (the caller adds ``\\w*``), or ''."""
    return "|".join(re.escape(s[:-1]) + _ENDINGS[s[-1]] if s[-1] in _ENDINGS else re.escape(s) for s in russian_spellings(name))


@dataclass
class Identity:
    language: str = "en"
    name: str = ""
    role: str = "Villager"
    partners: tuple[str, ...] = ()
    don: str = ""  # the partner marked "(Don)" in the partners line (ten-seat games; older prompts lack it)
    personality: dict[str, int] = field(default_factory=lambda: {t: 50 for t in prompts.TRAITS})
    variant: str | None = None  # ten-seat rules read from the system prompt: sport | open_table | imbalanced


def _ten_variant(system: str, p: prompts.Pack) -> str | None:
    """The ten-seat variant whose rules paragraph the system prompt carries (None for classic)."""
    t = p.ten
    if not t or t["rules_common"][:80] not in system:
        return None
    for v in ("sport", "open_table", "imbalanced"):
        text = t.get(f"rules_{v}", "").strip()
        if text and text[:80] in system:
            return v
    return "unknown"


@lru_cache(maxsize=4)
def _system_regexes(language: str) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    p = prompts.PACKS[language]
    head = p.system.split("{goal}")[0]
    rx = re.escape(head)
    rx = rx.replace(re.escape("{name}"), r"(?P<name>.+?)").replace(re.escape("{role}"), r"(?P<role>.+?)")
    partners = re.escape(p.partners_line.strip()).replace(re.escape("{partners}"), r"(?P<partners>.+?)")
    traits = "|".join(re.escape(v) for v in p.trait_names.values())
    trait_rx = re.compile(rf"^\s*-\s*(?P<trait>{traits}):\s*(?P<value>\d+)", re.M)
    return re.compile(rx, re.S), re.compile(partners), trait_rx


def read_identity(system: str) -> Identity:
    """Name, role, partners and Big-Five values from a system prompt of any pack."""
    for lang, p in prompts.PACKS.items():
        head, partners_rx, trait_rx = _system_regexes(lang)
        m = head.search(system)
        if not m:
            continue
        ident = Identity(language=lang, name=m.group("name").strip(), variant=_ten_variant(system, p))
        ident.role = prompts.role_from_label(p, m.group("role")) or "Villager"
        pm = partners_rx.search(system)
        if pm:
            ident.partners, ident.don = _partners(pm.group("partners"), p)
        inv = {v: k for k, v in p.trait_names.items()}
        for tm in trait_rx.finditer(system):
            ident.personality[inv[tm.group("trait")]] = max(0, min(100, int(tm.group("value"))))
        return ident
    return Identity(language="ru" if CYRILLIC.search(system) else "en")


def _partners(text: str, p: prompts.Pack) -> tuple[tuple[str, ...], str]:
    """Partner names and the Don among them from "Alex (Don), Gray" (a bare list in older prompts)."""
    marks = {p.role_names.get("Don", "Don").lower(), "don", "дон"}
    names, don = [], ""
    for part in text.split(","):
        m = re.match(r"\s*(.+?)\s*(?:\((?P<mark>[^)]*)\))?\s*$", part)
        if not m or not m.group(1).strip():
            continue
        name = m.group(1).strip()
        names.append(name)
        if (m.group("mark") or "").strip().lower() in marks:
            don = name
    return tuple(names), don


def split_names(text: str) -> list[str]:
    return [x.strip().strip(".") for x in re.split(r",\s*", text.strip()) if x.strip().strip(".")]


# --------------------------------------------------------------------------- observations


@dataclass(frozen=True)
class Obs:
    kind: str  # intro said voted ally night check elim noelim round
    name: str = ""  # actor (speaker / voter / ally / eliminated / checked / night subject)
    text: str = ""  # speech, or night outcome ("kill" | "save" | "none")
    target: str = ""  # vote / ally target
    role: str = ""  # revealed role or check verdict ("Mafia" | "Town")


def _host_rx(template: str) -> re.Pattern[str]:
    return re.compile("^" + re.escape(template).replace(re.escape("{round}"), r"(?P<round>\d+)") + "$")


@lru_cache(maxsize=4)
def _obs_patterns(language: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    p = prompts.PACKS[language]
    rows = list(prompts.observation_patterns(p).items())
    if p.ten:  # the host's night and day lines mark where the Mafia's private night talk begins and ends
        rows += [("host_night", _host_rx(p.ten["host_night"])), ("host_night", _host_rx(p.ten["host_night_zero"])),
                 ("host_day", _host_rx(p.ten["host_day"])),
                 ("host", re.compile("^" + re.escape(p.ten["host_day"].split(":")[0]) + r":.*$"))]  # fmt: skip
    return tuple(rows)


@lru_cache(maxsize=64)
def name_regex(players: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regex finding any player name (Latin, or a Cyrillic stem of the default pool)."""
    alts: list[str] = []
    for n in sorted(players, key=len, reverse=True):
        cyr = cyrillic_name_regex(n)
        alts.append(f"(?P<n{len(alts)}>" + re.escape(n) + (f"|(?:{cyr})\\w*" if cyr else "") + ")")
    if not alts:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(alts) + r")(?!\w)")


def find_names(text: str, players: tuple[str, ...]) -> list[tuple[int, str]]:
    """(offset, player) for every mention of a player in ``text``."""
    rx = name_regex(players)
    if rx is None:
        return []
    order = sorted(players, key=len, reverse=True)
    out = []
    for m in rx.finditer(text):
        idx = int(m.lastgroup[1:])  # type: ignore[index]
        out.append((m.start(), order[idx]))
    return out


def _vote_target(text: str, players: tuple[str, ...]) -> str:
    """The vote in another seat's reply, read as the engine reads it (a protocol line or a stated vote)."""
    got = parse_vote(text, list(players))
    return got.target if got.valid and got.target else ""


def parse_observations(text: str, language: str, players: tuple[str, ...]) -> list[Obs]:
    """Observation lines -> events. ``players`` are the known seat names (for validation)."""
    p = prompts.PACKS.get(language, prompts.EN)
    pats = _obs_patterns(p.language)
    known = set(players)
    chunks: list[list] = []  # [kind, groupdict, text-lines]
    for line in text.split("\n"):
        hit = None
        if line.strip():
            for kind, rx in pats:
                m = rx.match(line)
                if not m:
                    continue
                g = m.groupdict()
                nm = g.get("name") or (g.get("target") if kind in ("check", "don_check") else None)
                if nm is not None and known and nm.strip() not in known:
                    continue
                hit = (kind, g)
                break
        if hit:
            chunks.append([hit[0], hit[1], [hit[1].get("text") or ""]])
        elif chunks and chunks[-1][0] in ("said", "intro", "voted"):
            chunks[-1][2].append(line)
    out: list[Obs] = []
    for kind, g, lines in chunks:
        body = "\n".join(lines).strip()
        if kind in ("said", "intro"):
            out.append(Obs(kind, g["name"].strip(), body))
        elif kind == "voted":
            out.append(Obs("voted", g["name"].strip(), body, _vote_target(body, players)))
        elif kind == "ally_choice":
            if g["target"].strip() in known or not known:
                out.append(Obs("ally", g["name"].strip(), target=g["target"].strip()))
        elif kind == "check":
            verdict = g["verdict"].strip()
            out.append(Obs("check", g["target"].strip(), role="Mafia" if verdict == p.verdict_mafia else "Town"))
        elif kind == "eliminated_role":
            role = prompts.role_from_label(p, g["role"]) or g["role"].strip()
            out.append(Obs("elim", g["name"].strip(), role=role))
        elif kind == "eliminated":
            out.append(Obs("elim", g["name"].strip()))
        elif kind == "no_elimination":
            out.append(Obs("noelim", text=g.get("reason", "")))
        elif kind in ("silent", "abstained"):
            out.append(Obs(kind, g["name"].strip()))
        elif kind == "round_start":
            out.append(Obs("round", text=g["round"]))
        elif kind in ("night_result", "kill_result", "save_result"):
            out.extend(_night(g.get("result") or "", p, kind, g))
        elif kind == "nomination":
            if g["target"].strip() in known or not known:
                out.append(Obs("nominated", g["name"].strip(), target=g["target"].strip()))
        elif kind == "don_check":
            verdict = g["verdict"].strip()
            out.append(Obs("don_check", g["target"].strip(), role="Sheriff" if verdict == p.ten["verdict_sheriff"] else "Town"))
        elif kind == "shot_order":
            names = [n for n in split_names(g["order"]) if n in known or not known]
            out.append(Obs("shot_order", text=", ".join(names)))
        elif kind == "passed":
            out.append(Obs("passed", g["name"].strip()))
        elif kind in ("host_night", "host_day"):
            out.append(Obs(kind, text=g.get("round") or ""))
    return out


def _night(result: str, p: prompts.Pack, kind: str, g: dict) -> list[Obs]:
    pats = dict(_obs_patterns(p.language))
    if kind == "kill_result":
        return [Obs("night", g["victim"].strip(), "kill")]
    if kind == "save_result":
        return [Obs("night", g["saved"].strip(), "save")]
    out = []
    for part in re.split(r"(?<=[.!])\s+", result.strip()):
        m = pats["kill_result"].match(part)
        if m:
            out.append(Obs("night", m.group("victim").strip(), "kill"))
            continue
        m = pats["save_result"].match(part)
        if m:
            out.append(Obs("night", m.group("saved").strip(), "save"))
            continue
        if part.strip() == p.no_kill_result:
            out.append(Obs("night", "", "none"))
    return out
