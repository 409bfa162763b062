"""Live Game launch form: the line-up editor (a backend per seat: the config's, a bot preset, an
OpenAI-compatible model defined in the form) and its derived config (app/lineup.py)."""

from __future__ import annotations

import time

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from app import lineup
from app.lineup import ModelDef

ROOT = Path(__file__).resolve().parents[1]
CLASSIC = ROOT / "configs" / "classic.yaml"
SECRET = "sk-lineup-FAKE-0123456789abcdef"
KEY_VAR = "MS_LINEUP_TEST_KEY"


def _classic() -> dict:
    return yaml.safe_load(CLASSIC.read_text(encoding="utf-8"))


def _gpt(**kw) -> ModelDef:
    return ModelDef("a", "gpt", **{"model": "gpt-4o-mini", "key_var": KEY_VAR, **kw})


# ----------------------------------------------------------------------------- derived config (unit)


def test_derive_overrides_seats_and_shares_one_model_entry(monkeypatch):
    monkeypatch.setenv(KEY_VAR, SECRET)
    data = _classic()
    before = json.dumps(data, sort_keys=True)
    gpt = _gpt(temperature=0.3)
    out = lineup.derive(data, {0: "bot:gullible", 2: gpt.choice, 4: gpt.choice, 5: lineup.CONFIG}, [gpt])
    assert json.dumps(data, sort_keys=True) == before  # the config itself is untouched
    seats = [s["backend"] for s in out["seats"]]
    orig = [s["backend"] for s in data["seats"]]
    assert seats[0] == "lineup-bot-gullible" and out["backends"]["lineup-bot-gullible"] == {"type": "bot", "preset": "gullible"}
    assert seats[2] == seats[4] == "lineup-gpt"
    assert [b for b in out["backends"] if b.startswith("lineup-")] == ["lineup-bot-gullible", "lineup-gpt"]  # one entry, used twice
    assert out["backends"]["lineup-gpt"] == {"type": "openai", "model": "gpt-4o-mini", "base_url": "https://api.openai.com/v1",
                                             "api_key": "${" + KEY_VAR + "}", "temperature": 0.3}
    assert [seats[i] for i in (1, 3, 5, 6)] == [orig[i] for i in (1, 3, 5, 6)]
    # the engine accepts it, and the key is a reference only
    from mafiascope.config import parse_game_config

    cfg = parse_game_config(out, "derived")
    assert cfg.backends["lineup-gpt"].api_key == "${" + KEY_VAR + "}"
    text = lineup.to_yaml(out, source=str(CLASSIC))
    assert SECRET not in text and "${" + KEY_VAR + "}" in text
    assert yaml.safe_load(text) == out
    assert lineup.problems(data, {0: "bot:gullible", 2: gpt.choice}, [gpt], available={KEY_VAR}) == []


def test_no_choice_is_the_config_and_a_skipped_seat_is_left_for_the_human(tmp_path):
    from app import launcher

    data = _classic()
    assert lineup.derive(data, {}, []) == data
    assert lineup.derive(data, {i: lineup.CONFIG for i in range(7)}, []) == data
    out = lineup.derive(data, {1: "bot:analyst", 2: "bot:analyst"}, [], skip=1)
    assert out["seats"][1] == data["seats"][1] and out["seats"][2]["backend"] == "lineup-bot-analyst"
    path = launcher.lineup_config(CLASSIC, out, tmp_path / "g.yaml")
    human = yaml.safe_load(launcher.human_config(path, "seat 2", tmp_path / "g").read_text())
    assert human["seats"][1]["backend"] == "app_human" and human["seats"][2]["backend"] == "lineup-bot-analyst"


def test_backend_names_never_clash_with_the_configs():
    data = _classic()
    data["backends"]["lineup-bot-cautious"] = {"type": "bot", "preset": "balanced"}
    data["backends"]["lineup-gpt"] = {"type": "bot"}
    gpt = _gpt()
    out = lineup.derive(data, {0: "bot:cautious", 1: gpt.choice}, [gpt])
    assert out["seats"][0]["backend"] == "lineup-bot-cautious-2" and out["seats"][1]["backend"] == "lineup-gpt-2"
    assert out["backends"]["lineup-bot-cautious"] == {"type": "bot", "preset": "balanced"}


def test_problems_name_the_seat_and_the_field():
    data = _classic()
    bad = ModelDef("b", "broken", model="", base_url="ftp://example", key_var="", temperature=3.0)
    unused = ModelDef("c", "spare", model="")
    found = lineup.problems(data, {2: bad.choice, 5: bad.choice}, [bad, unused], available=set())
    seat3 = {p.field: p.text for p in found if p.seat == 2}
    assert set(seat3) == {"model", "base_url", "temperature"}, found
    assert seat3["temperature"].startswith("seat 3 (model 'broken'): temperature: ") and "less than or equal to 2" in seat3["temperature"]
    assert "http:// or https://" in seat3["base_url"] and "Value error" not in seat3["base_url"]
    assert {p.seat for p in found if p.seat is not None} == {2, 5}
    # the unused model's problem is shown but does not block; the used one's do
    assert any(p.model == "c" for p in found) and not any(p.model == "c" for p in lineup.blocking(found))
    assert {p.seat for p in lineup.blocking(found)} == {2, 5}
    # duplicate names
    twins = [ModelDef("x", "same", model="m"), ModelDef("y", "same", model="m")]
    assert any(p.field == "name" and p.seat == 0 for p in lineup.problems(data, {0: "model:x"}, twins))


def test_engine_config_errors_are_mapped_to_the_seat():
    data = _classic()
    data["seats"][3]["colour"] = "red"
    found = lineup.problems(data, {0: "bot:analyst"}, [])
    assert any(p.seat == 3 and p.where == "seat 4" and "colour" in p.text for p in found), found
    assert lineup.blocking(found)


def test_missing_key_variable_is_reported_per_seat():
    data = _classic()
    gpt = _gpt()
    found = lineup.problems(data, {1: gpt.choice, 6: gpt.choice}, [gpt], available={"PATH"})
    assert [(p.seat, p.field) for p in found] == [(1, "API key"), (6, "API key")]
    assert f"${KEY_VAR} is set neither in the environment nor in st.secrets" in found[0].text
    assert found[0].text.startswith("seat 2 (model 'gpt')")
    assert lineup.problems(data, {1: gpt.choice}, [gpt], available={KEY_VAR}) == []
    # a keyless local server needs none; a human seat that overrides the seat needs none either
    local = ModelDef("l", "local", model="qwen3:8b", base_url="http://127.0.0.1:11434/v1", key_var="")
    assert lineup.problems(data, {1: local.choice}, [local], available=set()) == []
    assert lineup.problems(data, {1: gpt.choice}, [gpt], available=set(), skip=1) == []


def test_a_pasted_key_is_refused_and_never_repeated():
    data = _classic()
    for pasted in (SECRET, "0123456789abcdefghijABCDEFGHIJ0123456789xyz", "my key!"):
        m = ModelDef("k", "gpt", model="gpt-4o-mini", key_var=pasted)
        found = lineup.problems(data, {0: m.choice}, [m], available={pasted})
        assert any(p.seat == 0 and p.field == "API key variable" for p in found), found
        assert all(pasted not in p.text for p in found)
        with pytest.raises(ValueError) as err:
            lineup.derive(data, {0: m.choice}, [m])
        assert pasted not in str(err.value)


def test_describe_says_what_each_seat_will_be():
    data = _classic()
    gpt = _gpt(temperature=0.5)
    seat = data["seats"][0]
    assert lineup.describe(lineup.CONFIG, seat, data, [gpt]) == "as configured: `balanced`: offline bot, preset balanced"
    assert lineup.describe("bot:cautious", seat, data, [gpt]) == "offline bot, preset cautious (no key)"
    assert lineup.describe(gpt.choice, seat, data, [gpt]) == f"openai gpt-4o-mini @ api.openai.com · key ${KEY_VAR} · temperature 0.5"
    assert lineup.option_label(gpt.choice, [gpt]) == "model · gpt"
    assert lineup.seat_labels(data) == [f"seat {i}" for i in range(1, 8)]


# ----------------------------------------------------------------------------- the page (AppTest, launched games)

st = pytest.importorskip("streamlit")

from .app_support import assert_clean, errors, new_app, plain, texts  # noqa: E402
from .test_app_live import _stop_all, _wait, runs  # noqa: E402,F401  (the runs-dir fixture, stop and poll helpers)


def _finished(gdir: Path, timeout: float = 150.0) -> bool:
    p = gdir / "game.jsonl"
    return _wait(lambda: p.exists() and '"game_over"' in p.read_text(encoding="utf-8"), timeout=timeout)


def _records(gdir: Path) -> list[dict]:
    return [json.loads(line) for line in (gdir / "game.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.slow
def test_launch_with_a_bot_preset_in_one_seat(runs):
    at = new_app(mode="launch").run()
    at.toggle(key="lineup").set_value(True).run()
    assert_clean(at)
    at.selectbox(key="lu_seat:classic:0").set_value("bot:gullible").run()
    assert_clean(at)
    assert "offline bot, preset gullible (no key)" in texts(at)
    assert not errors(at) and not at.button(key="lf_go").disabled
    at.toggle(key="probes").set_value(False)
    at.button(key="lf_go").click().run()
    assert_clean(at)
    try:
        gid = at.session_state["ms_game"]
        gdir = runs / gid
        assert _finished(gdir)
        recs = _records(gdir)
        setup = recs[0]
        assert setup["kind"] == "setup" and recs[-1]["kind"] == "game_over"
        by_backend = Counter(p["backend"] for p in setup["players"])
        orig = Counter(s["backend"] for s in _classic()["seats"])
        assert by_backend["lineup-bot-gullible"] == 1
        assert by_backend + Counter({"balanced": 1}) == orig + Counter({"lineup-bot-gullible": 1})
        seat = next(p for p in setup["players"] if p["backend"] == "lineup-bot-gullible")
        assert seat["model"] == "bot-gullible"
        assert setup["backends"]["lineup-bot-gullible"]["type"] == "bot"
        assert setup["backends"]["lineup-bot-gullible"]["preset"] == "gullible"
        assert setup["config"]["seats"][0]["backend"] == "lineup-bot-gullible"
        derived = yaml.safe_load((runs / ".launch" / f"{gid}.yaml").read_text(encoding="utf-8"))
        assert derived["seats"][0]["backend"] == "lineup-bot-gullible"
    finally:
        _stop_all()


@pytest.mark.slow
def test_a_batch_uses_the_line_up(runs):
    at = new_app(mode="launch").run()
    at.toggle(key="lineup").set_value(True).run()
    at.selectbox(key="lu_seat:classic:6").set_value("bot:aggressive").run()
    at.number_input(key="games").set_value(2)
    at.toggle(key="probes").set_value(False)
    at.button(key="lf_go").click().run()
    assert_clean(at)
    try:
        first = at.session_state["ms_game"]
        prefix = first[: -len("-0000")]
        for i in range(2):
            gdir = runs / f"{prefix}-{i:04d}"
            assert _finished(gdir)
            setup = _records(gdir)[0]
            assert Counter(p["backend"] for p in setup["players"])["lineup-bot-aggressive"] == 1
            assert setup["config"]["seats"][6]["backend"] == "lineup-bot-aggressive"
    finally:
        _stop_all()


@pytest.mark.slow
def test_line_up_errors_block_the_launch(runs, monkeypatch):
    monkeypatch.delenv(KEY_VAR, raising=False)
    at = new_app(mode="launch").run()
    at.toggle(key="lineup").set_value(True).run()
    at.button(key="lu_add").click().run()
    assert_clean(at)
    at.text_input(key="lu_key_1").set_value(KEY_VAR)
    at.selectbox(key="lu_seat:classic:2").set_value("model:1").run()
    assert any(m.startswith("seat 3 (model 'model1'): API key:") and KEY_VAR in m for m in errors(at)), errors(at)
    assert any(KEY_VAR in plain(w.value) for w in at.warning)
    assert at.button(key="lf_go").disabled
    at.text_input(key="lu_model_1").set_value("").run()
    assert any(m.startswith("seat 3 (model 'model1'): model:") for m in errors(at)), errors(at)
    # a pasted key is refused without being shown back
    at.text_input(key="lu_model_1").set_value("gpt-4o-mini")
    at.text_input(key="lu_key_1").set_value(SECRET).run()
    assert any("looks like an API key itself" in m for m in errors(at)), errors(at)
    assert SECRET not in texts(at) + "\n".join(errors(at)) + "\n".join(c.value for c in at.code)
    assert at.button(key="lf_go").disabled
    # the human seat overrides the seat: nothing to validate there any more
    at.text_input(key="lu_key_1").set_value(KEY_VAR)
    at.selectbox(key="seat").set_value("seat 3").run()
    assert not errors(at), errors(at)
    assert "you play this seat (human seat)" in texts(at)
    assert not at.button(key="lf_go").disabled
    _stop_all()


@pytest.fixture()
def devserver():
    """The bundled loopback OpenAI-compatible server on 127.0.0.1, requiring the fake key."""
    from .servers import threaded_devserver

    with threaded_devserver(require_key=SECRET) as srv:
        yield srv


@pytest.mark.slow
def test_a_wrong_model_shows_the_preflight_error_instead_of_a_dead_job(runs, devserver, monkeypatch):
    monkeypatch.setenv(KEY_VAR, SECRET)
    monkeypatch.setenv("MAFIASCOPE_KEYS", KEY_VAR)  # the operator allows this key for the dev server (docs/security.md)
    monkeypatch.setenv(f"MAFIASCOPE_KEY_{KEY_VAR}_BASE_URLS", devserver.base_url)
    at = new_app(mode="launch").run()
    at.toggle(key="lineup").set_value(True).run()
    at.button(key="lu_add").click().run()
    at.selectbox(key="lu_prov_1").set_value("vLLM (local)").run()
    at.text_input(key="lu_name_1").set_value("dev")
    at.text_input(key="lu_model_1").set_value("no-such-model")
    at.text_input(key="lu_url_1").set_value(devserver.base_url)
    at.text_input(key="lu_key_1").set_value(KEY_VAR).run()
    at.selectbox(key="lu_seat:classic:1").set_value("model:1").run()
    at.button(key="lf_go").click().run()
    assert_clean(at)
    try:
        shown = " ".join(errors(at))
        deadline = time.time() + 90  # the launched process may take a while to exit on a loaded machine
        while "exited with code 2" not in shown and time.time() < deadline:
            time.sleep(1)
            at.run()
            shown = " ".join(errors(at))
        assert "exited with code 2" in shown and "preflight failed" in shown and "no-such-model" in shown, shown
        assert "HTTP 404" in shown and SECRET not in shown
        assert not any((runs / d).is_dir() and (runs / d / "game.jsonl").exists() for d in (p.name for p in runs.iterdir()))
    finally:
        _stop_all()


@pytest.mark.slow
def test_openai_compatible_seats_against_the_dev_server(runs, devserver, monkeypatch):
    monkeypatch.setenv(KEY_VAR, SECRET)
    monkeypatch.setenv("MAFIASCOPE_KEYS", KEY_VAR)  # the operator allows this key for the dev server (docs/security.md)
    monkeypatch.setenv(f"MAFIASCOPE_KEY_{KEY_VAR}_BASE_URLS", devserver.base_url)
    at = new_app(mode="launch").run()
    at.toggle(key="lineup").set_value(True).run()
    at.button(key="lu_add").click().run()
    at.selectbox(key="lu_prov_1").set_value("vLLM (local)").run()  # fills base_url and an empty key variable
    assert at.text_input(key="lu_key_1").value == ""
    at.text_input(key="lu_name_1").set_value("dev")
    at.text_input(key="lu_model_1").set_value("bot-analyst")
    at.text_input(key="lu_url_1").set_value(devserver.base_url)
    at.text_input(key="lu_key_1").set_value(KEY_VAR).run()
    at.selectbox(key="lu_seat:classic:1").set_value("model:1")
    at.selectbox(key="lu_seat:classic:4").set_value("model:1").run()
    assert_clean(at)
    assert not errors(at), errors(at)
    assert f"openai bot-analyst @ 127.0.0.1:{devserver.port} · key ${KEY_VAR}" in texts(at)
    assert f"key: `${KEY_VAR}` is set" in texts(at)
    assert not at.button(key="lf_go").disabled
    at.button(key="lf_go").click().run()
    assert_clean(at)
    try:
        gid = at.session_state["ms_game"]
        gdir = runs / gid
        assert _finished(gdir), (runs / ".launch" / f"{gid}.log").read_text(errors="replace")[-3000:]
        recs = _records(gdir)
        setup, over = recs[0], recs[-1]
        assert over["kind"] == "game_over"
        seats = [p for p in setup["players"] if p["backend"] == "lineup-dev"]
        assert len(seats) == 2 and all(p["model"] == "bot-analyst" for p in seats)
        prov = setup["backends"]["lineup-dev"]
        assert prov["type"] == "openai" and prov["model"] == "bot-analyst" and prov["api_key_set"] is True
        assert prov["base_url_host"] == f"127.0.0.1:{devserver.port}"
        assert setup["config"]["backends"]["lineup-dev"]["api_key"] == "${" + KEY_VAR + "}"
        stats = over["backends"]["lineup-dev"]["stats"]
        assert stats["ok"] > 0 and stats["failed"] == 0, stats  # the key reached the server (it answers 401 otherwise)
        # those seats' moves came over HTTP, and the probes were asked there too
        names = {p["name"] for p in seats}
        assert any(r.get("player") in names and r.get("response") for r in recs)
        assert devserver.stats.ok > 0 and devserver.stats.unauthorized == 0
        # the fake key is in no file under the logs dir (game logs, snapshots, the derived config, the process output)
        files = [p for p in runs.rglob("*") if p.is_file()]
        assert any(p.name == f"{gid}.yaml" for p in files) and any(p.name == "state.jsonl" for p in files)
        leaks = [str(p) for p in files if SECRET.encode() in p.read_bytes()]
        assert not leaks, leaks
        at.run()
        assert_clean(at)
        assert SECRET not in texts(at)
    finally:
        _stop_all()
