"""Hostile config, battery and rule-set files (issue 12, item 9): every one is a one-line error
naming the file and field, exit 2, found before anything is written."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mafiascope.arena.roster import parse_roster
from mafiascope.arena.run import run_arena
from mafiascope.config import ConfigError, load_game_config, parse_yaml_bytes, parse_yaml_text
from mafiascope.probes.dsl import BatteryError, load_battery
from mafiascope.safe_yaml import MAX_YAML_BYTES

ROOT = Path(__file__).resolve().parent.parent


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    text = 'l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    for i in range(1, levels + 1):
        text += f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]\n"
    return text


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "mafiascope", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def one_line_error(p: subprocess.CompletedProcess, *needles: str) -> str:
    err = p.stderr.strip()
    assert p.returncode == 2, (p.returncode, err)
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    for n in needles:
        assert n in err, (n, err)
    return err


BAD_CONFIGS = {
    "bomb.yaml": (alias_bomb(), ["too many YAML aliases"]),
    "seats210.yaml": ("rules:\n  roles: {Mafia: 10, Doctor: 1, Villager: 199}\n", ["roles", "210 seats", "3 to 16"]),
    "empty.yaml": ("", ["empty"]),
    "comments.yaml": ("# nothing but a comment\n", ["empty"]),
    "noseats.yaml": ("seats: []\n", ["seats", "empty"]),
    "nobackends.yaml": ("backends: {}\n", ["backends", "empty"]),
    "allmafia.yaml": ("rules:\n  roles: {Mafia: 7}\n", ["roles", "town must outnumber"]),
    "balanced.yaml": ("rules:\n  roles: {Mafia: 3, Villager: 3}\n", ["roles", "town must outnumber"]),
    "tenseat.yaml": ("rules:\n  family: tournament\n  variant: sport\n  roles: {Don: 1, Mafia: 2, Sheriff: 1, Villager: 7}\n",
                     ["roles", "exactly 10"]),
    "recursive.yaml": ("a: &a [1, *a]\n", ["recursive"]),
    "deep.yaml": ("a: " + "[" * 5000 + "]" * 5000 + "\n", ["nested"]),
    "bigint.yaml": ("seed: " + "9" * 6000 + "\n", ["not valid YAML"]),
    "nanrpm.yaml": ("backends:\n  b: {type: openai, model: m, rpm: .inf}\nseats: [{backend: b}, {backend: b}, {backend: b}, "
                    "{backend: b}, {backend: b}, {backend: b}, {backend: b}]\n", ["rpm"]),
}


@pytest.mark.parametrize("name", sorted(BAD_CONFIGS))
@pytest.mark.slow
def test_bad_config_is_one_line_error_and_nothing_written(tmp_path, name):
    text, needles = BAD_CONFIGS[name]
    (tmp_path / name).write_text(text, encoding="utf-8")
    t0 = time.monotonic()
    p = cli("run", "-c", str(tmp_path / name), "--logs", str(tmp_path / "logs"), "--no-probes", "-q")
    one_line_error(p, name, *needles)
    assert time.monotonic() - t0 < 60 and not (tmp_path / "logs").exists()


@pytest.mark.slow
def test_non_utf8_and_oversized_files(tmp_path):
    (tmp_path / "latin1.yaml").write_bytes("name: caf\xe9\n".encode("latin-1"))
    one_line_error(cli("run", "-c", str(tmp_path / "latin1.yaml"), "--logs", str(tmp_path / "logs")), "latin1.yaml", "not UTF-8")
    (tmp_path / "huge.yaml").write_text("name: x\n" + "# pad\n" * (MAX_YAML_BYTES // 6 + 10), encoding="utf-8")
    one_line_error(cli("run", "-c", str(tmp_path / "huge.yaml"), "--logs", str(tmp_path / "logs")), "huge.yaml", "larger than")
    assert not (tmp_path / "logs").exists()


def test_alias_bomb_is_refused_quickly_in_process():
    t0 = time.monotonic()
    with pytest.raises(ConfigError, match="too many YAML aliases"):
        parse_yaml_text(alias_bomb(levels=12), "bomb.yaml")
    with pytest.raises(ConfigError, match="too many YAML aliases"):  # many aliases of a small node
        parse_yaml_text("a: &a x\nb: [" + ", ".join(["*a"] * 5000) + "]\n", "many.yaml")
    assert time.monotonic() - t0 < 5


def test_app_battery_import_uses_the_bounded_loader():
    """The probe editor's upload goes through parse_yaml_bytes: same limits, same one-line errors."""
    with pytest.raises(ConfigError, match="up.yaml: refused: .*too many YAML aliases"):
        parse_yaml_bytes(alias_bomb().encode(), "up.yaml")
    with pytest.raises(ConfigError, match=r"up.yaml: not UTF-8 text \(byte 0xff at offset 7\)"):
        parse_yaml_bytes(b"probes:\xff\n", "up.yaml")
    assert parse_yaml_bytes("\ufeffname: b\n".encode(), "bom.yaml") == {"name": "b"}  # a BOM is fine
    src = (ROOT / "app" / "probe_editor.py").read_text(encoding="utf-8")
    assert "parse_yaml_bytes(up.getvalue()" in src and "yaml.safe_load(" not in src


@pytest.mark.parametrize("question,needle", [("", "probe 'a': question: the question is empty"),
                                              ("   \n", "probe 'a': question: the question is empty"),
                                              ("Who is {0}?", "probe 'a': question: positional placeholder"),
                                              ("Who is {}?", "probe 'a': question: positional placeholder")])
@pytest.mark.slow
def test_bad_probe_questions(tmp_path, question, needle):
    import yaml

    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump({"probes": [{"id": "a", "question": question}]}), encoding="utf-8")
    with pytest.raises(BatteryError) as exc:
        load_battery(path)
    assert needle in str(exc.value)
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: t\n", encoding="utf-8")
    p = cli("run", "-c", str(cfg), "--probes-file", str(path), "--logs", str(tmp_path / "logs"))
    assert p.returncode == 2 and "probe 'a'" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "logs").exists()


def test_empty_battery_file(tmp_path):
    (tmp_path / "b.yaml").write_text("", encoding="utf-8")
    with pytest.raises(BatteryError, match="b.yaml: the battery file is empty"):
        load_battery(tmp_path / "b.yaml")


@pytest.mark.slow
def test_analyze_warns_for_every_skipped_line(tmp_path):
    src = sorted(p for p in (ROOT / "data" / "demo").iterdir() if (p / "game.jsonl").is_file())[0]
    g = tmp_path / "logs" / src.name
    g.mkdir(parents=True)
    for f in src.iterdir():
        if f.is_file():
            (g / f.name).write_bytes(f.read_bytes())
    lines = (g / "game.jsonl").read_bytes().split(b"\n")
    lines[3] = b'{"kind": "vote", "te'  # corrupt middle line
    lines[5] = b'{"kind": "\xff\xfe"}'  # not UTF-8
    (g / "game.jsonl").write_bytes(b"\n".join(lines).rstrip(b"\n") + b'\n{"kind": "torn')
    for attempt in ("fresh", "cached"):
        p = cli("analyze", str(tmp_path / "logs"), "--cache-dir", str(tmp_path / "cache"))
        assert p.returncode == 0, p.stderr
        warn = [ln for ln in p.stderr.splitlines() if ln.startswith("mafiascope: warning:")]
        assert any("game.jsonl:4: skipping corrupt line (not JSON)" in w for w in warn), (attempt, p.stderr)
        assert any("game.jsonl:6: skipping corrupt line (not UTF-8)" in w for w in warn), (attempt, p.stderr)
        assert any("skipping torn last line" in w for w in warn), (attempt, p.stderr)
        assert all(str(g) in w for w in warn)


@pytest.mark.slow
def test_arena_rules_given_as_a_yaml_path(tmp_path):
    rules = tmp_path / "my rules.yaml"
    rules.write_text((ROOT / "configs" / "rules" / "sport.yaml").read_text(encoding="utf-8").replace("name: sport", "name: mysport"),
                     encoding="utf-8")
    roster = parse_roster({"name": "bots", "models": {"a": "analyst", "b": "balanced"}})
    summary = run_arena(roster, [str(rules)], 1, tmp_path / "run", parallel=1, quiet=True)
    assert summary["finished"] == 1 and not summary["failures"]
    gid = next(p.name for p in (tmp_path / "run").iterdir() if p.is_dir())
    assert "mysport" in gid and "/" not in gid


@pytest.mark.slow
def test_over_long_id_prefix_is_refused_up_front(tmp_path):
    p = cli("batch", "-n", "2", "--id-prefix", "x" * 126, "--logs", str(tmp_path / "logs"), "--no-probes")
    one_line_error(p, "--id-prefix", "too long")
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize("field,value", [("kind", []), ("round", 10**30), ("round", float("inf")), ("round", -3 * 10**9),
                                         ("msg_seq", 10**30)])
def test_analytics_loader_survives_values_the_fuzz_found(tmp_path, field, value):
    """Found by tests/test_fuzz_inputs.py: a non-string kind raised TypeError, a huge round OverflowError."""
    import json

    from mafiascope.analytics.cache import _parse_batch

    src = ROOT / "data" / "demo" / "demo-classic-01"
    g = tmp_path / "g"
    g.mkdir()
    lines = (src / "game.jsonl").read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[5])
    rec[field] = value
    lines[5] = json.dumps(rec)
    (g / "game.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (g / "introspection.jsonl").write_bytes((src / "introspection.jsonl").read_bytes())
    [(ok, audit, _, _)], tables = _parse_batch([str(g)])  # parsed and built into the cache's Arrow batch
    assert ok and tables["events"].num_rows > 0


@pytest.mark.slow
def test_a_line_nested_too_deeply_is_a_skipped_line_not_a_traceback(tmp_path, capsys):
    """Seen: one ``[[[[...`` line 200,000 deep in a shared log made ``analyze`` (and every reader of that file) end
    in RecursionError; now it is a corrupt line like any other, in each file of a game."""
    from mafiascope.cli import main
    from mafiascope.logs.io import iter_jsonl, loads_line, probe_records_at

    src = sorted(p for p in (ROOT / "data" / "demo").iterdir() if (p / "game.jsonl").is_file())[0]
    g = tmp_path / "logs" / src.name
    g.mkdir(parents=True)
    deep = b'{"kind": "message", "x": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    for f in src.iterdir():
        if f.is_file():
            lines = f.read_bytes().split(b"\n")
            if f.suffix == ".jsonl" and len(lines) > 4:
                lines[3:3] = [deep, b"[" * 200_000]
            (g / f.name).write_bytes(b"\n".join(lines))
    with pytest.raises(ValueError, match="nested too deeply"):
        loads_line(b"[" * 200_000 + b"]" * 200_000)
    with pytest.warns(Warning, match="game.jsonl:4: skipping corrupt line"):
        assert list(iter_jsonl(g / "game.jsonl", skip_corrupt=True))
    probe_records_at(g, [0])
    for argv in (["analyze", str(tmp_path / "logs"), "--no-cache"], ["audit", str(tmp_path / "logs")]):
        with pytest.warns(Warning, match="game.jsonl:4: skipping corrupt line"):
            assert main(argv) in (0, 1), argv
