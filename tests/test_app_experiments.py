"""Replay page: attribution, bifurcation, A/B and repeatability launched as background jobs,
followed by their progress, and their results drawn with links to the branch games."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytest.importorskip("streamlit")

from mafiascope.replay.progress import ProgressLog, read_progress  # noqa: E402

from .app_support import plain, play  # noqa: E402
from .test_app_replay import logs, page, texts  # noqa: E402,F401  (logs is a fixture)


@pytest.fixture(autouse=True)
def _stop_jobs():
    """Stop the background jobs a test started (only those, by their process)."""
    from app import experiment_jobs as EJ

    before = {id(j) for j in EJ.jobs().all()}
    yield
    for j in EJ.jobs().all():
        if id(j) not in before:
            j.stop()


def test_progress_file_round_trip(tmp_path):
    path = tmp_path / "p.jsonl"
    log = ProgressLog(path)
    log.start(3)
    log.unit(game_id="g1", winner="Mafia")
    log.unit(game_id="g2", error="boom")
    assert read_progress(path).model_dump(include={"total", "done", "errors", "finished"}) == {
        "total": 3, "done": 2, "errors": 1, "finished": False}
    log.done("/x/result.json")
    p = read_progress(path)
    assert p.finished and p.result == "/x/result.json" and p.last["game_id"] == "g2"
    assert read_progress(tmp_path / "missing.jsonl").done == 0


def _wait_result(at, job_kind: str, timeout: float = 150.0) -> dict:
    from app import experiment_jobs as EJ

    deadline = time.time() + timeout
    while time.time() < deadline:
        jobs = [j for j in EJ.jobs().all() if j.kind == job_kind]
        assert jobs, "no job was registered"
        j = jobs[0]
        if not j.running:
            p = j.progress()
            assert p.finished, j.tail(20)
            assert p.done >= 1 and p.total >= p.done
            return json.loads(Path(p.result).read_text())
        time.sleep(1.0)
    raise AssertionError(f"{job_kind} did not finish in {timeout} s")


def _specs(at) -> list[dict]:
    out: list[dict] = []

    def walk(node):
        if getattr(node, "type", "") == "vega_lite_chart":
            out.append(json.loads(node.proto.spec))
        for c in getattr(node, "children", {}).values():
            walk(c)

    walk(at._tree)
    return out


def _click(at, key: str):
    at.button(key=key).click()
    at.run()
    assert not at.exception, at.exception
    assert any("Started" in str(s.value) for s in at.success), texts(at)
    return at


def _link_cells(at) -> set[str]:
    out: set[str] = set()
    for df in at.dataframe:
        v = df.value
        for col in ("game", "open"):
            if col in v.columns:
                out |= {str(x) for x in v[col].dropna()}
    return out


@pytest.mark.slow
def test_attribution_from_the_page_runs_in_background_and_links_its_rerolls(logs):
    at = page().run()
    assert not at.exception, at.exception
    assert at.multiselect(key="ex_utts").value, "the current step's message is preselected"
    at.multiselect(key="ex_utts").set_value(at.multiselect(key="ex_utts").options[:1] and [at.multiselect(key="ex_utts").value[0]])
    at.number_input(key="ex_n").set_value(1)
    at.selectbox(key="ex_probes").set_value("none")
    _click(at, "ex_attr_go")
    res = _wait_result(at, "attribution")
    assert res["kind"] == "attribution" and res["n_per_arm"] == 1
    at.run()
    assert not at.exception, at.exception
    labels = [plain(e.label) for e in at.expander]
    assert any(res["experiment_id"] in lab for lab in labels), labels
    links = _link_cells(at)
    games = {r["game_id"] for u in res["utterances"] for arm in ("pre", "post") for r in u[arm]["replicas"]}
    assert len(games) == 2 and all(any(f"game={g}" in link for link in links) for g in games), (games, links)
    specs = [json.dumps(s) for s in _specs(at)]
    assert any("P(Mafia wins), 95% CI" in s and '"y2"' in s for s in specs), "PRE/POST chart with intervals drawn"
    table = next(df.value for df in at.dataframe if "measure" in df.value.columns)
    rows = dict(zip(table["measure"], table[table.columns[1]]))
    assert isinstance(rows["Fisher p (Mafia wins)"], str) and rows["Holm p (Mafia wins)"] == rows["Fisher p (Mafia wins)"]  # a family of 1
    assert any("Holm p: Holm over the experiment's 1 Fisher tests" in str(c.value) for c in at.caption)


@pytest.mark.slow
def test_bifurcation_from_the_page_links_its_variants(logs):
    at = page().run()
    at.number_input(key="ex_samples").set_value(3)
    at.number_input(key="ex_select").set_value(2)
    _click(at, "ex_bif_go")
    res = _wait_result(at, "bifurcation")
    at.run()
    assert not at.exception, at.exception
    links = _link_cells(at)
    assert res["variants"] and all(any(f"game={v['fork_game_id']}" in link for link in links) for v in res["variants"])


@pytest.mark.slow
def test_ab_from_the_page_draws_arms_and_links_games(logs, tmp_path):
    at = page().run()
    at.number_input(key="va_games").set_value(1)
    _click(at, "va_go")
    ab = _wait_result(at, "validate_ab")
    at.run()
    assert not at.exception, at.exception
    assert "**A/B** (1 game per arm)" in texts(at)
    links = _link_cells(at)
    ab_games = [g["game_id"] for arm in ("probed", "unprobed") for g in ab["games"][arm]]
    assert len(ab_games) == 2 and all(g.startswith("ab") and any(f"game={g}" in x for x in links) for g in ab_games)
    assert (tmp_path / "runs" / "probed" / ab["games"]["probed"][0]["game_id"] / "game.jsonl").is_file()
    specs = [json.dumps(s) for s in _specs(at)]
    assert any("P(Mafia wins), 95% CI" in s and '"y2"' in s for s in specs), "arms drawn with intervals"


@pytest.mark.slow
def test_repeatability_from_the_page_links_its_states(logs, tmp_path):
    at = page().run()
    _click_fails = at.button(key="vr_go").click().run()
    assert any("no probed game with snapshots" in str(e.value) for e in _click_fails.error), "unprobed games: a clear error"
    play(logs / "probed", "probedgame", 3)
    at = page()
    at.query_params["game"] = "probedgame"
    at.run()
    at.number_input(key="vr_states").set_value(1)
    at.number_input(key="vr_repeats").set_value(2)
    _click(at, "vr_go")
    rep = _wait_result(at, "validate_repeat")
    at.run()
    assert not at.exception, at.exception
    assert "**Repeatability** (1 states × 2 repeats)" in texts(at)
    assert any(f"game={rep['points'][0]['game_id']}" in x for x in _link_cells(at))


def test_bad_experiment_input_is_an_error_and_starts_nothing(logs):
    from app import experiment_jobs as EJ
    from mafiascope.replay.source import ReplayError

    before = len(EJ.jobs().all())
    gdir = str(logs / "parentgame")
    with pytest.raises(ReplayError, match="no utterance at step 9.99"):
        EJ.start_attribution("parentgame", gdir, ["9.99"], 1, target=None)
    with pytest.raises(ReplayError, match="--target Nobody"):
        EJ.start_attribution("parentgame", gdir, ["1.1"], 1, target="Nobody")
    with pytest.raises(ReplayError, match="games per arm"):
        EJ.start_ab("parentgame", gdir, 0)
    assert len(EJ.jobs().all()) == before
    assert not list((logs / "experiments").glob("job-*")), "nothing is written for a refused request"


CRAFTED_RESULTS = {  # files a shared logs root may hold next to a game: none was written by this app
    "list.json": "[]",
    "deep.json": "[" * 100_000 + "]" * 100_000,
    "no-id.json": '{"kind": "attribution", "parent_game_id": "%s"}',
    "bad-types.json": '{"kind": "attribution", "parent_game_id": "%s", "experiment_id": "y", "utterances": [5, {"utterance": 5, "pre": 3}], "created": NaN}',
    "bad-variants.json": '{"kind": "bifurcation", "parent_game_id": "%s", "experiment_id": "x", "variants": 5, "created": "zz"}',
    "validate-1.json": "[1]",
    "validate-2.json": '{"kind": "validate_ab", "created": "zz"}',
    "validate-3.json": '{"kind": "validate_repeat", "points": "zz", "created": 1e400}',
}


@pytest.mark.slow
def test_crafted_result_files_are_left_out_not_a_traceback(tmp_path, monkeypatch):
    """Seen: one ``[]`` in ``<logs>/experiments/`` (or a result with a field of the wrong type) made the Replay page
    of that game end in a traceback, for every visitor, on every tab."""
    import shutil

    from .app_support import DEMO, new_app, use_logs

    root = tmp_path / "logs"
    shutil.copytree(DEMO / "demo-classic-01", root / "demo-classic-01")
    (root / "experiments").mkdir()
    for name, text in CRAFTED_RESULTS.items():
        (root / "experiments" / name).write_text(text.replace("%s", "demo-classic-01"), encoding="utf-8")
    use_logs(monkeypatch, root, tmp_path)
    monkeypatch.setenv("MAFIASCOPE_PUBLIC", "1")
    for tab in ("Branch tree", "Experiments", "Validation"):
        at = new_app(page="replay", game="demo-classic-01", tab=tab).run()
        assert not at.exception, (tab, [e.message for e in at.exception])
        warned = " ".join(plain(str(w.value)) for w in at.warning)
        for name in ("no-id.json", "bad-types.json", "bad-variants.json", "validate-2.json", "validate-3.json"):
            assert f"{name}: left out" in warned, (tab, name, warned)


@pytest.mark.slow
def test_the_attribution_result_a_researcher_opened_stays_open(tmp_path, monkeypatch):
    """Seen in Chromium: an opened attribution result closed again on a later rerun. Its open state lived only in the
    browser (``expanded=`` the newest result); it is now the session's and the URL's ``?exp=``, so reruns, a reload and
    a shared link keep the chosen result open, and the newest is open only when none was chosen."""
    import shutil
    import subprocess
    import sys

    from app.replay_view import EXP_OPEN

    from .app_support import DEMO, ROOT, new_app, use_logs

    root = tmp_path / "logs"
    shutil.copytree(DEMO / "demo-classic-01", root / "demo-classic-01")
    subprocess.run([sys.executable, "-m", "mafiascope", "replay", "attribution", str(root / "demo-classic-01"), "--utterances", "1.5",
                    "-n", "1", "--probes", "none", "--logs", str(root), "--json"],
                   check=True, cwd=ROOT, stdout=subprocess.DEVNULL, timeout=300)  # fmt: skip
    (first,) = (root / "experiments").glob("attr-*.json")
    older = {**json.loads(first.read_text()), "experiment_id": "attr-older", "created": 1.0}
    (root / "experiments" / "attr-older.json").write_text(json.dumps(older), encoding="utf-8")
    newest = json.loads(first.read_text())["experiment_id"]
    use_logs(monkeypatch, root, tmp_path)

    def opened(at) -> list[str]:
        return [plain(e.label).split(" ·")[0] for e in at.expander if plain(e.label).startswith("attribution attr-") and e.proto.expanded]

    at = new_app(page="replay", game="demo-classic-01", tab="Experiments").run()
    assert not at.exception, [e.message for e in at.exception]
    assert opened(at) == [f"attribution {newest}"] and at.query_params["exp"] == newest
    at = new_app(page="replay", game="demo-classic-01", tab="Experiments", exp="attr-older").run()
    assert opened(at) == ["attribution attr-older"], opened(at)
    at.number_input(key="ex_n").set_value(4).run()  # any widget's rerun
    at.run()
    assert opened(at) == ["attribution attr-older"] and at.session_state[EXP_OPEN] == ["attr-older"]
    assert at.query_params["exp"] == "attr-older"
    at = new_app(page="replay", game="demo-classic-01", tab="Experiments", exp="attr-nope").run()
    assert any("URL parameter exp=" in plain(str(x.value)) and "attr-nope" in plain(str(x.value)) for x in at.error), \
        [str(x.value) for x in at.error]
    assert opened(at) == [f"attribution {newest}"]
