"""docs/cli.md and the argument parser describe the same commands, options and --json shapes."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from mafiascope.cli import build_parser, main

REPO = Path(__file__).resolve().parents[1]
CLI_MD = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")

HELP_EXEMPT: set[str] = set()


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def parser_commands() -> dict[str, argparse.ArgumentParser]:
    """Every runnable command path: ``run``, ``bus serve``, ``probes validate`` ... (groups are not leaves)."""
    out: dict[str, argparse.ArgumentParser] = {}

    def walk(prefix: str, p: argparse.ArgumentParser) -> None:
        subs = _subparsers(p)
        if not subs:
            out[prefix] = p
        for name, sp in subs.items():
            walk(f"{prefix} {name}".strip(), sp)

    walk("", build_parser())
    return out


def documented_commands() -> set[str]:
    """Command paths written as `mafiascope WORD [WORD]` in docs/cli.md (lower-case words only)."""
    groups = {name: set(_subparsers(p)) for name, p in _subparsers(build_parser()).items()}
    found = set()
    for m in re.finditer(r"`mafiascope ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)?)", CLI_MD):
        words = m.group(1).split()
        if words[0] in groups and len(words) > 1 and words[1] in groups[words[0]]:
            found.add(" ".join(words[:2]))
        else:
            found.add(words[0])
    return found


def test_every_parser_command_is_documented_and_every_documented_command_exists():
    commands = set(parser_commands())
    documented = documented_commands()
    assert commands - documented == set(), "commands missing from docs/cli.md"
    assert documented - commands == set(), "docs/cli.md names commands the parser does not have"


def _options(p: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in p._actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]


@pytest.mark.parametrize("path", sorted(parser_commands()))
def test_every_documented_option_exists(path):
    """Each `--flag` in a command's heading line of docs/cli.md is an option of that command."""
    flags = {s for a in _options(parser_commands()[path]) for s in a.option_strings}
    heads = [line for line in CLI_MD.splitlines() if line.startswith("### ") and f"`mafiascope {path} " in line + " "]
    for line in heads:
        for flag in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])\b", line):
            assert flag in flags, f"docs/cli.md documents {flag} for `mafiascope {path}`, the parser has no such option"


@pytest.mark.parametrize("path", sorted(p for p in parser_commands() if p.split()[0] not in HELP_EXEMPT))
@pytest.mark.slow
def test_every_option_has_help(path):
    missing = [a.dest for a in _options(parser_commands()[path]) if not a.help]
    assert missing == [], f"`mafiascope {path} --help` leaves these undescribed"


def _documented_keys(heading: str) -> set[str]:
    """The top-level keys of the `--json`: `{...}` line in the section whose heading starts with ``heading``."""
    section = CLI_MD.split(heading, 1)[1].split("\n### ", 1)[0]
    obj = re.search(r"`--json`: `(\{.*?\})`", section, re.S).group(1)
    depth, cur = 0, ""
    for ch in obj[1:-1]:  # keep only depth-0 names
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        elif depth == 0:
            cur += ch
    return set(re.findall(r'"(\w+)"', cur))


@pytest.mark.slow
def test_run_and_batch_json_shapes_match_the_docs(tmp_path, capsys):
    assert main(["run", "--seed", "2", "--logs", str(tmp_path), "--no-probes", "--no-snapshots", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    assert set(run) == _documented_keys("### `mafiascope run ")
    assert main(["batch", "-n", "2", "--logs", str(tmp_path / "b"), "--no-probes", "--no-snapshots", "--json"]) == 0
    batch = json.loads(capsys.readouterr().out)
    assert set(batch) == _documented_keys("### `mafiascope batch ")


def test_documented_flag_extraction_sees_the_run_heading():
    assert {"--seed", "--human", "--json"} <= set(re.findall(r"--[a-z-]+", next(
        line for line in CLI_MD.splitlines() if line.startswith("### `mafiascope run "))))
