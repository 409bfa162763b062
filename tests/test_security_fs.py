"""Filesystem safety of logs (issue 12, items 1 and 4): no operation fed by a log, a ledger or an id
writes or deletes outside the logs root it was given, symlinks are not followed, and a game
directory has exactly one writer."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mafiascope.cli import main
from mafiascope.logs.io import list_game_dirs, read_jsonl
from mafiascope.replay.resume import find_unfinished
from mafiascope.replay.source import ParentGame

from . import fs_properties as fp
from .test_arena_run import ROSTER, scripted_factory
from .test_replay_forks import bot_cfg, play_bot
from .test_replay_resume import crash_copy


def tree(root: Path) -> dict[str, bytes | str]:
    """Every entry under ``root`` (without following symlinks): file bytes, link targets, dirs."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            key = str(p.relative_to(root))
            if p.is_symlink():
                out[key] = "-> " + os.readlink(p)
            elif p.is_file():
                out[key] = p.read_bytes()
            else:
                out[key] = "dir"
    return out


def set_setup_game_id(game: Path, gid: str) -> None:
    lines = (game / "game.jsonl").read_text().splitlines(keepends=True)
    setup = json.loads(lines[0])
    setup["game_id"] = gid
    (game / "game.jsonl").write_text(json.dumps(setup) + "\n" + "".join(lines[1:]))


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    return play_bot(tmp_path_factory.mktemp("finished"), gid="g")


# ----------------------------------------------------------------------------- item 1: resume


@pytest.mark.parametrize("evil", ["..", "ABS", "a/../..", "../outside"])
def test_resume_never_deletes_outside_logs_for_a_hostile_setup_game_id(finished, tmp_path, capsys, evil):
    logs, outside = tmp_path / "logs", tmp_path / "outside"
    (outside / "victim").mkdir(parents=True)
    (outside / "victim" / "keep.txt").write_text("keep")
    import shutil

    shutil.copytree(finished, logs / "done")  # a finished game, must survive
    crash_copy(finished, logs / "bad", keep_snapshots=6)
    crash_copy(finished, logs / "other", keep_snapshots=6)  # a second unfinished game, resumed normally
    set_setup_game_id(logs / "other", "other")
    set_setup_game_id(logs / "bad", str(outside / "victim") if evil == "ABS" else evil)
    before_outside, before_done = tree(outside), tree(logs / "done")
    code = main(["resume", str(logs), "--min-idle", "0", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert tree(outside) == before_outside and tree(logs / "done") == before_done
    assert [r["game_id"] for r in out["resumed"]] == ["other"]
    bad = [s for s in out["skipped"] if s["path"].endswith("bad")]
    assert bad and "game id" in bad[0]["reason"]
    assert (logs / "bad" / "game.jsonl").is_file()  # left as it was
    assert code == 0


def test_resume_drop_empty_does_not_follow_a_symlinked_game_dir(tmp_path):
    logs, outside = tmp_path / "logs", tmp_path / "outside"
    outside.mkdir()
    (outside / "game.jsonl").write_text("")  # looks like a never-started game
    (outside / "keep.txt").write_text("keep")
    logs.mkdir()
    (logs / "link").symlink_to(outside, target_is_directory=True)
    main(["resume", str(logs), "--min-idle", "0", "--drop-empty"])
    assert (outside / "keep.txt").read_text() == "keep" and (outside / "game.jsonl").exists()


# ----------------------------------------------------------------------------- item 1: fork


def _fork_args(parent: Path, logs: Path, batch_id: str) -> list[str]:
    at = "{}.{}".format(*ParentGame(parent).keys()[5])
    return ["fork", str(parent), "--at", at, "-n", "1", "--batch-id", batch_id, "--logs", str(logs), "--json"]


def test_fork_does_not_write_through_a_symlinked_branch_dir(finished, tmp_path, capsys):
    logs, victim = tmp_path / "logs", tmp_path / "victim"
    logs.mkdir()
    victim.mkdir()
    (victim / "keep.txt").write_text("keep")
    (logs / "fork-evil0001-000").symlink_to(victim, target_is_directory=True)
    code = main(_fork_args(finished, logs, "evil0001"))
    capsys.readouterr()
    assert sorted(p.name for p in victim.iterdir()) == ["keep.txt"]
    assert code == 2


# ----------------------------------------------------------------------------- item 1: import


def _original_game(d: Path, gid: str) -> None:
    d.mkdir(parents=True)
    recs = [{"game_id": gid, "kind": "setup", "round": 0, "players": [{"name": "Ann", "role": "Mafia"}, {"name": "Bob", "role": "Villager"}]},
            {"game_id": gid, "kind": "game_over", "round": 1, "winner": "Mafia"}]  # fmt: skip
    (d / "game.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))


def test_import_does_not_copy_symlink_targets(tmp_path, capsys, recwarn):
    src, dest, secret = tmp_path / "src", tmp_path / "dest", tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    _original_game(src / "g1", "g1")
    (src / "g1" / "introspection.jsonl").symlink_to(secret)
    (src / "manifest.txt").symlink_to(secret)
    _original_game(tmp_path / "elsewhere" / "g2", "g2")
    (src / "g2").symlink_to(tmp_path / "elsewhere" / "g2", target_is_directory=True)
    assert main(["import", str(src), str(dest), "--json"]) == 0
    captured = capsys.readouterr()
    found = [p for p in dest.rglob("*") if p.is_file() and b"TOP SECRET" in p.read_bytes()]
    assert found == []
    assert (dest / "g1" / "game.jsonl").is_file() and not (dest / "g2").exists()
    skipped = [str(w.message) for w in recwarn if "symlink" in str(w.message)]  # the CLI prints them on stderr
    assert {Path(m.split(":")[0]).name for m in skipped} == {"introspection.jsonl", "manifest.txt", "g2"}
    assert json.loads(captured.out)["games"] == 1


def test_import_force_does_not_write_through_a_symlinked_dest_game_dir(tmp_path, capsys):
    src, dest, victim = tmp_path / "src", tmp_path / "dest", tmp_path / "victim"
    _original_game(src / "g1", "g1")
    victim.mkdir()
    dest.mkdir()
    (dest / "g1").symlink_to(victim, target_is_directory=True)
    code = main(["import", str(src), str(dest), "--force"])
    capsys.readouterr()
    assert list(victim.iterdir()) == []
    assert code == 2


# ----------------------------------------------------------------------------- item 1: arena resume


def test_arena_resume_does_not_delete_through_a_symlinked_game_dir(tmp_path):
    from mafiascope.arena.ledger import Ledger
    from mafiascope.arena.run import run_arena

    run, victim = tmp_path / "run", tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep")
    run_arena(ROSTER, "sport", 2, run, quiet=True, backend_factory=scripted_factory, limit=1)
    pending = Ledger(run).status()["pending_ids"][0]
    (run / pending).symlink_to(victim, target_is_directory=True)
    s = run_arena(ROSTER, "sport", 2, run, quiet=True, backend_factory=scripted_factory)
    assert (victim / "keep.txt").read_text() == "keep" and sorted(p.name for p in victim.iterdir()) == ["keep.txt"]
    assert s["failed"] == 1 and "symlink" in s["failures"][0]["error"]


# ----------------------------------------------------------------------------- item 4: one writer per game


def test_batch_never_writes_into_a_directory_another_writer_claimed(tmp_path):
    from mafiascope.play.batch import run_batch

    logs = tmp_path / "logs"
    (logs / "p-0000").mkdir(parents=True)  # another batch made it and has not written game.jsonl yet
    res = asyncio.run(run_batch(bot_cfg(), 2, logs_dir=logs, game_id_prefix="p"))
    assert list((logs / "p-0000").iterdir()) == []
    assert [r.game_id for r in res.results] == ["p-0001"]
    assert [s["game_id"] for s in res.skipped] == ["p-0000"]


def test_cli_batch_with_a_taken_id_exits_nonzero(tmp_path, capsys, monkeypatch):
    """The race: the ids were free when the batch checked them, another writer claims one before it is played."""
    from mafiascope.play import game as runner_mod  # the batch plays through the shared executor (play/executors.py)

    logs = tmp_path / "logs"
    real = runner_mod.play_game

    async def racing(cfg, **kw):
        if kw.get("game_id") == "p-0001":
            (Path(kw["logs_dir"]) / "p-0001").mkdir(parents=True, exist_ok=True)
        return await real(cfg, **kw)

    monkeypatch.setattr(runner_mod, "play_game", racing)
    code = main(["batch", "-n", "2", "--id-prefix", "p", "--logs", str(logs), "--no-probes", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["games"] == 1 and [s["game_id"] for s in out["skipped"]] == ["p-0001"]
    assert list((logs / "p-0001").iterdir()) == []


@pytest.mark.slow
def test_two_concurrent_batches_with_one_prefix_never_share_a_file(tmp_path):
    logs = tmp_path / "logs"
    cmd = [sys.executable, "-m", "mafiascope", "batch", "-n", "24", "--parallel", "8", "--id-prefix", "p", "--logs", str(logs),
           "--no-probes", "--no-snapshots", "--json"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for _ in range(2)]
    codes = [p.wait(timeout=300) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    dirs = list_game_dirs(logs)
    assert sorted(d.name for d in dirs) == [f"p-{i:04d}" for i in range(24)]
    for d in dirs:
        kinds = [r["kind"] for r in read_jsonl(d / "game.jsonl")]
        assert kinds.count("setup") == 1 and kinds.count("game_over") == 1, d
    assert any(c != 0 for c in codes)


def test_second_fork_with_the_same_batch_id_is_refused_before_it_starts(finished, tmp_path, capsys):
    logs = tmp_path / "logs"
    assert main(_fork_args(finished, logs, "same0001")) == 0
    capsys.readouterr()
    before = tree(logs)
    code = main(_fork_args(finished, logs, "same0001"))
    err = capsys.readouterr().err
    assert code == 2 and "same0001" in err
    assert tree(logs) == before


def _doubled(tmp: Path) -> Path:
    """One game directory holding two games' records (what two writers on one id produce)."""
    a, b = play_bot(tmp / "a", gid="d", seed=1), play_bot(tmp / "b", gid="d", seed=2)
    logs = tmp / "logs"
    (logs / "d").mkdir(parents=True)
    (logs / "d" / "game.jsonl").write_bytes((a / "game.jsonl").read_bytes() + (b / "game.jsonl").read_bytes())
    play_bot(logs, gid="ok", seed=3)
    return logs


def test_analytics_excludes_a_game_with_two_setups_and_audit_flags_it(tmp_path, capsys):
    from mafiascope.analytics.corpus import load_corpus

    logs = _doubled(tmp_path)
    c = load_corpus([logs], use_cache=False, probed_only=False)
    assert c.game_ids == ["ok"]
    assert c.selection["excluded"].get("multiple_setup_or_game_over") == 1
    assert [g["game_id"] for g in c.selection["doubled_games"]] == ["d"]
    assert c.audit["d"]["game.multiple_setup"] == 2 and c.audit["d"]["game.multiple_game_over"] == 2
    code = main(["audit", str(logs), "--json"])
    res = json.loads(capsys.readouterr().out)
    assert code == 1 and [g["game_id"] for g in res["doubled_games"]] == ["d"]
    per = {g["game_id"]: g for g in res["per_game"]}
    assert per["d"]["setup_records"] == 2 and per["d"]["game_over_records"] == 2 and per["ok"]["setup_records"] == 1


# ----------------------------------------------------------------------------- properties (Hypothesis)

# inputs per property in the test suite; bench/fs_fuzz.py runs the same checks with more
EXAMPLES = {"ids": 300, "writers": 150, "resume": 80, "fork": 40, "import": 100, "arena": 15}


def _run(name: str, body, *strategies) -> fp.Tally:
    """Run ``body(layout, *drawn, tally)`` on EXAMPLES[name] generated inputs, each in a fresh scratch dir."""
    tally = fp.Tally(name)

    @settings(max_examples=EXAMPLES[name], deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])  # fmt: skip
    @given(st.tuples(*strategies))
    def prop(drawn):
        with tempfile.TemporaryDirectory(prefix="fs-prop-") as d:
            body(fp.Layout(Path(d), FINISHED[0]), *drawn, tally)

    prop()
    print(tally.line())
    assert tally.inputs >= EXAMPLES[name] // 2 and tally.escapes == 0
    return tally


FINISHED: list[Path] = []


@pytest.fixture(scope="module")
def templates(finished, tmp_path_factory):
    """A crashed copy of the finished game and an arena run with one game played, built once."""
    FINISHED[:] = [finished]
    base = tmp_path_factory.mktemp("templates")
    crash_copy(finished, base / "crashed", keep_snapshots=6)
    from mafiascope.arena.run import run_arena

    run_arena(ROSTER, "sport", 2, base / "run", quiet=True, backend_factory=scripted_factory, limit=1)
    return {"crashed": base / "crashed", "run": base / "run"}


def test_property_validated_ids_never_leave_the_root(tmp_path):
    """Whatever the id, game_dir/claim_game_dir either refuse it or name a direct child of the root."""
    from mafiascope.logs.paths import claim_game_dir, game_dir

    tally = fp.Tally("ids")
    root = tmp_path / "logs"
    root.mkdir()

    @settings(max_examples=EXAMPLES["ids"], deadline=None, database=None)
    @given(fp.HOSTILE)
    def prop(raw):
        gid = fp.materialise(raw, tmp_path)
        tally.inputs += 1
        try:
            p = game_dir(root, gid)
        except ValueError:
            return
        ok = p.parent == root and p.name == gid and "/" not in gid and gid not in (".", "..") and gid == gid.strip()
        if ok:
            try:
                claim_game_dir(root, gid).rmdir()
            except FileExistsError:
                pass
        tally.escapes += not ok
        assert ok, gid

    prop()
    print(tally.line())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs"] and tally.escapes == 0


@pytest.mark.slow
def test_property_concurrent_writers_get_one_claim_per_id(tmp_path):
    """Writers racing (threads) for ids drawn with many collisions: each id is claimed exactly once,
    every other writer gets GameDirTaken, and only the winner's game.jsonl exists."""
    from concurrent.futures import ThreadPoolExecutor

    from mafiascope.logs.io import JsonlWriter
    from mafiascope.logs.paths import GameDirTaken, claim_game_dir

    tally = fp.Tally("writers")

    def write(root: Path, gid: str, who: int) -> bool:
        try:
            d = claim_game_dir(root, gid)
        except GameDirTaken:
            return False
        with JsonlWriter(d / "game.jsonl", exclusive=True) as w:
            w.write({"kind": "setup", "game_id": gid, "writer": who})
        return True

    @settings(max_examples=EXAMPLES["writers"], deadline=None, database=None)
    @given(st.lists(st.sampled_from(["p-0000", "p-0001", "p-0002"]), min_size=1, max_size=12))
    def prop(ids):
        with tempfile.TemporaryDirectory(prefix="fs-writers-") as d:
            root = Path(d) / "logs"
            with ThreadPoolExecutor(max_workers=6) as pool:
                won = list(pool.map(lambda a: write(root, *a), [(gid, i) for i, gid in enumerate(ids)]))
            tally.inputs += 1
            winners = sorted(gid for gid, ok in zip(ids, won) if ok)
            lines = {g: read_jsonl(root / g / "game.jsonl") for g in set(ids)}
            ok = winners == sorted(set(ids)) and all(len(v) == 1 for v in lines.values())
            tally.escapes += not ok
            assert ok, (ids, won)

    prop()
    print(tally.line())
    assert tally.escapes == 0


@pytest.mark.slow
def test_property_resume(templates):
    _run("resume", lambda lay, raw, same_dir, link, t: fp.resume_property(lay, templates["crashed"], raw, same_dir, link, t),
         fp.HOSTILE, st.booleans(), st.booleans())


@pytest.mark.slow
def test_property_fork(templates):
    ids = st.one_of(fp.HOSTILE, st.from_regex(r"[a-z0-9]{4,8}", fullmatch=True))  # valid batch ids: the forks that run
    _run("fork", lambda lay, raw, link, t: fp.fork_property(lay, FINISHED[0], raw, link, t), ids, st.booleans())


def test_property_import(templates):
    _run("import", lambda lay, raw, link, t: fp.import_property(lay, raw, link, t), fp.HOSTILE, st.booleans())


def test_property_arena_resume(templates):
    _run("arena", lambda lay, raws, link, t: fp.arena_property(lay, templates["run"], raws, link, t),
         st.lists(fp.HOSTILE, min_size=1, max_size=4), st.booleans())


# ----------------------------------------------------------------------------- app entry points


def test_app_arena_launch_refuses_hostile_run_names_before_writing(tmp_path, monkeypatch):
    from app import arena_jobs

    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / "runs" / "arena").mkdir(parents=True)
    (tmp_path / "runs" / "arena" / "link").symlink_to(victim, target_is_directory=True)
    for bad in ["..", "../victim", str(victim), "link", "a/../../victim"]:
        with pytest.raises(ValueError):
            arena_jobs.launch(bad, {"name": "x", "models": {}}, ["sport"], 1)
    assert list(victim.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["runs", "victim"]


def test_human_reply_is_not_written_through_a_symlinked_game_dir(tmp_path):
    from mafiascope.backends.human import write_reply
    from mafiascope.logs.paths import UnsafePathError

    logs, victim = tmp_path / "logs", tmp_path / "victim"
    logs.mkdir()
    victim.mkdir()
    (logs / "g").symlink_to(victim, target_is_directory=True)
    with pytest.raises(UnsafePathError):
        write_reply(logs, "g", "Ann", "r1", "VOTE: Bob")
    assert list(victim.iterdir()) == []


def test_resume_leaves_a_game_directory_named_like_the_staging_dir_alone(finished, tmp_path, capsys):
    """Found by bench/fs_fuzz.py: a game directory called .resume made the staging repair crash on its files."""
    logs = tmp_path / "logs"
    crash_copy(finished, logs / ".resume", keep_snapshots=6)
    before = tree(logs)
    main(["resume", str(logs), "--min-idle", "0", "--json"])
    capsys.readouterr()
    assert tree(logs) == before


@pytest.mark.parametrize("entry", [{"type": "human", "logs_dir": "OUTSIDE", "timeout_s": 0.2}, {"type": "human", "mode": "stdin"}])
def test_a_roster_s_human_seat_cannot_write_outside_the_run_or_read_stdin(tmp_path, entry, capsys):
    """Seen: a roster (the Arena page's "more models" box, a shared roster file) with a human seat's ``logs_dir``
    made ``arena run`` create directories and write the seat's pending moves anywhere on the machine; ``mode:
    stdin`` would read the server's own stdin. Only a config file the operator named may set them."""
    import yaml

    from mafiascope.backends.registry import Source, build_backend, mark_source, parse_backend_spec

    outside = tmp_path / "outside"
    entry = {k: (str(outside) if v == "OUTSIDE" else v) for k, v in entry.items()}
    roster = tmp_path / "roster.yaml"
    roster.write_text(yaml.safe_dump({"name": "evil", "models": {"h": entry, "b": {"type": "bot"}}}), encoding="utf-8")
    main(["arena", "run", "--roster", str(roster), "--games", "1", "--rules", "sport", "--logs", str(tmp_path / "run"),
          "--parallel", "1"])
    out = capsys.readouterr()
    assert "only in a config file you named" in out.out + out.err
    assert not outside.exists()
    for source in (Source.LOG, Source.ROSTER, Source.STUDY, Source.APP, Source.OTHER):
        spec = parse_backend_spec("h", entry)
        mark_source([spec], source)
        with pytest.raises(ValueError, match="only in a config file you named"):
            build_backend("h", spec, logs_dir=tmp_path / "run")
    spec = parse_backend_spec("h", entry)
    mark_source([spec], Source.OPERATOR)  # the operator's own config: as before
    build_backend("h", spec, logs_dir=tmp_path / "run")
