"""The page registry: one entry per file in pages/ (url path = the `page` of a view's URL)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageDef:
    file: str
    title: str
    icon: str
    url: str
    section: str
    help: str = ""


PAGES: tuple[PageDef, ...] = (
    PageDef("pages/live.py", "Live Game", ":material/casino:", "live", "Games", "Launch, play and inspect a game step by step"),
    PageDef("pages/impersonate.py", "Impersonate", ":material/theater_comedy:", "impersonate", "Games", "See the game through one agent's eyes"),
    PageDef("pages/replay.py", "Replay", ":material/fork_right:", "replay", "Games", "Fork any step into counterfactual branches, compare them with their parent, run experiments"),
    PageDef("pages/calibration.py", "Calibration", ":material/target:", "calibration", "Analysis", "Stated confidence vs accuracy"),
    PageDef("pages/second_order.py", "Second-Order", ":material/psychology:", "second_order", "Analysis", "Do agents know who suspects them?"),
    PageDef("pages/episodes.py", "Suspicion Episodes", ":material/waves:", "episodes", "Analysis", "Collective suspicion shifts"),
    PageDef("pages/dashboard.py", "Cross-Game Dashboard", ":material/dashboard:", "dashboard", "Analysis", "Corpus-wide figures"),
    PageDef("pages/search.py", "Search", ":material/search:", "search", "Analysis", "Find words in utterances, probe reasons and plans"),
    PageDef("pages/arena.py", "Arena", ":material/stadium:", "arena", "Arena", "Ten-seat tournaments across models: leaderboards, pairs, rule-set measures"),
    PageDef("pages/studies.py", "Studies", ":material/science:", "studies", "Arena", "Plan, price, run and resume studies"),
)
BY_URL = {p.url: p for p in PAGES}
BY_FILE = {p.file: p for p in PAGES}
