"""Issue 31 acceptance: a hostile visitor drives every text input of every page.

Every text box and text area of every page (the sidebar's, the Live Game launch form with its line-up
editor and probe battery editor, a human seat's reply box, Replay, Search, Arena, Studies) gets, one
payload at a time: ``${NAME}`` references to a planted server variable and to a planted root
``st.secrets`` entry (bare, inside text, inside a base URL), the bare names, Markdown, HTML and an
oversized value. Every launch button that is enabled is pressed; base URLs point at a loopback
listener. Then the planted values must appear in no response (any element the app sent), no file
(under the runs directory, the logs root and the cache directory) and no request the listener received.
"""

from __future__ import annotations

import json
import shutil
import time

import pytest

pytest.importorskip("streamlit")

from .app_support import DEMO, new_app  # noqa: E402
from .servers import Listener  # noqa: E402

SERVER_VALUE = "planted-SERVER-Zq81xW-value"  # an ordinary server variable
ST_VALUE = "planted-STSECRET-Kp42vQ-value"  # a root-level st.secrets entry
PLANTED = (SERVER_VALUE, ST_VALUE)


def payloads(listener: Listener) -> list[str]:
    host = f"127.0.0.1:{listener.port}"
    return [
        "${PLANTED_SERVER}", "x-${PLANTED_STSECRET}", "PLANTED_SERVER", "PLANTED_STSECRET",
        f"http://{host}/k/${{PLANTED_SERVER}}/v1", f"http://{host}/v1?key=${{PLANTED_STSECRET}}",
        f"![beacon](http://{host}/md.png) **bold** [link](http://{host}/l) $x^2$ :red[red]",
        f"<img src=http://{host}/html.png onerror=alert(1)><script>alert(2)</script>",
        "A" * 100_000 + "${PLANTED_SERVER}",
    ]


def _protos(node) -> list[bytes]:
    out = []
    proto = getattr(node, "proto", None)
    if proto is not None:
        out.append(proto.SerializeToString())
    for child in getattr(node, "children", {}).values():
        out += _protos(child)
    return out


class Visitor:
    """Drives pages and keeps every byte the app sent back."""

    def __init__(self, listener: Listener) -> None:
        self.payloads = payloads(listener)
        self.sent: list[bytes] = []
        self.inputs = 0
        self.exceptions: list[str] = []

    def record(self, at) -> None:
        self.sent += _protos(at._tree)
        self.exceptions += [e.message for e in at.exception]

    def run(self, at):
        at.run()
        self.record(at)
        return at

    def drive(self, at, *, press: tuple[str, ...] = (), rounds: int = 3) -> None:
        """Every text input and area of ``at`` (those that appear after a run too), one payload at a time for all."""
        seen: set[str] = set()
        for _ in range(rounds):
            boxes = [w for w in [*at.text_input, *at.text_area] if w.key and not w.disabled and w.key not in seen]
            if not boxes:
                break
            seen |= {w.key for w in boxes}
            self.inputs += len(boxes)
            for payload in self.payloads:
                for w in [*at.text_input, *at.text_area]:
                    if w.key in seen and not w.disabled:
                        w.set_value(payload)
                self.run(at)
                for key in press:
                    self.press(at, key)

    def press(self, at, key: str) -> None:
        """Click the button ``key`` when the page shows it enabled."""
        found = [b for b in at.button if b.key == key and not b.disabled]
        if found:
            found[0].click()
            self.run(at)


@pytest.fixture()
def hostile(tmp_path, monkeypatch):
    listener = Listener()
    logs = tmp_path / "logs"
    for gid in ("demo-classic-01", "demo-sheriff-01"):
        shutil.copytree(DEMO / gid, logs / gid)
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(logs))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("MAFIASCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PLANTED_SERVER", SERVER_VALUE)
    monkeypatch.delenv("MAFIASCOPE_KEYS", raising=False)
    yield tmp_path, listener
    _stop_jobs()
    listener.close()


def _stop_jobs() -> None:
    from app import arena_jobs, experiment_jobs, launcher, replay_jobs, study_jobs

    for reg in (launcher.registry(), study_jobs.jobs(), arena_jobs.jobs(), replay_jobs.jobs(), experiment_jobs.jobs()):
        for job in getattr(reg, "every", reg.all)():
            job.stop(grace=5.0)


def app(visitor: Visitor, **params: str):
    at = new_app(**params)
    at.secrets["PLANTED_STSECRET"] = ST_VALUE
    return visitor.run(at)


def lineup_form(v: Visitor, listener: Listener, battery: bool = False):
    """Live Game's launch form with the line-up editor open, one model at the listener seated in seat 2."""
    at = app(v, mode="launch")
    at.toggle(key="lineup").set_value(True)
    if battery:
        at.toggle(key="custom_probes").set_value(True)
    v.run(at)
    at.button(key="lu_add").click()
    v.run(at)
    at.selectbox(key="lu_prov_1").set_value("vLLM (local)")
    v.run(at)
    at.text_input(key="lu_url_1").set_value(f"http://127.0.0.1:{listener.port}/v1")
    at.selectbox(key="lu_seat:classic:1").set_value("model:1")
    return v.run(at)


def _wait_for_jobs(timeout: float = 120.0) -> None:
    from app import arena_jobs, experiment_jobs, launcher, replay_jobs, study_jobs

    regs = (launcher.registry(), study_jobs.jobs(), arena_jobs.jobs(), replay_jobs.jobs(), experiment_jobs.jobs())
    deadline = time.time() + timeout
    while time.time() < deadline and any(j.running for r in regs for j in getattr(r, "every", r.all)()):
        time.sleep(0.5)


@pytest.mark.slow  # every page, many reruns and a few background jobs
def test_a_hostile_visitor_reaches_no_planted_value(hostile, monkeypatch):
    tmp, listener = hostile
    v = Visitor(listener)
    # every page as it opens: the sidebar's search box and each page's own inputs
    from app.nav import PAGES

    for page in PAGES:
        at = app(v, page=page.url, game="demo-classic-01")
        v.drive(at, press=("rp_go",))
    # Live Game's launch form: the line-up editor with a model at the listener, the probe battery editor
    at = lineup_form(v, listener, battery=True)
    v.drive(at, press=("lf_go",))
    # the same model seated with a payload only in its Model field (the rest valid), launched
    at = lineup_form(v, listener)
    at.text_input(key="lu_name_1").set_value("dev")
    for model in ("x-${PLANTED_SERVER}", "${PLANTED_STSECRET}"):
        at.text_input(key="lu_model_1").set_value(model)
        v.run(at)
        v.press(at, "lf_go")
    # a human seat's open move: the reply box
    gdir = tmp / "logs" / "demo-classic-01"
    seat = json.loads((gdir / "game.jsonl").read_text().splitlines()[0])["players"][0]["name"]
    (gdir / "human").mkdir(exist_ok=True)
    (gdir / "human" / f"{seat}.pending.json").write_text(json.dumps({
        "request_id": "r1", "seat": seat, "purpose": "vote", "kind": "act", "messages": [], "created": 0,
        "instruction": "Vote now. End with a line: VOTE: <name>", "format": "VOTE: <name>"}))
    at = app(v, game="demo-classic-01")
    v.drive(at, press=("hp_send_r1",))
    # Arena: the extra models box and the run name, launched when the page lets it
    at = app(v, page="arena")
    v.drive(at, press=("ms_arena_launch",))
    # Studies: a hosted model whose Model and Key variable fields take the payloads, launched when allowed
    at = app(v, page="studies")
    at.number_input(key="ms_study_nmodels").set_value(1)
    v.run(at)
    v.drive(at, press=("ms_study_launch",))
    at = app(v, page="studies", tab="Plan & launch")  # a launch follows the new study to the Studies tab
    at.number_input(key="ms_study_nmodels").set_value(1)
    v.run(at)
    for model in ("x-${PLANTED_SERVER}", "${PLANTED_STSECRET}"):
        at.text_input(key="ms_study_m0_model").set_value(model)
        at.text_input(key="ms_study_m0_key").set_value("")
        at.text_input(key="ms_study_name").set_value("hostile-" + str(len(model)))
        v.run(at)
        v.press(at, "ms_study_launch")  # absent while the spec has problems
    _wait_for_jobs()

    assert v.inputs >= 20, v.inputs  # the sidebar's, the line-up's, the battery editor's, the reply box, Arena, Studies ...
    assert not v.exceptions, v.exceptions[:3]
    for value in PLANTED:
        b = value.encode()
        assert not any(b in sent for sent in v.sent), f"{value} came back in the page"
        files = [p for root in (tmp / "runs", tmp / "logs", tmp / "cache") if root.exists() for p in root.rglob("*") if p.is_file()]
        leaks = [str(p) for p in files if b in p.read_bytes()]
        assert not leaks, leaks
        assert b not in listener.received, f"{value} was sent to the visitor's URL"
