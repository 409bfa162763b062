"""Shared fixtures and helpers of the app tests (tests/test_app_*.py, tests/test_browser_app.py)."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENTRY = str(ROOT / "streamlit_app.py")
CORPUS = ROOT / "data" / "corpus"  # the original MafiaScope's real corpora, bundled with their LICENSE
DEMO = ROOT / "data" / "demo"
TIMEOUT = 180


def play(logs: Path, gid: str, seed: int, *extra: str) -> Path:
    """One offline game with the engine's CLI (what the app launches)."""
    subprocess.run([sys.executable, "-m", "mafiascope", "run", "-c", str(ROOT / "configs" / "classic.yaml"), "--seed",
                    str(seed), "--logs", str(logs), "--game-id", gid, "-q", *extra], check=True, cwd=ROOT, timeout=120)
    return logs / gid


def copy_demo(dest: Path, n: int) -> Path:
    """The first ``n`` bundled demo games copied under ``dest`` (a corpus a test may change)."""
    import shutil

    for d in sorted(DEMO.iterdir())[:n]:
        if (d / "game.jsonl").is_file():
            shutil.copytree(d, dest / d.name)
    return dest


def use_logs(monkeypatch, logs: Path | str, tmp_path: Path) -> Path:
    """``logs`` as the app's log root ("" for the bundled data/ corpora), runs and caches under ``tmp_path``."""
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(logs))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("MAFIASCOPE_CACHE_DIR", str(tmp_path / "cache"))
    return Path(logs)


def dashboard_logs(tmp_path: Path, monkeypatch) -> Path:
    """Four demo games copied under ``tmp_path`` as the app's log root, with its runs and caches beside them."""
    return use_logs(monkeypatch, copy_demo(tmp_path / "logs", 4), tmp_path)


def script_says(script, root: Path) -> list[str]:
    """Run a function as a Streamlit script with ``root`` as the session's log root; what it wrote."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(script, default_timeout=120)
    at.session_state["root"] = str(root)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return [m.value for m in at.markdown]


def demo_logs(tmp_factory) -> Path:
    """data/demo when it holds games, else two freshly played offline games."""
    from mafiascope.logs.io import list_game_dirs

    if DEMO.is_dir() and list_game_dirs(DEMO):
        return DEMO
    logs = tmp_factory.mktemp("demo")
    play(logs, "demo-seed1", 1)
    play(logs, "demo-seed2", 2)
    return logs


def new_app(**params: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(ENTRY, default_timeout=TIMEOUT)
    for k, v in params.items():
        at.query_params[k] = v
    return at


def each_tab(at, key: str = "tab"):
    """Run ``at`` (already run once) again with each tab of its URL-bound tab set open, yielding it after each run:
    a page whose tabs are bound to the URL draws only the open tab (the Dashboard), so a check of every tab's
    content runs once per tab."""
    for label in [t.label for t in at.tabs]:
        at.query_params[key] = label
        yield at.run()


_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")


def plain(md: str) -> str:
    """Markdown made by app/text.md_escape read back as the text it shows (escapes, word joiners, hard breaks)."""
    return _ESCAPED.sub(r"\1", md).replace("\u2060", "").replace("  \n", "\n")


def errors(at) -> list[str]:
    return [plain(e.value) for e in at.error]


def assert_clean(at) -> None:
    assert not at.exception, [e.message for e in at.exception]


def texts(at) -> str:
    return plain("\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]))


def timeline(at):
    """The timeline slider (its key carries the game and the step count)."""
    return next(s for s in at.slider if str(s.key or "").startswith("w_step:"))


def panel_heads(chart) -> list[str]:
    """The head line of each panel of the chart that draws every agent's graph on the Live Game (app/graph.belief_panels)."""
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    data = {d.name: convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets}
    return data["cards"]["head"].tolist()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve_app(env_extra: dict[str, str]) -> Iterator[str]:
    """``streamlit run streamlit_app.py`` on a free loopback port with ``env_extra``; yields its URL once it is healthy."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.headless", "true",
                             "--server.port", str(port), "--server.address", "127.0.0.1",
                             "--browser.gatherUsageStats", "false"],
                            cwd=ROOT, env=dict(os.environ, **env_extra), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        t0 = time.time()
        while time.time() - t0 < 60:
            try:
                if urllib.request.urlopen(url + "/_stcore/health", timeout=2).status == 200:
                    break
            except OSError:
                time.sleep(0.3)
        else:
            pytest.fail("streamlit did not start")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
