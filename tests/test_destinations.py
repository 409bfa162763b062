"""Issue 31: in public mode a base URL that a visitor typed, or a log or roster carried, cannot make the server
request a host only the server reaches (cloud metadata, private networks, loopback services), and no preflight
error quotes what such a host answers. The check sits in the one client factory (backends/clients.py); local
runs keep reaching a loopback dev server."""

from __future__ import annotations

import http.server
import json
import threading
import time
from pathlib import Path

import pytest
import yaml

from mafiascope.backends.destinations import destination_problem
from mafiascope.backends.preflight import PreflightError, run_preflight
from mafiascope.backends.specs import OpenAISpec, Source, mark_source
from mafiascope.cli import main

from .servers import threaded_devserver
from .test_replay_forks import play_bot
from .test_replay_resume import crash_copy

ANSWER = "metadata-CREDENTIAL-Rq73vX-answer"  # what a server-only host says back
PUBLIC = {"MAFIASCOPE_PUBLIC": "1"}
NOT_OPERATOR = [Source.APP, Source.LOG, Source.ROSTER, Source.STUDY, Source.OTHER]
SERVER_ONLY = ["http://169.254.169.254/latest/meta-data/iam/", "http://127.0.0.1:8000/v1", "http://localhost:11434/v1",
               "http://10.1.2.3/v1", "http://192.168.0.5:8080/v1", "http://172.16.0.1/v1", "http://100.64.0.1/v1",
               "http://0.0.0.0:8000/v1", "http://[::1]:8000/v1", "http://[::ffff:169.254.169.254]/v1",
               "http://[fe80::1]/v1", "http://224.0.0.1/v1", "http://240.0.0.1/v1", "http://2130706433/v1",
               "http://0x7f.1/v1"]  # fmt: skip


class _Answering(http.server.BaseHTTPRequestHandler):
    """Answers every request with 403 and a body holding :data:`ANSWER`; records the paths asked."""

    asked: list[str] = []

    def do_GET(self) -> None:
        type(self).asked.append(self.path)
        body = json.dumps({"error": {"message": f"here is {ANSWER}"}}).encode()
        self.send_response(403)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *a) -> None:
        pass


@pytest.fixture()
def answering():
    """(base URL of a loopback server that answers with :data:`ANSWER`, the paths it was asked)."""
    handler = type("Handler", (_Answering,), {"asked": []})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_port}/v1", handler.asked
    srv.shutdown()
    srv.server_close()


@pytest.mark.parametrize("url", SERVER_ONLY)
@pytest.mark.parametrize("source", NOT_OPERATOR)
def test_public_mode_refuses_server_only_hosts_for_configs_the_operator_did_not_write(url, source):
    why = destination_problem(url, source, PUBLIC)
    assert why and "MAFIASCOPE_ALLOWED_HOSTS" in why, (url, why)
    assert destination_problem(url, Source.OPERATOR, PUBLIC) is None  # the operator's own config file
    assert destination_problem(url, source, {"MAFIASCOPE_PUBLIC": "0"}) is None  # a local app, the CLI


def test_public_hosts_pass_and_the_operator_allows_others_by_host_or_port():
    assert destination_problem("https://8.8.8.8/v1", Source.APP, PUBLIC) is None
    assert destination_problem("ftp://8.8.8.8/", Source.APP, PUBLIC)
    allow = {**PUBLIC, "MAFIASCOPE_ALLOWED_HOSTS": "10.1.2.3:8000, localhost [::1]:9"}
    assert destination_problem("http://10.1.2.3:8000/v1", Source.LOG, allow) is None
    assert destination_problem("http://10.1.2.3:8001/v1", Source.LOG, allow)  # another port of an allowed host
    assert destination_problem("http://LOCALHOST:5/v1", Source.LOG, allow) is None  # a host without port: any port
    assert destination_problem("http://[::1]:9/v1", Source.LOG, allow) is None
    assert destination_problem("http://127.0.0.1:9/v1", Source.LOG, allow)  # the name was allowed, not the address


def _log_sourced(base_url: str) -> OpenAISpec:
    spec = OpenAISpec(model="m", base_url=base_url, timeout=3)
    mark_source([spec], Source.LOG)
    return spec


def test_the_preflight_of_a_log_s_config_asks_no_server_only_host(answering, monkeypatch):
    url, asked = answering
    monkeypatch.setenv("MAFIASCOPE_PUBLIC", "1")
    for base in (url, "http://169.254.169.254/latest/meta-data/v1"):
        with pytest.raises(PreflightError) as ei:
            run_preflight({"b": _log_sourced(base)}, timeout=3)
        msg = str(ei.value)
        assert "backend 'b': base_url names a " in msg and "MAFIASCOPE_ALLOWED_HOSTS" in msg, msg
        assert "\n" not in msg and ANSWER not in msg
    assert asked == []


def test_an_allowed_host_s_answer_is_not_quoted_to_whoever_named_it(answering, monkeypatch):
    url, asked = answering
    monkeypatch.setenv("MAFIASCOPE_PUBLIC", "1")
    monkeypatch.setenv("MAFIASCOPE_ALLOWED_HOSTS", url.split("/")[2])
    with pytest.raises(PreflightError) as ei:
        run_preflight({"b": _log_sourced(url)}, timeout=3)
    assert asked and "HTTP 403 permission denied" in str(ei.value) and ANSWER not in str(ei.value)
    operator = OpenAISpec(model="m", base_url=url, timeout=3)
    mark_source([operator], Source.OPERATOR)
    with pytest.raises(PreflightError) as ei:  # the operator's own config still shows what the server said
        run_preflight({"b": operator}, timeout=3)
    assert ANSWER in str(ei.value)


def test_a_local_run_still_reaches_a_loopback_dev_server(monkeypatch):
    monkeypatch.setenv("MAFIASCOPE_PUBLIC", "0")
    with threaded_devserver() as dev:
        results = run_preflight({"b": _log_sourced(f"http://127.0.0.1:{dev.port}/v1").model_copy(update={"model": "bot-analyst"})})
    assert all(r.ok for r in results), [r.message for r in results]


@pytest.mark.parametrize("preflight", [[], ["--no-preflight"]])
def test_resume_of_a_log_naming_a_server_only_host_sends_nothing(answering, tmp_path, capsys, monkeypatch, preflight):
    url, asked = answering
    monkeypatch.setenv("MAFIASCOPE_PUBLIC", "1")
    src = play_bot(tmp_path / "orig", gid="g")
    dst = tmp_path / "logs" / "g"
    crash_copy(src, dst, keep_snapshots=6)
    lines = (dst / "game.jsonl").read_text().splitlines(keepends=True)
    setup = json.loads(lines[0])
    setup["config"]["backends"] = {n: {"type": "openai", "model": "m", "base_url": url, "timeout": 3}
                                   for n in setup["config"]["backends"]}
    (dst / "game.jsonl").write_text(json.dumps(setup) + "\n" + "".join(lines[1:]))
    main(["resume", str(tmp_path / "logs"), "--min-idle", "0", "--json", *preflight])
    out = capsys.readouterr()
    assert "base_url names a loopback address" in out.err + out.out, (out.err + out.out)[-2000:]
    assert asked == [] and ANSWER not in out.err + out.out


def test_a_config_the_app_wrote_reaches_no_server_only_host_from_the_cli(answering, tmp_path, capsys, monkeypatch):
    url, asked = answering
    monkeypatch.setenv("MAFIASCOPE_PUBLIC", "1")
    monkeypatch.setenv("MAFIASCOPE_CONFIGS_FROM_APP", "1")
    cfg = {"name": "r", "rules": {"name": "classic", "roles": {"Mafia": 1, "Doctor": 1, "Villager": 3}},
           "seats": [{"backend": "m"}] * 5, "backends": {"m": {"type": "openai", "base_url": url, "model": "x", "timeout": 3}}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    assert main(["run", "-c", str(tmp_path / "c.yaml"), "--logs", str(tmp_path / "logs")]) == 2
    err = capsys.readouterr().err
    assert "backend 'm': base_url names a loopback address" in err and ANSWER not in err
    assert asked == []
    monkeypatch.delenv("MAFIASCOPE_CONFIGS_FROM_APP")  # the operator's own file: today's behaviour
    assert main(["run", "-c", str(tmp_path / "c.yaml"), "--logs", str(tmp_path / "logs2")]) == 2
    assert asked and ANSWER in capsys.readouterr().err


# ----------------------------------------------------------------------------- the app in public mode


def _protos(node) -> bytes:
    out = node.proto.SerializeToString() if getattr(node, "proto", None) is not None else b""
    return out + b"".join(_protos(c) for c in getattr(node, "children", {}).values())


@pytest.mark.slow  # launches a game process
@pytest.mark.parametrize("where", ["listener", "metadata"])
def test_a_visitor_s_line_up_reaches_no_server_only_host(answering, tmp_path, monkeypatch, where):
    pytest.importorskip("streamlit")
    from .app_support import new_app
    from .test_app_keys import _model
    from .test_app_live import _stop_all

    url, asked = answering
    if where == "metadata":
        url = "http://169.254.169.254/latest/meta-data/iam/v1"
    runs = tmp_path / "runs"
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(tmp_path / "none"))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(runs))
    monkeypatch.setenv("MAFIASCOPE_PUBLIC", "1")
    monkeypatch.delenv("MAFIASCOPE_ALLOWED_HOSTS", raising=False)
    at = new_app(mode="launch").run()
    _model(at, url)
    at.toggle(key="probes").set_value(False)
    at.button(key="lf_go").click().run()
    assert not at.exception, [e.message for e in at.exception]
    try:
        from app import launcher

        items = [i for i in launcher.registry().every() if str(i.logs) == str(runs)]
        assert len(items) == 1, items
        assert items[0].proc.wait(90) != 0
        log = Path(items[0].log_file).read_text(encoding="utf-8", errors="replace")
        assert "base_url names a " in log and "MAFIASCOPE_ALLOWED_HOSTS" in log, log[-2000:]
        time.sleep(0.5)
        at.run()
        sent = _protos(at._tree)
    finally:
        _stop_all()
    assert asked == []
    assert ANSWER.encode() not in sent
    leaks = [str(p) for p in runs.rglob("*") if p.is_file() and ANSWER.encode() in p.read_bytes()]
    assert not leaks, leaks
