"""Bad input to the CLI: one clear error line naming the file/field/value, a non-zero exit, no
traceback, no key in any output; an interrupted run or batch leaves valid logs."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from mafiascope.backends.registry import clear_cache
from mafiascope.cli import main, one_line

REPO = Path(__file__).resolve().parents[1]

KEYED_CONFIG = """\
name: keyed
seats:
  - {backend: gpt}
  - {backend: bot}
  - {backend: bot}
  - {backend: bot}
  - {backend: bot}
  - {backend: bot}
  - {backend: bot}
backends:
  gpt: {type: openai, base_url: "http://127.0.0.1:9/v1", model: m, api_key: "${MAFIASCOPE_QA_KEY}", max_retries: 0, timeout: 1}
  bot: {type: bot, preset: analyst}
probes: {enabled: false}
"""


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"expected one error line, got:\n{err}"
    assert "Traceback" not in err
    return lines[0]


# ----------------------------------------------------------------------------- config and battery files


def test_bad_yaml_config_is_one_line_with_file_and_position(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nrules: [\n")
    code, out, err = run_cli(capsys, "run", "-c", str(bad), "--logs", str(tmp_path / "logs"))
    line = error_line(err)
    assert code == 2 and out == ""
    assert line.startswith(f"mafiascope run: error: {bad}: not valid YAML") and "line 3, column 1" in line
    assert "<unicode string>" not in line


def test_config_field_errors_are_joined_on_one_line(tmp_path, capsys):
    bad = tmp_path / "typo.yaml"
    bad.write_text("name: x\nseatz: []\nlanguage: fr\n")
    code, _, err = run_cli(capsys, "batch", "-c", str(bad), "--logs", str(tmp_path / "logs"))
    line = error_line(err)
    assert code == 2 and "seatz: Extra inputs are not permitted" in line and "language: 'fr'" in line


def test_unknown_placeholder_in_probes_file_fails_before_the_game(tmp_path, capsys):
    battery = tmp_path / "b.yaml"
    battery.write_text('probes:\n  - id: p1\n    question: "hi {mood} {player}"\n')
    logs = tmp_path / "logs"
    for cmd in ("run", "batch"):
        code, _, err = run_cli(capsys, cmd, "--probes-file", str(battery), "--logs", str(logs))
        line = error_line(err)
        assert code == 2 and str(battery) in line and "probe 'p1'" in line and "{mood}" in line
    assert not logs.exists()  # no half-made game directory


def test_missing_api_key_variable_is_named_and_nothing_starts(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MAFIASCOPE_QA_KEY", raising=False)
    cfg = tmp_path / "keyed.yaml"
    cfg.write_text(KEYED_CONFIG)
    logs = tmp_path / "logs"
    for args in (["run"], ["batch", "-n", "3"], ["validate", "ab", "--games", "1"]):
        code, out, err = run_cli(capsys, *args, "-c", str(cfg), "--logs", str(logs))
        line = error_line(err)
        assert code == 2 and out == ""
        assert "backend 'gpt'" in line and "${MAFIASCOPE_QA_KEY}" in line
    assert not logs.exists()


@pytest.mark.slow
def test_fork_of_a_game_whose_key_variable_is_gone(tmp_path, capsys, monkeypatch):
    key = "sk-qa-secret-0123456789abcdef"
    monkeypatch.setenv("MAFIASCOPE_QA_KEY", key)
    cfg = tmp_path / "keyed.yaml"
    cfg.write_text(KEYED_CONFIG)
    logs = tmp_path / "logs"
    # nothing listens on port 9: skip the preflight and the fault budget to get a recorded game at all
    code, out, err = run_cli(capsys, "run", "-c", str(cfg), "--logs", str(logs), "--game-id", "g", "--seed", "1", "-q",
                             "--no-preflight", "--fault-budget", "1")  # fmt: skip
    assert code == 0, err
    assert all(key not in p.read_text() for p in (logs / "g").glob("*.jsonl"))
    commands = (["fork", "g", "--at", "1.1"], ["replay", "attribution", "g", "--utterances", "0.3", "-n", "1"],
                ["replay", "bifurcate", "g", "--at", "0.3", "--samples", "2", "--select", "1"])
    clear_cache()  # a later process: the backend instance of the run (key resolved) is not shared with it
    # the log names a key that is no provider's: without the operator's policy it is refused (docs/security.md),
    # the line naming the variable and the policy that allows it, never the value
    for args in commands:
        code, out, err = run_cli(capsys, *args, "--logs", str(logs))
        line = error_line(err)
        assert code == 2 and "$MAFIASCOPE_QA_KEY is named by a game log" in line and key not in err + out
        assert "MAFIASCOPE_KEYS=MAFIASCOPE_QA_KEY MAFIASCOPE_KEY_MAFIASCOPE_QA_KEY_BASE_URLS=http://127.0.0.1:9" in line
    # with that policy, the variable itself being gone is the error
    monkeypatch.setenv("MAFIASCOPE_KEYS", "MAFIASCOPE_QA_KEY")
    monkeypatch.setenv("MAFIASCOPE_KEY_MAFIASCOPE_QA_KEY_BASE_URLS", "http://127.0.0.1:9")
    monkeypatch.delenv("MAFIASCOPE_QA_KEY")
    for args in commands:
        clear_cache()
        code, out, err = run_cli(capsys, *args, "--logs", str(logs))
        line = error_line(err)
        assert code == 2 and "${MAFIASCOPE_QA_KEY}, which is not set" in line and key not in err + out
    assert sorted(p.name for p in logs.iterdir()) == ["g"]  # no branch or experiment record was started


def test_default_config_is_found_from_another_directory(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "run", "--logs", "logs", "--game-id", "g", "--no-probes", "--no-snapshots", "-q")
    assert code == 0, err
    assert (tmp_path / "logs" / "g" / "game.jsonl").is_file()
    code, _, err = run_cli(capsys, "run", "-c", "configs/nope.yaml")
    assert code == 2 and "configs/nope.yaml: config file not found" in error_line(err)


@pytest.mark.slow
def test_batch_refuses_an_id_prefix_whose_games_exist(tmp_path, capsys):
    logs = tmp_path / "logs"
    assert run_cli(capsys, "batch", "-n", "2", "--id-prefix", "p", "--logs", str(logs), "--no-probes", "--no-snapshots")[0] == 0
    code, out, err = run_cli(capsys, "batch", "-n", "3", "--id-prefix", "p", "--logs", str(logs), "--no-probes", "--json")
    line = error_line(err)
    assert code == 2 and out == "" and str(logs / "p-0000") in line
    assert sorted(p.name for p in logs.iterdir()) == [".batches", "p-0000", "p-0001"]  # .batches/p: the first batch's ledger
    from mafiascope.play.ledger import StudyLedger

    assert list(StudyLedger(logs / ".batches" / "p").rows()) == ["p-0000", "p-0001"]  # the refused batch wrote nothing


# ----------------------------------------------------------------------------- probes validate


def test_probes_validate_json_lists_clean_errors(tmp_path, capsys):
    bad = tmp_path / "b.yaml"
    bad.write_text('probes:\n  - id: p\n    question: "x {mood}"\n')
    code, out, _ = run_cli(capsys, "probes", "validate", str(bad), "--json")
    assert code == 1
    assert json.loads(out)["errors"] == [
        "probe 'p': question: unknown placeholder {mood}; allowed: ['player', 'players', 'roles', 'prev_<id>', 'last_<id>']"]
    bad.write_text("probes: [\n")
    code, out, _ = run_cli(capsys, "probes", "validate", str(bad), "--json")
    errors = json.loads(out)["errors"]
    assert code == 1 and len(errors) == 1 and errors[0].startswith(f"{bad}: not valid YAML") and "line 2" in errors[0]
    code, out, _ = run_cli(capsys, "probes", "validate", str(bad))
    assert code == 1 and len(out.strip().splitlines()) == 1
    code, _, err = run_cli(capsys, "probes", "validate", str(tmp_path / "nope.yaml"))
    assert code == 2 and error_line(err).startswith("mafiascope probes validate: error: ")


# ----------------------------------------------------------------------------- replay


@pytest.fixture(scope="module")
def probed_game(tmp_path_factory) -> Path:
    logs = tmp_path_factory.mktemp("cli_errors_logs")
    assert main(["run", "--seed", "1", "--logs", str(logs), "--game-id", "g", "-q", "--probes-file",
                 str(REPO / "configs" / "probes" / "suspicion_en.yaml")]) == 0
    return logs / "g"


@pytest.mark.slow
def test_attribution_rejects_unknown_suspicion_of_seat(probed_game, tmp_path, capsys):
    code, _, err = run_cli(capsys, "replay", "attribution", str(probed_game), "--utterances", "1.7", "-n", "1",
                           "--suspicion-of", "Gray", "--logs", str(tmp_path), "--dry-run")
    line = error_line(err)
    assert code == 2 and "--suspicion-of Gray: no seat of that name" in line


def test_bifurcate_dry_run_prints_text_unless_json(probed_game, tmp_path, capsys):
    args = ["replay", "bifurcate", str(probed_game), "--at", "1.7", "--samples", "4", "--select", "2", "--logs", str(tmp_path), "--dry-run"]
    code, out, _ = run_cli(capsys, *args)
    assert code == 0 and out.startswith("4 samples, 2 continuations")
    code, out, _ = run_cli(capsys, *args, "--json")
    assert code == 0 and json.loads(out)["estimate"]["continuations"] == 2


def test_validate_repeat_names_a_missing_directory(tmp_path, capsys):
    code, _, err = run_cli(capsys, "validate", "repeat", str(tmp_path / "nope"))
    assert code == 2 and error_line(err).endswith(f"{tmp_path / 'nope'}: no such logs directory")


@pytest.mark.slow
def test_dynamics_export_reports_rows_as_a_number(probed_game, tmp_path, capsys):
    code, out, err = run_cli(capsys, "dynamics", str(probed_game), "--boot", "0", "--cache-dir", str(tmp_path / "c"),
                             "--export-graph", str(tmp_path / "edges.csv"), "--json")
    assert code == 0, err
    export = json.loads(out)["export"]
    assert isinstance(export["rows"], int) and export["rows"] > 0
    assert export["csv"] == str(tmp_path / "edges.csv") and export["parquet"] == str(tmp_path / "edges.parquet")


@pytest.mark.parametrize("cmd", ["analyze", "dynamics", "episodes"])
@pytest.mark.slow
def test_empty_selection_is_a_user_error_for_every_analytics_command(probed_game, tmp_path, capsys, cmd):
    code, _, err = run_cli(capsys, cmd, str(probed_game), "--language", "fr", "--boot", "0", "--cache-dir", str(tmp_path))
    assert code == 2 and error_line(err) == f"mafiascope {cmd}: error: no games left after selection (--language fr)"


@pytest.mark.slow
def test_torn_last_lines_give_one_warning_line_each(probed_game, tmp_path):
    import shutil

    game = tmp_path / "logs" / "t"
    shutil.copytree(probed_game, game)
    with (game / "game.jsonl").open("a") as f:
        f.write('{"kind": "day_disc')
    out = subprocess.run([sys.executable, "-m", "mafiascope", "audit", str(tmp_path / "logs")], cwd=REPO,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip().splitlines() == [
        f"mafiascope: warning: {game / 'game.jsonl'}:{len((game / 'game.jsonl').read_text().splitlines())}: skipping torn "
        "last line (Unterminated string starting at: line 1 column 10 (char 9))"]


# ----------------------------------------------------------------------------- messages


def test_one_line_keeps_single_line_messages_and_flattens_pyyaml_marks():
    assert one_line("a: b") == "a: b"
    msg = 'f.yaml: not valid YAML (mapping values are not allowed here\n  in "<unicode string>", line 1, column 5:\n    a: b: c\n        ^)'
    assert one_line(msg) == "f.yaml: not valid YAML (mapping values are not allowed here at line 1, column 5)"
    assert one_line("f: invalid configuration\n  a: x\n  b: y") == "f: invalid configuration: a: x; b: y"


# ----------------------------------------------------------------------------- Ctrl-C


def _jsonl_ok(path: Path) -> None:
    """Every line parses, except possibly a torn last line."""
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    complete, last = lines[:-1], lines[-1]
    for line in complete:
        json.loads(line)
    if last:  # no trailing newline: a torn last record is tolerated
        try:
            json.loads(last)
        except ValueError:
            pass


def _default_sigint() -> None:
    """In the child: SIGINT's default disposition, as under a terminal. A process started with SIGINT
    ignored (any job a non-interactive shell puts in the background with ``&``, which is how CI may run
    the suite) keeps ignoring it, as a background job must; the command then rightly plays on."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class _Watch(threading.Thread):
    """Reads a child's stream to its end; ``seen`` is set at the first line holding ``mark`` (if any)."""

    def __init__(self, stream: Any, mark: str | None = None) -> None:
        super().__init__(daemon=True)
        self.stream, self.mark, self.seen, self.lines = stream, mark, threading.Event(), []

    def run(self) -> None:
        for line in self.stream:
            self.lines.append(line)
            if self.mark is not None and self.mark in line:
                self.seen.set()

    def text(self) -> str:
        self.join(timeout=60)
        return "".join(self.lines)


# The interrupt lands at a known point of the run, found from the command's own output rather than a
# sleep: `run` has asked its human seat (seat 0, on stdin, which never answers) for a move; `batch` has
# reported its first finished game of 400.
@pytest.mark.parametrize("cmd, stream, mark", [
    (["run", "--game-id", "g", "--human", "0"], "stdout", "(finish with an empty line)"),
    (["batch", "-n", "400", "--parallel", "4"], "stderr", "[1/400]"),
])  # fmt: skip
@pytest.mark.slow
def test_ctrl_c_leaves_valid_logs_and_one_line(tmp_path, cmd, stream, mark):
    logs = tmp_path / "logs"
    proc = subprocess.Popen([sys.executable, "-m", "mafiascope", *cmd, "--logs", str(logs)], cwd=REPO, preexec_fn=_default_sigint,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    out, err = _Watch(proc.stdout, mark if stream == "stdout" else None), _Watch(proc.stderr, mark if stream == "stderr" else None)
    out.start(), err.start()
    try:
        assert (out if stream == "stdout" else err).seen.wait(timeout=240), f"{cmd[0]} never reached {mark!r}: {err.text()[-500:]}"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130, err.text()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()
    text = err.text()
    assert "Traceback" not in text and text.strip().splitlines()[-1] == f"mafiascope {cmd[0]}: interrupted"
    games = list(logs.glob("*/game.jsonl"))
    assert games and len(games) < (400 if cmd[0] == "batch" else 2)
    if cmd[0] == "run":  # stopped where it stood: the human's move never came, so the game never ended
        assert '"game_over"' not in games[0].read_text(encoding="utf-8")
    for f in logs.glob("*/*.jsonl"):
        _jsonl_ok(f)
