"""What the CLI prints cannot drive the reader's terminal: names, replies and messages come from configs, logs and
models others control, and every command's stdout and stderr go through one wrapper (cli/output.TerminalStream)."""

from __future__ import annotations

import yaml

from mafiascope.cli import main
from mafiascope.cli.output import terminal_text

# OSC 52 (write the clipboard), clear screen, C1 CSI, a right-to-left override
HOSTILE = "Eve\x1b]52;c;ZXZpbA==\x07\x1b[2J\x9b31m\u202e"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def _config(tmp_path) -> str:
    cfg = {"name": "esc", "rules": {"name": "classic", "roles": {"Mafia": 1, "Doctor": 1, "Villager": 3}},
           "seats": [{"backend": "a", "name": HOSTILE}, {"backend": "a"}, {"backend": "a"}, {"backend": "a"}, {"backend": "a"}],
           "backends": {"a": {"type": "bot", "preset": "balanced", "model": "m" + HOSTILE}}}
    path = tmp_path / "esc.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return str(path)


def test_names_from_a_config_and_a_log_reach_the_terminal_as_escapes(tmp_path, capsys):
    logs = tmp_path / "logs"
    assert main(["run", "-c", _config(tmp_path), "--logs", str(logs), "--seed", "1", "--no-probes"]) == 0
    assert main(["analyze", str(logs)]) == 0
    out = capsys.readouterr()
    printed = out.out + out.err
    assert "Eve\\x1b]52" in printed  # shown, as text
    assert not [c for c in RAW if c in printed]


def test_an_error_quoting_a_value_is_escaped_too(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"name": "x", "seats": [{"backend": "no-such\x1b[2J"}]}), encoding="utf-8")
    assert main(["run", "-c", str(bad), "--logs", str(tmp_path / "logs")]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err


def test_terminal_text_keeps_ordinary_text():
    text = "Привет, Bob\t-> 0.25 «ok» 中文\n"
    assert terminal_text(text) == text
