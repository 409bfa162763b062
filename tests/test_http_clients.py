"""Issue 31 item 2: every HTTP client that can carry a credential is built by one factory
(mafiascope/backends/clients.py), which resolves the credential for the URL the client talks to, so
the key policy always sees the destination: the preflight, ``resume``, ``arena run --roster`` and
``validate repeat`` (which read base URLs from logs and rosters others may have crafted) included."""

from __future__ import annotations

import ast
import asyncio
import http.server
import json
import subprocess
import threading
from pathlib import Path

import pytest
import yaml

from mafiascope.backends.clients import OpenAIEndpoint
from mafiascope.backends.keys import KeyPolicy
from mafiascope.backends.preflight import PreflightError, run_preflight
from mafiascope.backends.specs import OpenAISpec
from mafiascope.cli import main

from .servers import Listener
from .test_replay_forks import bot_cfg, play_bot
from .test_replay_resume import crash_copy

REPO = Path(__file__).resolve().parent.parent
FACTORY = "mafiascope/backends/clients.py"
# Modules that open HTTP connections without any credential: health checks of a Streamlit server.
NO_CREDENTIAL = {
    "bench/app_waits.py": "polls the local app's /_stcore/health for the app benches (app_latency.py, app_step.py)",
    "scripts/check_deploy.py": "checks a deployed app's public pages; it has no key to send",
}
CLIENTS = {"AsyncOpenAI", "OpenAI", "AzureOpenAI", "AsyncAzureOpenAI", "DefaultAioHttpClient", "DefaultAsyncHttpxClient",
           "ClientSession", "AsyncClient", "Client", "urlopen", "build_opener", "HTTPConnection", "HTTPSConnection",
           "resolve_key", "resolve_credential", "TCPConnector"}  # fmt: skip
HTTP_MODULES = {"requests", "httpx", "urllib3", "urllib.request", "http.client", "pycurl"}
SECRET = "sk-allowed-FAKE-0123456789abcdef"


def _sources() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    untracked = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "*.py"], cwd=REPO,
                               capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    return [REPO / p for p in sorted(set(out + untracked)) if not p.startswith("tests/") and (REPO / p).is_file()]


def _constructions(path: Path) -> list[str]:
    """``file:line: what`` for every client construction, credential lookup or HTTP library import in ``path``."""
    rel = path.relative_to(REPO).as_posix()
    tree = ast.parse(path.read_text(encoding="utf-8"), rel)
    found = []
    for node in ast.walk(tree):
        what = None
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if name in CLIENTS and not (name == "Client" and not _from_http_module(f)):
                what = f"calls {name}"
            elif name == "getattr" and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and node.args[1].value in CLIENTS:
                what = f"getattr {node.args[1].value}"
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module in HTTP_MODULES or any(a.name in CLIENTS - {"Client"} for a in node.names):
                what = f"imports from {node.module}"
        elif isinstance(node, ast.Import):
            if any(a.name in HTTP_MODULES for a in node.names):
                what = "imports " + ", ".join(a.name for a in node.names)
        if what:
            found.append(f"{rel}:{node.lineno}: {what}")
    return found


def _from_http_module(f: ast.AST) -> bool:
    return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in {"httpx", "requests", "aiohttp"}


def test_every_client_that_can_carry_a_credential_is_built_by_the_factory():
    """Seen: the preflight built its own openai client and aiohttp session and looked the key up without its base URL."""
    sources = _sources()
    assert any(p.as_posix().endswith(FACTORY) for p in sources)
    elsewhere = [hit for p in sources if p.relative_to(REPO).as_posix() not in {FACTORY, *NO_CREDENTIAL}
                 for hit in _constructions(p)]  # fmt: skip
    assert not elsewhere, "\n".join(elsewhere)
    assert _constructions(REPO / FACTORY), "the scan no longer recognises the factory's own constructions"


def test_a_key_with_no_destination_is_never_allowed():
    policy = KeyPolicy(keys={"K": ("https://api.example.com",)})
    assert policy.problem("K", "https://api.example.com/v1") is None
    assert policy.problem("K", None) and policy.problem("K", "")


@pytest.fixture()
def listener():
    lst = Listener()
    yield lst
    lst.close()


@pytest.fixture()
def policy(monkeypatch):
    monkeypatch.setenv("ALLOWED_KEY", SECRET)
    monkeypatch.setenv("MAFIASCOPE_KEYS", "ALLOWED_KEY")
    monkeypatch.setenv("MAFIASCOPE_KEY_ALLOWED_KEY_BASE_URLS", "https://api.allowed.example/v1")


def _evil(listener: Listener) -> dict:
    return {"type": "openai", "model": "m", "base_url": listener.base_url, "api_key": "${ALLOWED_KEY}"}


def test_the_preflight_checks_where_an_allowed_key_goes(policy, listener):
    with pytest.raises(PreflightError) as ei:
        run_preflight({"evil": _evil(listener)})
    assert "$ALLOWED_KEY may only be sent to https://api.allowed.example:443" in str(ei.value)
    assert listener.connections == 0 and SECRET not in str(ei.value)


def test_arena_run_with_a_crafted_roster_sends_nothing(policy, listener, tmp_path, capsys):
    """Seen: `arena run --roster` sent the allowed key to a roster's base URL (the preflight skipped the origin check)."""
    roster = tmp_path / "roster.yaml"
    roster.write_text(yaml.safe_dump({"name": "r", "models": {"evil": _evil(listener), "bot": "balanced"}}))
    assert main(["arena", "run", "--roster", str(roster), "--games", "1", "--logs", str(tmp_path / "run")]) == 2
    assert "may only be sent to" in capsys.readouterr().err
    assert listener.connections == 0 and SECRET.encode() not in listener.received


def _crafted(src: Path, dst: Path, listener: Listener) -> None:
    """``src`` cut as a crash leaves it, its recorded config now seating a backend at the listener."""
    crash_copy(src, dst, keep_snapshots=6)
    lines = (dst / "game.jsonl").read_text().splitlines(keepends=True)
    setup = json.loads(lines[0])
    setup["config"]["backends"] = {"b": _evil(listener), "c": _evil(listener)}
    (dst / "game.jsonl").write_text(json.dumps(setup) + "\n" + "".join(lines[1:]))


@pytest.mark.parametrize("preflight", [[], ["--no-preflight"]])
def test_resume_of_a_crafted_log_sends_nothing(policy, listener, tmp_path, capsys, preflight):
    """Seen: `resume` sent the allowed key to a base URL read from a crafted log; with the factory even a run
    without the preflight cannot build a client for it."""
    src = play_bot(tmp_path / "orig", gid="g")
    _crafted(src, tmp_path / "logs" / "g", listener)
    main(["resume", str(tmp_path / "logs"), "--min-idle", "0", "--json", *preflight])
    out = capsys.readouterr()
    assert "may only be sent to" in out.err + out.out
    assert listener.connections == 0 and SECRET.encode() not in listener.received


def test_validate_repeat_on_crafted_logs_sends_nothing(policy, listener, tmp_path, capsys):
    """Seen: `validate repeat` (started by the Replay page) re-asked probes through a crafted log's backend."""
    cfg = bot_cfg(probes={"enabled": True, "battery": "suspicion"})
    src = play_bot(tmp_path / "orig", gid="g", probes=cfg.probes.model_dump())
    logs = tmp_path / "logs"
    (logs / "g").mkdir(parents=True)
    for f in src.iterdir():
        (logs / "g" / f.name).write_bytes(f.read_bytes())
    lines = (logs / "g" / "game.jsonl").read_text().splitlines(keepends=True)
    setup = json.loads(lines[0])
    setup["config"]["backends"] = {"b": _evil(listener), "c": _evil(listener)}
    (logs / "g" / "game.jsonl").write_text(json.dumps(setup) + "\n" + "".join(lines[1:]))
    code = main(["validate", "repeat", str(logs), "--states", "1", "--repeats", "2", "--results", str(tmp_path / "res")])
    out = capsys.readouterr()
    assert code != 0 and "may only be sent to" in out.err + out.out
    assert listener.connections == 0 and SECRET.encode() not in listener.received


def test_header_values_are_credentials_resolved_for_the_base_url_only(policy):
    from mafiascope.backends.base import BackendError
    from mafiascope.backends.clients import OpenAIEndpoint
    from mafiascope.backends.specs import parse_backend_spec

    ok = parse_backend_spec("h", {"type": "openai", "model": "m", "base_url": "https://api.allowed.example/v1",
                                  "headers": {"X-Api-Key": "${ALLOWED_KEY}", "HTTP-Referer": "https://mafiascope.example"}})  # fmt: skip
    endpoint = OpenAIEndpoint("h", ok)
    assert endpoint.headers == {"X-Api-Key": SECRET, "HTTP-Referer": "https://mafiascope.example"}
    assert endpoint.client().default_headers["X-Api-Key"] == SECRET
    bad = ok.model_copy(update={"base_url": "http://127.0.0.1:9/v1"})
    with pytest.raises(BackendError, match=r"headers.X-Api-Key: \$ALLOWED_KEY may only be sent to") as ei:
        OpenAIEndpoint("h", bad)
    assert SECRET not in str(ei.value)
    with pytest.raises(ValueError, match="line break"):
        parse_backend_spec("h", {"type": "openai", "model": "m", "headers": {"X": "a\r\nHost: evil"}})


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Answers 500 and records the headers of every request that reaches it (the other origin)."""

    got: list[dict[str, str]] = []

    def do_POST(self) -> None:
        type(self).got.append({k.lower(): v for k, v in self.headers.items()})
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *a) -> None:
        pass


def _redirector(target: str) -> type[http.server.BaseHTTPRequestHandler]:
    class Redirect(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(307)
            self.send_header("Location", target + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST

        def log_message(self, *a) -> None:
            pass

    return Redirect


@pytest.fixture
def redirect_pair():
    """(base URL answering 307 to another loopback origin, headers received there)."""
    _Recorder.got = []
    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    front = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _redirector(f"http://127.0.0.1:{other.server_port}"))
    for srv in (other, front):
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{front.server_port}/v1", _Recorder.got
    for srv in (front, other):
        srv.shutdown()
        srv.server_close()


@pytest.mark.parametrize("fast_transport", [True, False])
def test_a_redirect_to_another_origin_carries_no_credential(redirect_pair, fast_transport):
    """A server the key is allowed for answers 307 to another origin: the HTTP libraries drop only
    ``Authorization`` there, so a credential header (``X-Api-Key``) used to follow the redirect."""
    base, got = redirect_pair
    spec = OpenAISpec(model="m", base_url=base, api_key=SECRET, headers={"X-Api-Key": SECRET}, timeout=3)
    client = OpenAIEndpoint("b", spec).client(fast_transport=fast_transport)

    async def call() -> None:
        try:
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        except Exception:
            pass
        finally:
            await client.close()

    asyncio.run(call())
    assert not [h for h in got if SECRET in json.dumps(h)], got
    assert not got  # not followed at all: a 3xx is an error


def test_the_preflight_does_not_follow_a_redirect(redirect_pair, tmp_path, capsys, monkeypatch):
    base, got = redirect_pair
    monkeypatch.setenv("RT_KEY", SECRET)
    cfg = {"name": "r", "rules": {"name": "classic", "roles": {"Mafia": 1, "Doctor": 1, "Villager": 3}},
           "seats": [{"backend": "m"}] * 5,
           "backends": {"m": {"type": "openai", "base_url": base, "model": "x", "api_key": "${RT_KEY}",
                              "headers": {"X-Api-Key": "${RT_KEY}"}, "timeout": 2, "max_retries": 0}}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    assert main(["run", "-c", str(tmp_path / "c.yaml"), "--logs", str(tmp_path / "logs")]) == 2
    assert "307" in capsys.readouterr().err
    assert not got


@pytest.mark.parametrize("extra", [[], ["--no-preflight"], ["--batch"], ["--batch", "--no-preflight"]])
def test_probes_ask_on_crafted_logs_sends_nothing(policy, listener, tmp_path, capsys, extra):
    """``probes ask`` (issue 36) asks each seat's own backend as the log records it, and ``--batch`` uploads
    files and polls batches there: a crafted log's base URL gets no allowed key, by any of those paths."""
    cfg = bot_cfg(probes={"enabled": True, "battery": "suspicion"})
    src = play_bot(tmp_path / "orig", gid="g", probes=cfg.probes.model_dump())
    logs = tmp_path / "logs"
    (logs / "g").mkdir(parents=True)
    for f in src.iterdir():
        if f.is_file():
            (logs / "g" / f.name).write_bytes(f.read_bytes())
    lines = (logs / "g" / "game.jsonl").read_text().splitlines(keepends=True)
    setup = json.loads(lines[0])
    setup["config"]["backends"] = {"b": _evil(listener), "c": _evil(listener)}
    (logs / "g" / "game.jsonl").write_text(json.dumps(setup) + "\n" + "".join(lines[1:]))
    code = main(["probes", "ask", str(logs), "--battery", "suspicion", "--layer", "late", "--poll-s", "0.01", "-q", *extra])
    out = capsys.readouterr()
    assert code != 0 and "may only be sent to" in out.err + out.out
    assert SECRET not in out.err + out.out
    assert listener.connections == 0 and SECRET.encode() not in listener.received


def test_probes_ask_with_an_observer_config_checks_where_its_key_goes(policy, listener, tmp_path, capsys):
    """The observer named by ``--config CFG --backend NAME`` is built by the same factory: the key policy
    refuses an allowed key for another origin, with --batch too."""
    cfg = bot_cfg(probes={"enabled": True, "battery": "suspicion"})
    play_bot(tmp_path / "logs", gid="g", probes=cfg.probes.model_dump())
    obs = tmp_path / "observer.yaml"
    raw = {"rules": {"roles": {"Mafia": 1, "Villager": 2}}, "backends": {"evil": _evil(listener)},
           "seats": [{"backend": "evil"}] * 3}  # fmt: skip
    obs.write_text(yaml.safe_dump(raw))
    for extra in ([], ["--batch", "--no-preflight"]):
        code = main(["probes", "ask", str(tmp_path / "logs"), "--battery", "suspicion", "--layer", "obs", "--config", str(obs),
                     "--backend", "evil", "--poll-s", "0.01", "-q", *extra])  # fmt: skip
        out = capsys.readouterr()
        assert code != 0 and "may only be sent to" in out.err + out.out, extra
        assert SECRET not in out.err + out.out
    assert listener.connections == 0 and SECRET.encode() not in listener.received
