"""Issue 12 item 2: on a public deploy no server key leaves the server unless the operator allows it
for that base URL; a visitor's pasted key is used for their session only and written nowhere."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

pytest.importorskip("streamlit")

from .app_support import assert_clean, errors, new_app, texts  # noqa: E402
from .servers import Listener  # noqa: E402
from .test_app_lineup import CLASSIC, SECRET, _finished, _records, devserver  # noqa: E402,F401  (fixture)
from .test_app_live import _stop_all, runs  # noqa: E402,F401  (fixture)

DEPLOY = "sk-deploy-FAKE-fedcba9876543210"


@pytest.fixture()
def listener():
    lst = Listener()
    yield lst
    lst.close()


def _model(at, url: str, *, var: str = "", paste: str = "") -> None:
    at.toggle(key="lineup").set_value(True).run()
    at.button(key="lu_add").click().run()
    at.selectbox(key="lu_prov_1").set_value("vLLM (local)").run()
    at.text_input(key="lu_name_1").set_value("dev")
    at.text_input(key="lu_model_1").set_value("bot-analyst")
    at.text_input(key="lu_url_1").set_value(url)
    at.text_input(key="lu_key_1").set_value(var)
    at.text_input(key="lu_paste_1").set_value(paste)
    at.selectbox(key="lu_seat:classic:1").set_value("model:1").run()


def _launched(runs: Path) -> str:
    """The id of the one game launched into ``runs`` (read from its launch metadata, not the page's picker)."""
    metas = sorted((runs / ".launch").glob("*.yaml"))
    assert len(metas) == 1, metas
    return metas[0].stem


def _no_trace(runs: Path, *secrets: str) -> None:
    files = [p for p in runs.rglob("*") if p.is_file()]
    assert files
    leaks = [str(p) for p in files for s in secrets if s.encode() in p.read_bytes()]
    assert not leaks, leaks


@pytest.mark.slow  # launches a game process
def test_a_server_variable_is_not_a_key(runs, listener, monkeypatch):
    """Seen: DEPLOY_SECRET, typed as the key variable, arrived at a loopback listener as a Bearer token."""
    monkeypatch.setenv("DEPLOY_SECRET", DEPLOY)
    monkeypatch.delenv("MAFIASCOPE_KEYS", raising=False)
    at = new_app(mode="launch").run()
    _model(at, listener.base_url, var="DEPLOY_SECRET")
    assert_clean(at)
    assert any(m.startswith("seat 2 (model 'dev'): API key: $DEPLOY_SECRET is not a key the operator allows") for m in errors(at)), errors(at)
    assert at.button(key="lf_go").disabled
    # and if a config names it anyway (a hand-made line-up, a forked log's config), the game process refuses it
    from app import launcher, lineup

    data = yaml.safe_load(CLASSIC.read_text(encoding="utf-8"))
    evil = lineup.ModelDef("e", "evil", model="m", base_url=listener.base_url, key_var="DEPLOY_SECRET")
    derived = lineup.derive(data, {0: evil.choice}, [evil])
    try:
        item = launcher.launch(CLASSIC, seed=1, probes=False, logs=runs, lineup=derived)
        assert item.proc.wait(60) != 0
        assert "DEPLOY_SECRET is not a key the operator allows" in Path(item.log_file).read_text(encoding="utf-8")
    finally:
        _stop_all()
    assert listener.connections == 0 and DEPLOY.encode() not in listener.received
    _no_trace(runs, DEPLOY)


@pytest.mark.slow  # launches a game process
def test_operator_key_from_secrets_only_for_its_base_url(runs, devserver, monkeypatch):
    monkeypatch.delenv("MAFIASCOPE_KEYS", raising=False)
    monkeypatch.delenv("OPS_KEY", raising=False)
    at = new_app(mode="launch")
    at.secrets["OPS_KEY"] = SECRET
    at.secrets["mafiascope"] = {"keys": {"OPS_KEY": [devserver.base_url]}}
    at.run()
    _model(at, f"http://127.0.0.1:{devserver.port + 1}/v1", var="OPS_KEY")
    assert any("$OPS_KEY may only be sent to http://127.0.0.1:" in m for m in errors(at)), errors(at)
    at.text_input(key="lu_url_1").set_value(devserver.base_url).run()
    assert not errors(at), errors(at)
    assert "key: `$OPS_KEY` is set" in texts(at)
    at.toggle(key="probes").set_value(False)
    at.button(key="lf_go").click().run()
    assert_clean(at)
    assert not errors(at), errors(at)
    try:
        gid = _launched(runs)
        assert _finished(runs / gid), (runs / ".launch" / f"{gid}.log").read_text(errors="replace")[-2000:]
        over = _records(runs / gid)[-1]
        assert over["backends"]["lineup-dev"]["stats"]["ok"] > 0 and devserver.stats.unauthorized == 0
    finally:
        _stop_all()
    _no_trace(runs, SECRET)


@pytest.mark.slow  # launches a game process
def test_a_pasted_key_is_used_for_the_session_only_and_written_nowhere(runs, devserver, monkeypatch):
    monkeypatch.delenv("MAFIASCOPE_KEYS", raising=False)
    at = new_app(mode="launch").run()
    _model(at, devserver.base_url, paste=SECRET)
    assert_clean(at)
    assert not errors(at), errors(at)
    assert "your pasted key" in texts(at) and SECRET not in texts(at)
    at.button(key="lf_go").click().run()
    assert_clean(at)
    try:
        gid = _launched(runs)
        assert _finished(runs / gid), (runs / ".launch" / f"{gid}.log").read_text(errors="replace")[-2000:]
        recs = _records(runs / gid)
        assert recs[-1]["backends"]["lineup-dev"]["stats"]["ok"] > 0 and devserver.stats.unauthorized == 0
        assert recs[0]["config"]["backends"]["lineup-dev"]["api_key"] == "${MAFIASCOPE_SESSION_KEY_1}"
        from app import launcher

        assert all(SECRET not in " ".join(i.cmd) for i in launcher.registry().all())  # never in argv
    finally:
        _stop_all()
    _no_trace(runs, SECRET)  # game logs, snapshots, probes, the derived config, the process output (the jobs dir)
    at.run()
    assert SECRET not in texts(at) + "\n".join(errors(at)) + "\n".join(c.value for c in at.code)
    # another session (a new visitor) does not have it
    other = new_app(mode="launch").run()
    assert "_ms_session_keys" not in other.session_state or not other.session_state["_ms_session_keys"]


def _resolver_script() -> None:
    import streamlit as st

    from app import keys
    from mafiascope.backends.base import BackendError
    from mafiascope.backends.registry import build_backend

    keys.install()
    spec = {"type": "openai", "model": "m", "base_url": "https://api.example.com/v1", "api_key": "${OPS_KEY}"}
    st.text(f"ok {build_backend('ok', spec).describe()['api_key_set']}")
    for name, bad in (("host", {**spec, "base_url": "http://127.0.0.1:9/v1"}), ("name", {**spec, "api_key": "${DEPLOY_SECRET}"})):
        try:
            build_backend(name, bad)
            st.text(f"{name} accepted")
        except BackendError as exc:
            st.text(f"{name} refused: {exc}")


@pytest.mark.slow
def test_the_app_installs_a_resolver_reading_secrets_under_the_policy(monkeypatch):
    """Issue 13 item 2: the engine asks the resolver the app installed (st.secrets + the operator's list)."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("DEPLOY_SECRET", DEPLOY)
    monkeypatch.delenv("MAFIASCOPE_KEYS", raising=False)
    at = AppTest.from_function(_resolver_script, default_timeout=60)
    at.secrets["OPS_KEY"] = SECRET
    at.secrets["mafiascope"] = {"keys": {"OPS_KEY": ["https://api.example.com"]}}
    at.run()
    assert_clean(at)
    shown = [t.value for t in at.text]
    assert shown[0] == "ok True", shown
    assert shown[1].startswith("host refused: backend 'host': api_key: $OPS_KEY may only be sent to https://api.example.com:443")
    assert shown[2].startswith("name refused: backend 'name': api_key: $DEPLOY_SECRET is not a key the operator allows")
    assert not any(SECRET in s or DEPLOY in s for s in shown)
    # outside a Streamlit session (this thread of the app's process) the operator's policy still applies
    from mafiascope.backends.keys import KeyRefused, resolve_key
    from mafiascope.backends.specs import Source

    with pytest.raises(KeyRefused, match="DEPLOY_SECRET is not a key the operator allows"):
        resolve_key("DEPLOY_SECRET", "https://api.example.com/v1", Source.OPERATOR)  # whatever the config's source
