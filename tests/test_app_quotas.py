"""Issue 31 items 3 and 4: public mode with the operator's quotas, and job ownership.

In public mode a visitor cannot start unbounded work (games per job, games per study, games at once,
jobs per session and per server, starts per hour, disk for runs), every button says why it is disabled,
and a visitor sees and controls only the jobs their own session started."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from .app_support import assert_clean, new_app, plain  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
QUOTAS = ("jobs_per_session", "jobs_per_server", "games_per_job", "forks_per_request", "study_games", "parallel",
          "runs_disk_mb", "starts_per_hour")


@pytest.fixture()
def public(tmp_path, monkeypatch):
    monkeypatch.setenv("MAFIASCOPE_PUBLIC", "1")
    monkeypatch.delenv("MAFIASCOPE_SHOW_ALL_JOBS", raising=False)
    for name in QUOTAS:
        monkeypatch.delenv(f"MAFIASCOPE_QUOTA_{name.upper()}", raising=False)
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(tmp_path / "runs"))
    yield tmp_path / "runs"
    _stop_everything()


def _stop_everything() -> None:
    from app import jobs

    for reg in list(jobs._REGISTRIES):
        for job in reg.every():
            job.stop(grace=5.0)


def studies_page() -> AppTest:
    script = f"""
import sys, runpy
sys.path.insert(0, {str(ROOT)!r})
from app.frame import framed
with framed():
    runpy.run_path({str(ROOT / "pages" / "studies.py")!r}, run_name="__main__")
"""
    return AppTest.from_string(script, default_timeout=120)


def test_public_mode_is_an_explicit_setting_or_the_deploy_environment_before_the_address():
    """Seen: public mode (and every protection that depends on it) was decided by nothing but the bind address."""
    from app.public_mode import PUBLIC_QUOTAS, QUOTA_NAMES, deploy_environment, settings

    assert QUOTA_NAMES == QUOTAS
    assert settings(environ={"MAFIASCOPE_PUBLIC": "1"}, secrets={}, address="127.0.0.1").public
    assert not settings(environ={"MAFIASCOPE_PUBLIC": "0", "HOSTNAME": "streamlit"}, secrets={}, address=None).public
    assert settings(environ={}, secrets={"public": True}, address="127.0.0.1").public
    cloud = settings(environ={"HOSTNAME": "streamlit"}, secrets={}, address="127.0.0.1")
    assert cloud.public and cloud.why == "running on Streamlit Community Cloud" and cloud.quotas == PUBLIC_QUOTAS
    assert deploy_environment({}, Path("/mount/src/mafiascope")) == "Streamlit Community Cloud"
    assert deploy_environment({"SPACE_ID": "u/x"}, Path("/srv")) == "Hugging Face Spaces"
    assert not settings(environ={}, secrets={}, address="127.0.0.1").public  # the README's local command
    assert settings(environ={}, secrets={}, address=None).public  # no address: every interface
    local = settings(environ={}, secrets={}, address="localhost")
    assert local.quotas.games_per_job is None and local.quotas.parallel is None  # generous local defaults
    tuned = settings(environ={"MAFIASCOPE_QUOTA_GAMES_PER_JOB": "50", "MAFIASCOPE_QUOTA_STARTS_PER_HOUR": "none"},
                     secrets={"public": True, "quotas": {"games_per_job": 5, "parallel": 1, "bogus": 3, "study_games": -1}},
                     address=None)  # fmt: skip
    assert (tuned.quotas.games_per_job, tuned.quotas.parallel, tuned.quotas.starts_per_hour) == (50, 1, None)
    assert tuned.quotas.study_games == PUBLIC_QUOTAS.study_games
    assert [p.split(":")[0] for p in tuned.problems] == ["st.secrets mafiascope.quotas.bogus", "st.secrets mafiascope.quotas.study_games"]


def test_a_huge_study_cannot_be_launched_and_the_button_says_why(public):
    """Seen: one Studies click planned and started 100,000 games at parallel 64 with no budget."""
    at = studies_page().run()
    at.number_input(key="ms_study_games").set_value(10000).run()
    at.number_input(key="ms_study_parallel").set_value(64).run()
    assert_clean(at)
    button = at.button(key="ms_study_launch")
    assert button.disabled
    said = " ".join(plain(c.value) for c in at.caption)
    assert "Public mode: this study would start" in said and "at most 200 are allowed" in said
    at.number_input(key="ms_study_games").set_value(2).run()
    assert at.button(key="ms_study_launch").disabled and "at most 2 games at once (this asks 64)" in " ".join(plain(c.value) for c in at.caption)
    at.number_input(key="ms_study_parallel").set_value(2).run()
    assert not at.button(key="ms_study_launch").disabled
    from app import study_jobs
    from app.jobs import JobRefused

    with pytest.raises(JobRefused, match="at most 200 are allowed"):  # the mechanism itself, whatever the page does
        study_jobs.save_and_launch("huge", {"name": "huge", "games_per_arm": 100000, "backends": {"b": {"type": "bot"}},
                                            "arms": [{"name": "x", "lineup": "b", "rules": "classic", "probes": "none"}]})
    assert not (public / "studies" / "huge").exists()


def test_a_big_batch_cannot_be_launched_and_the_button_says_why(public):
    """Seen: four Launch clicks ran four 100-game batches at once."""
    at = new_app(mode="launch").run()
    at.number_input(key="games").set_value(100).run()
    assert_clean(at)
    assert at.button(key="lf_go").disabled
    assert any("Public mode: this batch would start 100 games; at most 20 are allowed." in plain(c.value) for c in at.caption)
    at.number_input(key="games").set_value(3).run()
    assert not at.button(key="lf_go").disabled


@pytest.mark.slow  # starts a game process
def test_jobs_per_session_and_per_server(public, monkeypatch):
    """One running job per visitor and per server: the same visitor's second launch, then another visitor's, are refused."""
    monkeypatch.setenv("MAFIASCOPE_QUOTA_JOBS_PER_SESSION", "1")
    monkeypatch.setenv("MAFIASCOPE_QUOTA_JOBS_PER_SERVER", "1")
    a = new_app(mode="launch").run()
    a.selectbox(key="seat").set_value(a.selectbox(key="seat").options[1]).run()  # a human seat: the game waits
    a.button(key="lf_go").click().run()
    assert_clean(a)
    from app import launcher

    assert len([j for j in launcher.registry().every() if j.running]) == 1
    a.query_params["mode"] = "launch"  # the same session back on the launch form (a launch opens the game)
    a.session_state["lg_mode"] = "launch"
    a.run()
    assert a.button(key="lf_go").disabled
    b = new_app(mode="launch").run()
    assert b.button(key="lf_go").disabled
    said = " ".join(plain(c.value) for c in b.caption)
    assert "the server runs 1 jobs, the most it allows at once (1)" in said
    assert "Launched in this app" not in " ".join(m.value for m in b.markdown)  # b does not see a's game
    monkeypatch.setenv("MAFIASCOPE_QUOTA_JOBS_PER_SERVER", "5")
    b.run()
    assert not b.button(key="lf_go").disabled  # b may start its own
    a.run()
    assert a.button(key="lf_go").disabled and "you have 1 jobs running" in " ".join(plain(c.value) for c in a.caption)


def _bot_study(root: Path, name: str) -> Path:
    """A finished one-game study under the app's studies directory, as if launched by the session ``owner``."""
    from mafiascope.cli import main

    d = root / "studies" / name
    spec = {"name": name, "seed": 0, "games_per_arm": 2, "backends": {"b": {"type": "bot"}},
            "arms": [{"name": "x", "lineup": "b", "rules": "classic", "probes": "none"}], "out": str(d)}  # fmt: skip
    d.mkdir(parents=True)
    (d / "spec.yaml").write_text(yaml.safe_dump(spec))
    assert main(["study", "run", str(d / "spec.yaml"), "--limit", "1", "--json"]) == 0
    return d


@pytest.mark.slow  # plays a study game
def test_a_visitor_sees_and_controls_only_their_own_studies(public, monkeypatch, capsys):
    """Seen: any visitor saw every study with its server path and could stop or resume it."""
    d = _bot_study(public, "someone-elses")
    capsys.readouterr()
    other = studies_page()
    other.query_params["tab"] = "Studies"
    other.run()
    assert_clean(other)
    page_text = " ".join(str(x.value) for x in [*other.markdown, *other.caption, *other.info, *other.selectbox])
    assert "someone-elses" not in page_text and str(public) not in page_text
    from app import study_jobs
    from app.jobs import JobRefused

    with pytest.raises(JobRefused, match="another visitor started it"):  # no session owns it: nobody may resume it
        study_jobs.start("someone-elses")
    # the operator's setting shows every job (still without server paths)
    monkeypatch.setenv("MAFIASCOPE_SHOW_ALL_JOBS", "1")
    other.run()
    assert "someone-elses" in [str(o) for o in other.selectbox(key="ms_study_pick").options]
    shown = " ".join(str(x.value) for x in [*other.markdown, *other.caption, *other.code, *other.warning])
    assert str(public) not in shown and str(d) not in shown


def test_every_process_the_app_starts_goes_through_the_quotas():
    """subprocess is used in app/ only by app/jobs.spawn, which refuses work over the quotas (its ``work`` is required)."""
    hits = []
    for path in sorted((ROOT / "app").glob("*.py")) + sorted((ROOT / "pages").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("subprocess", "os") \
                    and node.attr in ("Popen", "run", "call", "check_call", "check_output", "system", "popen", "spawnv", "execv"):
                if path.name != "jobs.py" or node.attr != "Popen":
                    hits.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
    assert not hits, hits
    from app import jobs

    assert jobs.spawn.__kwdefaults__ is not None and "work" not in jobs.spawn.__kwdefaults__
    with pytest.raises(TypeError):
        jobs.spawn(["true"], "/dev/null")  # type: ignore[call-arg]


@pytest.mark.slow  # plays probed games until the monitor stops them
def test_a_running_job_is_stopped_when_the_runs_directory_passes_the_disk_quota(public, monkeypatch):
    """Seen: the disk quota was checked only when a job started, so one batch could fill the disk. With a 2 MB quota
    a 20-game probed batch (about 2 MB a game) is stopped by the job monitor, its log and the page say why, and no
    new job starts."""
    import time

    from app import jobs, launcher

    monkeypatch.setenv("MAFIASCOPE_QUOTA_RUNS_DISK_MB", "2")
    monkeypatch.setenv("MAFIASCOPE_QUOTA_GAMES_PER_JOB", "20")
    monkeypatch.setattr(jobs, "MONITOR_INTERVAL_S", 0.3, raising=False)
    jobs._disk.clear()
    item = launcher.launch(ROOT / "configs" / "classic.yaml", seed=1, games=20, probes=True)
    deadline = time.time() + 240
    while time.time() < deadline and item.running:
        time.sleep(0.3)
    deadline = time.time() + 10  # the monitor says why once the process has ended
    while time.time() < deadline and not getattr(item, "stopped_why", None):
        time.sleep(0.1)
    assert not item.running
    assert item.finished() < 20, "the batch ran to its end past the quota"
    why = getattr(item, "stopped_why", None)
    assert why and "over the 2 MB allowed" in why, item.tail(5)
    assert "stopped by the app: runs on this server take" in item.tail(5)
    why = jobs.refusal(launcher.launch_work(1))
    assert why and "no new job starts" in why
    at = new_app(mode="launch").run()  # the Live Game page says why its launch button is disabled
    assert_clean(at)
    assert at.button(key="lf_go").disabled
    assert "no new job starts" in plain("\n".join(c.value for c in at.caption))


@pytest.mark.slow
def test_a_visitor_cannot_see_or_answer_another_visitor_s_human_seat(public, monkeypatch):
    """Seen: any visitor who opened ``?game=<id>`` of a game with an open human move got its move form (the seat's
    private prompt: role, partners) and could send the move in the other visitor's place."""
    import json

    from .test_app_human_seat import _demo_copy, _pending

    gdir, setup = _demo_copy(public)
    seat = setup["players"][0]["name"]
    _pending(gdir, seat, "r1", "vote", "SECRET-PROMPT. End with a line: VOTE: <name>", "VOTE: <name>")
    at = new_app(game="demo-classic-01").run()
    assert_clean(at)
    assert not at.text_area and not [b for b in at.button if (b.key or "").startswith("hp_send")]
    assert not [x for x in at.markdown if "SECRET" in str(x.value)]
    from app import launcher
    from app.jobs import JobRefused

    with pytest.raises(JobRefused, match="another visitor"):
        launcher.answer(str(public), "demo-classic-01", seat, "r1", "VOTE: x")
    assert not (gdir / "human" / f"{seat}.reply.json").exists()
    # outside public mode the page is the player's own machine: the move form is there
    monkeypatch.setenv("MAFIASCOPE_PUBLIC", "0")
    at = new_app(game="demo-classic-01").run()
    assert at.text_area(key="hp_text_r1")
    assert json.loads((gdir / "human" / f"{seat}.pending.json").read_text())["request_id"] == "r1"


@pytest.mark.slow  # starts game processes
def test_launches_at_the_same_moment_cannot_pass_one_free_slot(public, monkeypatch):
    """Seen: eight launches at one moment (eight visitors' clicks) all started under ``jobs_per_server=1``: each
    counted the registered jobs before any of the others had registered its process."""
    import threading

    from app import launcher
    from app.jobs import JobRefused

    monkeypatch.setenv("MAFIASCOPE_QUOTA_JOBS_PER_SERVER", "2")
    monkeypatch.setenv("MAFIASCOPE_QUOTA_JOBS_PER_SESSION", "100")
    started, refused = [], []
    barrier = threading.Barrier(8)

    def click(seed: int) -> None:
        barrier.wait()
        try:
            started.append(launcher.launch(ROOT / "configs" / "classic.yaml", seed=seed, probes=False, snapshots=False))
        except JobRefused as exc:
            refused.append(str(exc))

    threads = [threading.Thread(target=click, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    try:
        assert len(started) == 2 and len(refused) == 6, (len(started), refused)
        assert all("the most it allows at once (2)" in r for r in refused)
    finally:
        for job in started:
            job.stop(grace=5.0)
