"""Replay QA (found driving the page in a browser): interventions act once, bundled games are
never written to, a finished batch shows up without a reload, and the branch tree says
what each batch changed, with n and intervals."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from mafiascope.logs.io import read_jsonl
from mafiascope.replay.forks import plan_fork, run_fork_batch
from mafiascope.replay.source import ParentGame

from .test_replay_forks import play_bot


@pytest.fixture(scope="module")
def parent(tmp_path_factory) -> Path:
    return play_bot(tmp_path_factory.mktemp("qa-parent"), gid="qaparent", seed=4)


def _own(recs, seat):
    return [r for r in recs if r.get("player") == seat and not r.get("inherited") and r.get("kind") != "setup"]


def test_replaced_utterance_is_said_once_not_at_every_later_turn(parent, tmp_path):
    """The seat's later turns carry the forced text in their history; they must reach the real
    backend (the branch used to repeat the replacement at every later vote, night action and speech)."""
    p = ParentGame.load(parent)
    ev = next(e for e in p.records if e["kind"] == "day_discuss" and e["round"] == 1)
    text = "A sentence only the intervention would ever say, about nobody in particular."
    rec = asyncio.run(run_fork_batch(plan_fork(p, (ev["round"], ev["msg_seq"]), 2, logs=tmp_path, replace_text=text,
                                               seat=ev["player"], batch_seed=3)))  # fmt: skip
    for br in rec["branches"]:
        mine = _own(read_jsonl(Path(br["path"]) / "game.jsonl"), ev["player"])
        said = [(r["round"], r["msg_seq"], r["kind"]) for r in mine if text in (r.get("response") or "")]
        assert said == [(ev["round"], ev["msg_seq"], "day_discuss")], said
        assert len(mine) > 1  # the seat did act again, with its own words


def test_night_override_applies_to_that_night_only(parent, tmp_path):
    p = ParentGame.load(parent)
    ev = next(e for e in p.records if e["kind"] == "night_mafia" and e["round"] == 1)
    mafia = {pl["name"] for pl in p.setup["players"] if pl["role"] == "Mafia"}
    victim = next(pl["name"] for pl in p.setup["players"] if pl["name"] not in mafia and pl["name"] != ev.get("target"))
    rec = asyncio.run(run_fork_batch(plan_fork(p, (1, ev["msg_seq"]), 2, logs=tmp_path, override_night=(ev["player"], victim),
                                               batch_seed=3)))  # fmt: skip
    for br in rec["branches"]:
        recs = read_jsonl(Path(br["path"]) / "game.jsonl")
        forced = recs[0]["intervention"]["text"]
        mine = _own(recs, ev["player"])
        assert {r["round"] for r in mine if (r.get("response") or "") == forced} == {1}, [(r["round"], r["msg_seq"], r["kind"]) for r in mine if (r.get("response") or "") == forced]


# ----------------------------------------------------------------------------- the page

pytest.importorskip("streamlit")

from app import replay_jobs as J  # noqa: E402
from app import replay_view as V  # noqa: E402

from .test_app_replay import logs, page, texts  # noqa: E402,F401  (fixture and helpers)


def test_branches_of_a_bundled_game_go_to_the_runs_dir(tmp_path, monkeypatch):
    """Forking data/demo wrote the branches into data/demo (read-only on a deployment, part of the repository)."""
    bundled = tmp_path / "data"
    game = play_bot(bundled / "demo", gid="bundled", seed=4)
    runs = tmp_path / "runs"
    monkeypatch.setattr(J, "DATA_DIR", bundled)
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(runs))
    assert J.branch_logs(game) == runs
    assert J.read_dirs(game) == [game.parent, runs]
    other = play_bot(tmp_path / "mine", gid="mine", seed=4)
    assert J.branch_logs(other) == other.parent and J.read_dirs(other) == [other.parent]
    # the page's tree reads the runs dir too
    asyncio.run(run_fork_batch(plan_fork(game, "1.-1", 2, logs=J.branch_logs(game), batch_seed=1, batch_id="bbbb2222")))
    assert not list((bundled / "demo").glob("fork-*")) and len(list(runs.glob("fork-bbbb2222-*"))) == 2
    tree = J.branch_tree_of(game, "bundled")
    assert [b["fork_batch_id"] for b in tree["batches"]] == ["bbbb2222"]


class _Job:
    def __init__(self, bid, running):
        self.batch_id, self.running = bid, running


def test_a_finished_batch_is_reported_once():
    """The progress fragment reruns the whole page once per finished batch (the tree is outside the fragment;
    a batch that finished between two polls used to stay invisible until the user touched a widget)."""
    seen: set[str] = {"old"}
    jobs = [_Job("old", False), _Job("a", True)]
    assert J.newly_finished(jobs, seen) == []
    jobs[1].running = False
    assert [j.batch_id for j in J.newly_finished(jobs, seen)] == ["a"]
    assert J.newly_finished(jobs, seen) == []


def _batch(bid, fork_point, intervention, winners):
    n = sum(winners.values())
    summ = {"n": n, "finished": n, "unfinished": 0, "rounds": {"n": n, "mean": 2.0, "min": 2, "max": 2},
            "winner": {s: {"k": k, "n": n, "p": k / n, "ci95": [0.1, 0.9]} for s, k in winners.items()},
            "day_eliminated": {"1": {"Casey": {"k": 3, "n": n, "p": 0.75, "ci95": [0.3, 0.95]}}},
            "night_killed": {"2": {"Alex": {"k": 1, "n": n, "p": 0.25, "ci95": [0.05, 0.7]}}}}  # fmt: skip
    return {"fork_batch_id": bid, "fork_point": fork_point, "intervention": intervention, "summary": summ,
            "branches": [{"game_id": f"fork-{bid}-000", "winner": "Mafia", "rounds": 2, "batches": []}]}


def test_tree_labels_name_the_step_the_change_and_n():
    replace = {"type": "replace_utterance", "seat": "Indigo", "text": "Riley is Mafia.", "step": [1, 5]}
    night = {"type": "override_night", "seat": "Indigo", "action": "kill", "target": "Alex", "step": [2, 1]}
    tree = {"game_id": "g", "batches": [_batch("endbatch01", [1, -1], night, {"Mafia": 4}),
                                        _batch("replace001", [1, 4], replace, {"Mafia": 3, "Villagers": 1}),
                                        _batch("resample01", [1, 5], None, {"Mafia": 4})]}  # fmt: skip
    rows = V._batches(tree)
    # chronological by the step picked (a round's end after its messages): a replacement at the replaced turn, a night
    # action forced at its own step, a resample at its fork point (app/fork_start.py)
    assert [(r["fork_point"], r["batch"]) for r in rows] == [("R1.5", "replace001"), ("R1.5", "resample01"), ("R2.1", "endbatch01")]
    assert [r["start"].new for r in rows] == ["R1.5 replaced", "new after R1.5", "R2.1 forced (Indigo kill → Alex)"]
    assert rows[0]["intervention"] == "Indigo says “Riley is Mafia.”" and rows[2]["intervention"] == "Indigo kill → Alex"
    spec = V.outcome_chart(rows).to_dict()
    labels = {d["batch"] for d in next(iter(spec["datasets"].values()))}
    assert "R1.5 replaced · Indigo says “Riley is Mafia.” · n=4 (replac)" in labels
    assert spec["encoding"]["y"]["axis"]["labelLimit"] >= 400
    assert V.live_link("fork-x-000", "R1.end") == "?page=live&game=fork-x-000&step=R1.end"


@pytest.mark.slow
def test_page_tree_shows_what_changed_and_links_at_the_step(logs):
    p = ParentGame.load(logs / "parentgame")
    ev = next(e for e in p.records if e["kind"] == "day_discuss" and e["round"] == 1)
    text = "Everyone, look closely at the quiet ones."
    asyncio.run(run_fork_batch(plan_fork(p, (ev["round"], ev["msg_seq"]), 2, logs=logs, replace_text=text, seat=ev["player"],
                                         batch_seed=1, batch_id="cccc3333")))  # fmt: skip
    at = page().run()
    assert not at.exception, at.exception
    body = texts(at)
    step = f"R{ev['round']}.{ev['msg_seq']}"
    assert f"↳ {step} replaced · {ev['player']} says “{text}”" in body, body
    assert f"?page=live&game=fork-cccc3333-000&step={step}" in body
    assert "voted out" in json.dumps([str(d.value) for d in at.dataframe]) or at.dataframe


def test_attribution_chart_has_intervals_pre_before_post_and_n():
    arm = lambda k, n: {"k": k, "n": n, "p": k / n, "ci95": [0.05, 0.7]}  # noqa: E731
    res = {"target": "Alex", "utterances": [{"utterance": {"step": "1.5", "speaker": "Indigo"},
                                              "delta_post_minus_pre": {"p_eliminate_target": {"pre": arm(0, 4), "post": arm(1, 4)}}}]}  # fmt: skip
    spec = V.attribution_chart(res).to_dict()
    layers = spec["spec"]["layer"]
    marks = [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in layers]
    assert marks == ["bar", "rule", "text"]  # the intervals are drawn, and k/n is written on each bar
    # readable on both themes: grey whiskers (were #333) and mid-grey text (was the default black)
    from app.palette import luminance

    assert layers[1]["mark"]["color"].lower() not in ("#333", "#333333", "black", "#000000")
    assert 0.1 < luminance(layers[2]["mark"]["fill"]) < 0.3
    assert spec["spec"]["layer"][0]["encoding"]["x"]["sort"] == ["PRE", "POST"]
    rows = next(iter(spec["datasets"].values()))
    assert {r["k/n"] for r in rows} == {"0/4", "1/4"}


def _at_step(label: str):
    at = page()
    at.query_params["step"] = label
    return at.run()


@pytest.mark.slow
def test_page_errors_name_the_form_fields_not_cli_flags(logs):
    at = _at_step("R2.1")  # a night action: the replacement box and the night pickers are both open
    at.text_area(key="rp_replace").set_value("Hello there.")
    at.selectbox(key="rp_night_seat:2.1").set_value(_mafia(logs)[0])
    at.run()
    at.button(key="rp_go").click()
    at.run()
    assert not at.exception
    msg = " ".join(str(e.value) for e in at.error)
    assert msg and "--" not in msg and "night override" in msg, msg


def _mafia(logs) -> list[str]:
    setup = read_jsonl(logs / "parentgame" / "game.jsonl")[0]
    return [p["name"] for p in setup["players"] if p["role"] in ("Mafia", "Don")]


@pytest.mark.slow
def test_night_override_is_picked_from_the_engines_actors_and_targets(logs):
    """The night override used to be a free-text SEAT=TARGET box; now a seat with a night action still to come
    and one of its legal targets are picked, as the engine's own check decides (mafiascope.replay.forks)."""
    p = ParentGame.load(logs / "parentgame")
    setup = p.setup["players"]
    roles = {pl["name"]: pl["role"] for pl in setup}
    alive = [n for n in roles if n in (p.snapshot((1, -1))["alive"])]
    actors = J.night_actors(p, (1, -1))
    assert {a["seat"] for a in actors} == {n for n in alive if roles[n] in ("Mafia", "Don", "Doctor", "Sheriff")}
    mafia = next(a for a in actors if roles[a["seat"]] == "Mafia")
    assert mafia["action"] == "kill" and set(mafia["targets"]) == {n for n in alive if roles[n] not in ("Mafia", "Don")}
    assert J.night_actors(p, (1, 5)) == []  # a day step with the night behind it
    night = J.night_actors(p, (2, 1))
    mafia = next(a for a in night if roles[a["seat"]] == "Mafia")
    at = _at_step("R2.1")  # the timeline of a transcript-only game has no round-end steps: a night action
    assert not at.exception, at.exception
    with pytest.raises(KeyError):
        at.text_input(key="rp_night")  # no free-text box any more
    pick = at.selectbox(key="rp_night_seat:2.1")
    assert pick.options[0] == "no override" and any(o.startswith(f"{mafia['seat']} (Mafia, kill)") for o in pick.options)
    pick.set_value(mafia["seat"])
    at.run()
    target = at.selectbox(key=f"rp_night_target:2.1:{mafia['seat']}")
    assert target.options == mafia["targets"]
    victim = mafia["targets"][-1]
    target.set_value(victim)
    at.number_input(key="rp_n").set_value(1)
    at.selectbox(key="rp_probes").set_value("none")
    at.button(key="rp_go").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Started fork batch" in str(x.value) for x in at.success)
    deadline, rec = time.time() + 60, None
    while time.time() < deadline and rec is None:
        for f in (logs / "experiments").glob("fork-*.json"):
            try:
                r = json.loads(f.read_text())
            except ValueError:  # being written
                continue
            if r.get("status") == "done" and (r.get("plan", {}).get("intervention") or r.get("intervention")):
                rec = r
        time.sleep(0.2)
    assert rec is not None
    iv = rec.get("plan", {}).get("intervention") or rec.get("intervention")
    assert (iv["type"], iv["seat"], iv["target"], iv["action"]) == ("override_night", mafia["seat"], victim, "kill")
    # a day step: no pickers, a caption that says why
    at = _at_step("R1.5")
    assert not at.exception
    assert not [w for w in at.selectbox if str(w.key).startswith("rp_night")]
    assert "R1.5 is a day step" in texts(at) and "can be forced from R2.1" in texts(at)  # no round-end steps here


@pytest.mark.slow
def test_outcome_rows_inherited_from_the_parent_are_marked(logs):
    """A batch forked at R1 end inherits round 1's night kill and vote: they were listed as if the branches
    had produced them (“R1 killed at night: X 2/2”)."""
    at = page().run()
    assert not at.exception, at.exception
    df = next(d.value for d in at.dataframe if "player" in d.value.columns)
    assert "before the fork" in df.columns, df.columns
    r1 = df[df["round"] == 1]
    assert len(r1) and (r1["before the fork"] == "inherited").all(), df
    assert (df[df["round"] > 1]["before the fork"] == "").all(), df
    assert "not an effect of the branch" in texts(at)
    # the rows come from the branches' inherited records, so a fork inside a day keeps that day's vote as an outcome
    summ = {"night_killed": {"1": {"A": {"k": 2, "n": 2, "p": 1.0, "ci95": [0.3, 1.0]}}},
            "day_eliminated": {"1": {"B": {"k": 1, "n": 2, "p": 0.5, "ci95": [0.1, 0.9]}}}}  # fmt: skip
    rows = V.outcome_rows(summ, {"night_killed": {"1": "A"}, "day_eliminated": {}})
    assert [(o["player"], o["before the fork"]) for o in rows] == [("A", "inherited"), ("B", "")]


def test_outcome_chart_has_the_parent_as_a_bar_and_no_empty_fork_column():
    """The parent's own result was only text under the chart; a fork before any elimination showed an empty
    "before the fork" column."""
    tree = {"game_id": "g", "batches": [_batch("resample01", [1, 5], None, {"Mafia": 3, "Villagers": 1})]}
    rows = V._batches(tree)
    data = next(iter(V.outcome_chart(rows, "Villagers").to_dict()["datasets"].values()))
    assert data[0]["batch"] == V.PARENT_LABEL and data[0]["winner"] == "Villagers"
    assert [d["batch"] for d in data[1:]] == ["new after R1.5 · resample · n=4 (resamp)"] * 2
    assert V.outcome_chart(rows)  # no parent result (unfinished parent): the batches alone
    outs = V.outcome_rows(rows[0]["summary"], {})
    assert outs and all("before the fork" not in o for o in outs)
