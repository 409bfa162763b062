"""The glossary: every term a figure of the app, the CLI or a report is labelled with, explained in a sentence.

One source for the app's help texts (``help=`` tooltips, captions: :func:`tip`) and for docs/glossary.md
(:func:`markdown`; ``python -m mafiascope.lexicon.glossary --write docs/glossary.md`` regenerates it and
tests/test_glossary.py checks that the file matches). The exact rules behind each term are in docs/metrics.md,
cited by section.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Term:
    key: str  # how code asks for it (tip("ECE"))
    name: str  # as a page or a report labels it
    text: str  # one or two plain sentences
    ref: str = ""  # where the exact rule is (docs/metrics.md §N, docs/arena.md, ...)
    group: str = "Beliefs"


TERMS: tuple[Term, ...] = (
    # beliefs about roles
    Term(
        "F1",
        "F1 · first-order accuracy",
        "How often a town agent's guess of another living player's role is right, among its guesses that are not "
        "Unknown; shown per round against chance (what guessing by shuffling the living roles would score).",
        "docs/metrics.md §4",
    ),
    Term(
        "unknown rate",
        "Unknown rate",
        "Share of an agent's role guesses that are Unknown (it declined to guess).",
        "docs/metrics.md §4",
    ),
    Term(
        "Mafia recall",
        "Mafia recall",
        "Among town agents' guesses about Mafia players, the share that named them Mafia (Unknown counts as a miss).",
        "docs/metrics.md §4",
    ),
    Term(
        "chance",
        "chance",
        "What the same measure would score by guessing at random among the living players: the line a real signal has to beat.",
        "docs/metrics.md §4, §7",
    ),
    Term(
        "F2",
        "F2 · calibration",
        "Whether stated confidence matches accuracy: role guesses are grouped by the confidence the agent gave "
        "(0-19, 20-39, ... 80-100) and each group's share of right guesses is compared with its confidence.",
        "docs/metrics.md §5",
    ),
    Term(
        "ECE",
        "ECE · expected calibration error",
        "The average gap between stated confidence and actual accuracy over the confidence bins, weighted by how "
        "many guesses each bin holds: 0 is perfectly calibrated, 0.3 means confidence is off by 30 points on "
        "average.",
        "docs/metrics.md §5",
    ),
    Term(
        "Brier",
        "Brier score",
        "The mean squared difference between the stated confidence (as 0-1) and whether the guess was right (1 or "
        "0): 0 is perfect, 0.25 is what always saying 50% scores, lower is better.",
        "docs/metrics.md §5",
    ),
    Term(
        "reliability diagram",
        "Reliability diagram",
        "Accuracy per stated-confidence bin against the diagonal of perfect calibration: bars below the diagonal "
        "are overconfident, above it underconfident.",
        "docs/metrics.md §5",
    ),
    # second order
    Term(
        "F3",
        "F3 · second-order consistency",
        "Whether agents know how others see them: agent A's statement of how B regards A (social_map, "
        "toward_me) compared with B's own latest guess about A. Mafia-Mafia pairs are left out (they know each "
        "other).",
        "docs/metrics.md §6",
        "Second order",
    ),
    Term(
        "tau",
        "τ · confidence threshold",
        "How sure B's guess about A must be to count: a Mafia guess at or above τ means B suspects A, a town-role "
        "guess at or above τ means B trusts A, anything else is neutral.",
        "docs/metrics.md §6",
        "Second order",
    ),
    Term(
        "spotlight ratio",
        "Spotlight ratio (over-prediction ratio)",
        "Pairs where an agent says it is suspected ÷ pairs where it actually is: above 1, agents believe they are "
        "in the spotlight more often than they are; below 1, they miss suspicion aimed at them.",
        "docs/metrics.md §6",
        "Second order",
    ),
    Term(
        "majority baseline",
        "Majority baseline",
        "The accuracy of always answering the most common actual attitude; an accuracy above it is real "
        "knowledge, not a default answer.",
        "docs/metrics.md §6",
        "Second order",
    ),
    Term(
        "match score",
        "Match score (Impersonate)",
        "For one agent at one step: the share of the other living players whose actual attitude toward it (from "
        "their role guesses) is the attitude it believes they hold.",
        "docs/metrics.md §11.2",
        "Second order",
    ),
    # votes
    Term(
        "F4",
        "F4 · belief-vote coupling",
        "Whether an agent's beliefs predict its vote: its top suspect (top-1), or the players it called Mafia "
        "(committed set), in its last answer before voting, against whom it voted for, compared with chance.",
        "docs/metrics.md §7",
        "Votes",
    ),
    Term(
        "top-1",
        "top-1 (F4)",
        "The vote went to the player the voter ranked most suspicious just before voting.",
        "docs/metrics.md §7.1",
        "Votes",
    ),
    Term(
        "committed set",
        "committed Mafia set (F4)",
        "The vote went to one of the players the voter had labelled Mafia in its last role assessment before voting.",
        "docs/metrics.md §7.1",
        "Votes",
    ),
    Term(
        "post-vote",
        "post-vote top-1 (F4)",
        "The top-1 rule on the last ranking before the tally, which may come after the voter's own ballot: an upper "
        "reference, not a prediction.",
        "docs/metrics.md §7.2",
        "Votes",
    ),
    # dynamics and episodes
    Term(
        "volatility",
        "Suspicion volatility",
        "How much an agent's suspicion scores move between two consecutive answers (0 = not at all, 2 = completely "
        "different players suspected).",
        "docs/metrics.md §8",
        "Dynamics",
    ),
    Term(
        "flip rate",
        "Top-suspect flip rate",
        "How often an agent's most suspected player changes between consecutive answers, not counting changes forced "
        "by that player's death.",
        "docs/metrics.md §8",
        "Dynamics",
    ),
    Term(
        "return rate",
        "Return rate",
        "Among flips, the share that go back to a player the agent had suspected most before.",
        "docs/metrics.md §8",
        "Dynamics",
    ),
    Term(
        "D",
        "D · collective suspicion shift",
        "Between two consecutive discussion steps, how far the crowd's top suspects moved (total-variation "
        "distance): 0 = every agent still suspects the same player, 1 = the whole crowd now points at other "
        "players.",
        "docs/metrics.md §12",
        "Dynamics",
    ),
    Term(
        "K",
        "K · agents who switched",
        "How many agents changed their top suspect between the two steps.",
        "docs/metrics.md §12",
        "Dynamics",
    ),
    Term(
        "episode",
        "Episode (window)",
        "A collective suspicion shift (D > 0) between two discussion steps; shifts a couple of messages apart in "
        "one round are merged into one window.",
        "docs/metrics.md §12",
        "Dynamics",
    ),
    # the live view
    Term(
        "deception",
        "Deception success (“hid N%”)",
        "For a living Mafia player: the share of town observers with a guess about it that do not name it Mafia. "
        "100% = nobody has seen through it.",
        "docs/metrics.md §11.2",
        "Live view",
    ),
    Term(
        "crowd recall",
        "Crowd Mafia recall",
        "The share of living Mafia players that more than half of the town observers currently name Mafia.",
        "docs/metrics.md §11.2",
        "Live view",
    ),
    Term(
        "second-order consistency",
        "Second-order consistency (per step)",
        "The share of an agent's statements of how others see it that match those others' current guesses about it.",
        "docs/metrics.md §11.2",
        "Live view",
    ),
    Term(
        "parse rate",
        "Probe parse rate (F5)",
        "The share of probe answers that could be read as the structured answer asked for (after the lenient "
        "repair of cut or wrapped JSON).",
        "docs/metrics.md §10",
        "Probes",
    ),
    Term(
        "transcript only",
        "Transcript only",
        "A game without probe answers (probes were off, or an original-format game without its probe log): its "
        "transcript and outcome are there, beliefs and belief metrics are not.",
        "docs/logs.md",
        "Probes",
    ),
    # uncertainty
    Term(
        "95% CI",
        "95% CI (game-level cluster bootstrap)",
        "The range the figure would take in 95% of replays of the corpus, found by resampling whole games (the "
        "seats of one game are not independent); with one game there is no interval.",
        "docs/metrics.md §9",
        "Uncertainty",
    ),
    Term(
        "Wilson",
        "Wilson 95% interval",
        "The interval of a rate of k successes in n tries that stays sensible for small n and for rates near 0 or 100%.",
        "docs/metrics.md §9",
        "Uncertainty",
    ),
    Term(
        "p",
        "p (bootstrap)",
        "How often a difference at least this far from 0 would show up if the two models did not differ, from the "
        "same game resamples; small p = unlikely to be noise.",
        "docs/metrics.md §16",
        "Uncertainty",
    ),
    Term(
        "Holm p",
        "Holm-adjusted p",
        "The p-value corrected for comparing many metrics at once (Holm's method), so that a few small p among "
        "many are not read as findings by chance.",
        "docs/metrics.md §16",
        "Uncertainty",
    ),
    Term(
        "se",
        "se · standard error",
        "How far a mean would typically move between replays of the tournament: gaps between models smaller than "
        "about two se are noise.",
        "docs/metrics.md §15",
        "Uncertainty",
    ),
    Term(
        "bootstrap resamples",
        "Bootstrap resamples (B)",
        "How many game resamples the intervals are computed from; more is steadier and slower, 0 turns intervals off.",
        "docs/metrics.md §9",
        "Uncertainty",
    ),
    # arena
    Term(
        "points",
        "Points (arena)",
        "1 for each seat on the winning side, plus a best-move bonus for the first seat shot at night: +0.25 if two "
        "of the three players it names as its last suspects are Mafia, +0.5 if all three are.",
        "docs/metrics.md §15",
        "Arena",
    ),
    Term(
        "points vs side",
        "Points vs side",
        "A seat's points minus the average points of its side under the same rules, so Mafia and town seats are "
        "scored on one scale: 0 = as good as the side's average, above 0 = better.",
        "docs/metrics.md §15",
        "Arena",
    ),
    Term(
        "score",
        "Score (arena leaderboard)",
        "A model's mean points vs side over all the seats it played, with its standard error and 95% interval.",
        "docs/metrics.md §15",
        "Arena",
    ),
    Term(
        "pairs ranking",
        "Pairs: total ÷ (games + 4)",
        "Pairs of models ranked by their total effect shrunk toward 0 for few shared games, so a pair seen once "
        "does not top the table.",
        "docs/metrics.md §15",
        "Arena",
    ),
    Term(
        "Spearman",
        "Spearman rank correlation",
        "How similarly two rule sets order the models (1 = the same order, 0 = unrelated, -1 = reversed).",
        "docs/metrics.md §15",
        "Arena",
    ),
    Term(
        "invalid game",
        "Invalid game (fault budget)",
        "A game where more than the fault budget (20% by default) of moves fell back because a backend failed: it "
        "is recorded but left out of every figure.",
        "docs/backends.md",
        "Arena",
    ),
    # replay
    Term(
        "branch",
        "Branch (fork)",
        "A game replayed from a saved step of another game (its parent): everything before the fork point is "
        "copied, everything after is played again.",
        "docs/replay.md",
        "Replay",
    ),
    Term(
        "fork point",
        "Fork point",
        "The step a branch starts from. A replaced message branches before that message (the replacement is the "
        "branch's first new move); a resample or a night override branches after the picked step.",
        "docs/replay.md",
        "Replay",
    ),
    Term(
        "resample",
        "Resample",
        "A branch whose moves after the fork point are simply drawn again, with no change.",
        "docs/replay.md",
        "Replay",
    ),
    Term(
        "night override",
        "Night override",
        "A branch in which one night action still to come (a kill, protection or check) is forced to a chosen target.",
        "docs/replay.md",
        "Replay",
    ),
    Term(
        "PRE/POST",
        "Attribution: PRE and POST",
        "For one message: rerolls from just before it (PRE, the message may come out differently) against rerolls "
        "from just after it (POST, the message kept); the difference is the message's effect on the outcome.",
        "docs/replay.md",
        "Replay",
    ),
    Term(
        "compat",
        "Metric mode: default or compat",
        "The default mode corrects the original MafiaScope analysis's quirks; compat reproduces the original's "
        "published figures exactly.",
        "docs/metrics.md §13",
        "Settings",
    ),
)
BY_KEY = {t.key: t for t in TERMS}


def tip(*keys: str) -> str:
    """The help text of one or more terms (a tooltip or a caption): ``"ECE: ... Brier: ..."``."""
    return "  \n".join(f"**{BY_KEY[k].name}**: {BY_KEY[k].text}" if len(keys) > 1 else BY_KEY[k].text for k in keys)


def plain(key: str) -> str:
    """One term's sentence without Markdown (a chart subtitle, a CSV note)."""
    return BY_KEY[key].text


BEGIN, END = "<!-- glossary:begin (generated from mafiascope/lexicon/glossary.py) -->", "<!-- glossary:end -->"


def markdown() -> str:
    """The glossary as the Markdown block docs/glossary.md holds between its markers."""
    out = [BEGIN]
    for group in dict.fromkeys(t.group for t in TERMS):
        out += ["", f"## {group}", ""]
        for t in (t for t in TERMS if t.group == group):
            out.append(f"- **{t.name}**: {t.text}" + (f" ({t.ref})" if t.ref else ""))
    return "\n".join([*out, "", END])


def write(path: str | Path) -> None:
    """Replace the block between the markers of ``path`` by :func:`markdown` (the file keeps its other text)."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    p.write_text(head + markdown() + tail, encoding="utf-8")


if __name__ == "__main__":  # python -m mafiascope.lexicon.glossary --write docs/glossary.md
    if sys.argv[1:2] == ["--write"] and len(sys.argv) == 3:
        write(sys.argv[2])
    else:
        print(markdown())
