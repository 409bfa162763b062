"""The log schema is the whole truth: every record every writer produces validates against its model in
mafiascope/logs (schema.py; probe_steps.py for probe_steps.jsonl) and carries no field the schema does not
declare (logs.schema.undeclared).

The writers (WRITERS lists every module that writes JSONL lines; a test fails when one is added there and
not here): the engine (game.jsonl, introspection.jsonl, state.jsonl, probe_steps.jsonl; classic and ten-seat
rules, probed, snapshots on), forks (plain, a replaced utterance, an overridden night action), crash resume,
the replay experiments (attribution, bifurcation), instrument validation (A/B), the Arena (its own ledger),
a study, a batch, the runner's ledger of each of them, the progress files of experiments and fork batches,
and the importer of the original format."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from mafiascope.cli import main
from mafiascope.engine.snapshots import iter_snapshots
from mafiascope.logs.io import GAME_FILE, iter_probe_records, list_game_dirs, read_jsonl
from mafiascope.logs.layers import layer_dir, list_layers
from mafiascope.logs.probe_steps import STEPS_FILE, ActsDone, StepLine
from mafiascope.logs.schema import ProbeRecord, Snapshot, parse_event, run_record, undeclared

from .servers import threaded_devserver
from .studies import three_model_study
from .test_replay_resume import crash_copy

REPO = Path(__file__).resolve().parents[1]


def check_game(d: Path) -> tuple[list[str], int]:
    """(problems, records checked) of one game directory: every line of its three files, decoded."""
    problems, n = [], 0

    def check(model_name: str, rec: Any, where: str) -> None:
        nonlocal n
        n += 1
        try:
            bad = undeclared(rec)
        except Exception as exc:  # pragma: no cover - reported below
            bad = [repr(exc)]
        problems.extend(f"{where}: {model_name}.{p} is not in the schema" for p in bad)

    for i, raw in enumerate(read_jsonl(d / GAME_FILE)):
        try:
            rec = parse_event(raw)
        except ValueError as exc:
            problems.append(f"{d.name}/game.jsonl:{i + 1}: {exc}")
            continue
        check(type(rec).__name__, rec, f"{d.name}/game.jsonl:{i + 1} ({raw.get('kind')})")
    for i, raw in enumerate(iter_probe_records(d, skip_corrupt=False)):
        check("ProbeRecord", ProbeRecord.model_validate(raw), f"{d.name}/introspection.jsonl record {i + 1}")
    for layer in list_layers(d):  # probe layers asked after the fact (probes ask)
        for i, raw in enumerate(iter_probe_records(layer_dir(d, layer), skip_corrupt=False)):
            check("ProbeRecord", ProbeRecord.model_validate(raw), f"{d.name}/probe_layers/{layer} record {i + 1}")
    for i, raw in enumerate(read_jsonl(d / STEPS_FILE) if (d / STEPS_FILE).is_file() else []):
        model = StepLine if raw.get("kind") == "step" else ActsDone
        check(model.__name__, model.model_validate(raw), f"{d.name}/{STEPS_FILE}:{i + 1}")
        if raw.get("kind") == "acts_done":  # the game_over record as the acts ended it
            check("GameOver", parse_event(raw["final"]), f"{d.name}/{STEPS_FILE}:{i + 1} (final)")
    if (d / "state.jsonl").is_file():
        for i, raw in enumerate(iter_snapshots(d / "state.jsonl")):
            check("Snapshot", Snapshot.model_validate(raw), f"{d.name}/state.jsonl record {i + 1}")
    return problems, n


def check_run_files(root: Path) -> tuple[list[str], dict[str, int]]:
    """(problems, records checked per file kind) of the ledgers and progress files under ``root``."""
    problems, n = [], {"study_ledger": 0, "arena_ledger": 0, "progress": 0, "batch_ledger": 0}
    for path in sorted(root.rglob("*.jsonl")):
        recs = read_jsonl(path)
        if path.name.endswith(".progress.jsonl"):
            kind = "progress"
        elif path.name == "batches.jsonl":
            kind = "batch_ledger"
        elif path.name == "ledger.jsonl":
            kind = "arena_ledger" if recs and recs[0].get("event") == "plan" else "study_ledger"
        else:
            continue
        for i, rec in enumerate(recs):
            n[kind] += 1
            try:
                run_record(kind, rec)
            except ValueError as exc:
                problems.append(f"{path.relative_to(root)}:{i + 1}: {exc}")
    return problems, n


def check_tree(root: Path) -> tuple[list[str], int]:
    problems, n = [], 0
    for d in list_game_dirs(root):
        p, k = check_game(d)
        problems += p
        n += k
    return problems, n


def cli(*args: str) -> dict[str, Any]:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*args, "--json"]) == 0
    return json.loads(out.getvalue() or "{}")


@pytest.mark.slow
def test_every_writer_writes_only_what_the_schema_declares(tmp_path):
    logs = tmp_path / "logs"
    # the engine: classic and ten-seat rules, probed, with snapshots
    cli("run", "-c", str(REPO / "configs" / "classic.yaml"), "--seed", "3", "--logs", str(logs), "--game-id", "classic")
    cli("run", "-c", str(REPO / "configs" / "tournament_sport.yaml"), "--seed", "2", "--logs", str(logs), "--game-id", "sport")
    parent = logs / "classic"
    events = read_jsonl(parent / GAME_FILE)
    speech = next(e for e in events if e.get("kind") == "day_discuss")
    vote = next(e for e in events if e.get("kind") == "day_vote")
    # forks: plain, a replaced utterance, an overridden night action (the pickers' own options)
    cli("fork", str(parent), "--at", f"{speech['round']}.{speech['msg_seq']}", "-n", "1", "--logs", str(logs / "forks"))
    cli("fork", str(parent), "--at", f"{speech['round']}.{speech['msg_seq']}", "-n", "1", "--replace-utterance", "I trust nobody.",
        "--logs", str(logs / "forks"))
    from mafiascope.replay.forks import night_override_options
    from mafiascope.replay.source import ParentGame

    pg = ParentGame.load(parent)
    opts = next((k, o) for k in pg.keys() for o in night_override_options(pg, k))
    cli("fork", str(parent), "--at", f"{opts[0][0]}.{opts[0][1]}", "-n", "1", "--override-night",
        f"{opts[1]['seat']}={opts[1]['targets'][0]}", "--logs", str(logs / "forks"))
    # crash resume
    crash_copy(parent, logs / "crashed" / "classic", keep_snapshots=10)
    cli("resume", str(logs / "crashed"), "--min-idle", "0")
    # replay experiments
    prog = logs / "progress"
    cli("replay", "attribution", str(parent), "--utterances", f"{speech['round']}.{speech['msg_seq']}", "-n", "1",
        "--logs", str(logs / "attribution"), "--progress", str(prog / "attribution.progress.jsonl"))
    cli("replay", "bifurcate", str(parent), "--at", f"{vote['round']}.{vote['msg_seq']}", "--seat", vote["player"],
        "--samples", "6", "--select", "2", "--continuations", "1", "--logs", str(logs / "bifurcation"),
        "--progress", str(prog / "bifurcation.progress.jsonl"))
    # instrument validation, a batch, the Arena, a study
    cfg = tmp_path / "ab.yaml"
    shutil.copy(REPO / "configs" / "classic.yaml", cfg)
    cli("validate", "ab", "-c", str(cfg), "--games", "1", "--logs", str(logs / "ab"), "--progress", str(prog / "ab.progress.jsonl"))
    cli("batch", "-c", str(REPO / "configs" / "classic_sheriff.yaml"), "-n", "1", "--logs", str(logs / "batch"), "--id-prefix", "b")
    cli("arena", "run", "--rules", "imbalanced", "--games", "1", "--logs", str(logs / "arena"))
    # the importer of the original format
    cli("import", str(REPO / "data" / "corpus" / "mafiascope_ru_legacy"), str(logs / "imported"))
    (logs / "study").mkdir()
    three_model_study(logs / "study", games=1)
    # probe layers asked after the fact: directly, and through the Batch API of the dev server
    cli("probes", "ask", str(logs / "batch"), "--battery", "suspicion", "--layer", "late", "-q")
    with threaded_devserver(batch_delay_s=0.05) as srv:
        obs = tmp_path / "observer.yaml"
        obs.write_text(json.dumps({"rules": {"roles": {"Mafia": 1, "Villager": 2}}, "seats": [{"backend": "o"}] * 3,
                                   "backends": {"o": {"type": "openai", "base_url": srv.base_url, "model": "bot-analyst"}}}))  # fmt: skip
        cli("probes", "ask", str(logs / "batch"), "--battery", "chained", "--layer", "obs", "--config", str(obs), "--backend", "o",
            "--batch", "--poll-s", "0.05", "--no-preflight", "-q")  # fmt: skip

    problems, n = check_tree(logs)
    assert problems == [], "\n".join(sorted({p.split(": ", 1)[1] for p in problems})) + "\nfirst: " + problems[0]
    run_problems, runs = check_run_files(logs)
    assert run_problems == [], "\n".join(run_problems)
    assert runs["study_ledger"] >= 30 and runs["arena_ledger"] >= 3 and runs["progress"] >= 12 and runs["batch_ledger"] >= 4, runs
    assert {name for d in list_game_dirs(logs / "batch") for name in list_layers(d)} == {"late", "obs"}
    for name in ("attribution", "bifurcation", "ab"):  # the CLI's --progress files, as the app's jobs poll them
        events = [r["event"] for r in read_jsonl(prog / f"{name}.progress.jsonl")]
        assert events[0] == "start" and events[-1] == "done" and "unit" in events, (name, events)
    kinds = {e.get("kind") for d in list_game_dirs(logs) for e in read_jsonl(d / GAME_FILE)}
    assert {"setup", "day_vote", "night_kill", "vote_tally", "game_over", "nomination"} <= kinds
    assert n > 1000 and len(list_game_dirs(logs)) >= 12


def test_every_field_the_engine_passes_to_a_record_model_is_declared():
    """Statically, for the fields a game reaches rarely: each keyword of ``event(Model, ...)`` / ``build(Model, ...)``
    in the package names a field of that schema model."""
    import ast

    from mafiascope.logs import schema

    bad = []
    for path in sorted((REPO / "mafiascope").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("event", "build")
                    and node.args and isinstance(node.args[0], ast.Name)):
                continue
            model = getattr(schema, node.args[0].id, None)
            if model is None:
                continue
            for kw in node.keywords:
                if kw.arg and kw.arg != "opaque" and kw.arg not in model.model_fields:
                    bad.append(f"{path.relative_to(REPO)}:{node.lineno}: {model.__name__}.{kw.arg}")
    assert bad == []


# Every module that appends or writes JSONL lines, and what it writes (each record checked on write against
# mafiascope/logs: schema.py or probe_steps.py; covered by test_every_writer_writes_only_what_the_schema_declares).
WRITERS = {
    "mafiascope/logs/io.py": "JsonlWriter and dumps themselves (the callers below choose the records)",
    "mafiascope/logs/probe_steps.py": "probe_steps.jsonl: StepLine, ActsDone",
    "mafiascope/play/game.py": "game.jsonl, state.jsonl, probe_steps.jsonl (engine.records.build / line)",
    "mafiascope/probes/record_writer.py": "introspection.jsonl of a game or of a probe layer (ProbeRecord, engine.records.check)",
    "mafiascope/probes/batch_api.py": "probes ask --batch: .probe_layers/<layer>/batches.jsonl (BatchSent, BatchDone via run_record)",
    "mafiascope/backends/devserver_batches.py": "the dev server's Batch API output files, served over HTTP from memory (the "
                                                "OpenAI batch output format, not ours); no log records",
    "mafiascope/probes/pending.py": "game.jsonl's game_over of a game finished after a crash (engine.records.line)",
    "mafiascope/replay/fork_branch.py": "a fork's inherited records (copied from its parent) and its own",
    "mafiascope/replay/resume.py": "a resumed game's kept records and its own",
    "mafiascope/replay/progress.py": "--progress files (ProgressStart, ProgressUnit, ProgressDone via run_record)",
    "mafiascope/replay/forks.py": "fork-<id>.progress.jsonl (run_record)",
    "mafiascope/play/ledger.py": "every runner's ledger.jsonl (StudyHeader ... StudyStop via run_record)",
    "mafiascope/arena/ledger.py": "an Arena run's ledger.jsonl (ArenaPlan ... ArenaFailed via run_record)",
    "mafiascope/analytics/original_format.py": "game.jsonl of an imported game (parse_event)",
    "app/jobs.py": "a background job's text log (its stderr), no records",
}
WRITE_SITE = re.compile(r'JsonlWriter\(|O_APPEND|open\([^)]*,\s*"a[b+]?"|dumps\w*\((?![^\n]*indent)[^\n]*\+\s*"\\n"')


def test_every_module_that_writes_jsonl_is_a_known_writer():
    """A new writer of JSONL lines fails here until it is listed in WRITERS: its records get a model in
    mafiascope/logs, are checked when written, and the writers test above produces them."""
    found = {str(p.relative_to(REPO)) for root in ("mafiascope", "app") for p in (REPO / root).rglob("*.py")
             if WRITE_SITE.search(p.read_text(encoding="utf-8"))}
    assert found == set(WRITERS), (sorted(found - set(WRITERS)), sorted(set(WRITERS) - found))


@pytest.mark.parametrize("kind, rec, why", [
    ("study_ledger", {"event": "state", "game_id": "g", "state": "finished", "runner": "r", "note": 1}, "note not declared"),
    ("study_ledger", {"event": "row", "game_id": "g", "arm": "a", "index": "first", "seed": 1}, "index"),
    ("study_ledger", {"event": "launch"}, "event 'launch' is not one of"),
    ("arena_ledger", {"event": "finished", "game_id": "g", "rules": "sport", "winner": "Mafia", "extra": 1}, "extra not declared"),
    ("progress", {"event": "unit", "game_id": "g", "params": {"x": 1}}, "params not declared"),
])
def test_a_run_file_record_the_schema_does_not_declare_is_refused_with_its_field(kind, rec, why):
    with pytest.raises(ValueError, match=why):
        run_record(kind, rec)


def test_a_ledger_refuses_an_undeclared_field_before_writing_anything(tmp_path):
    from mafiascope.arena.ledger import Ledger
    from mafiascope.play.ledger import Runner, StudyLedger

    study = StudyLedger(tmp_path / "s")
    study.init({"spec_hash": "h", "games": 1}, [{"game_id": "g0", "arm": "x", "index": 0, "seed": 0}])
    before = study.path.read_bytes()
    with Runner(tmp_path / "s") as r, pytest.raises(ValueError, match="secret_note not declared"):
        study.settle("g0", r, "finished", winner="Mafia", secret_note="x")
    assert study.path.read_bytes() == before
    arena = Ledger(tmp_path / "a")
    with pytest.raises(ValueError, match="seed"):
        arena.append({"event": "scheduled", "game_id": "g0", "rules": "sport", "seed": "soon", "seats": []})
    assert not arena.exists()
