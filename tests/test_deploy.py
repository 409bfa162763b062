"""Issue 31 item 7: the deploy. The committed Streamlit config binds no address (a host binds what it needs), the
README's local command binds loopback, and scripts/check_deploy.py checks a running app from the outside."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from .app_support import free_port, serve_app

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"


def test_the_committed_config_binds_no_address_and_local_runs_bind_loopback():
    """Seen: the shipped config bound 127.0.0.1, so a host that does not override server.address serves nothing."""
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert "address" not in cfg.get("server", {})
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)```", setup, re.S)
    assert len(commands) == 2 and all(len(c.strip().splitlines()) == 1 for c in commands)  # exactly two set-up commands
    assert commands[0].strip() == "pip install -r requirements.txt && streamlit run streamlit_app.py --server.address 127.0.0.1"
    assert commands[1].strip() == "pip install -r requirements-dev.txt -e . && python -m pytest -q"


def check(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "check_deploy.py"), *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)  # fmt: skip


@pytest.mark.slow  # starts a Streamlit server
def test_the_deploy_check_passes_on_a_running_app_and_fails_on_a_dead_one(tmp_path):
    with serve_app({"MAFIASCOPE_RUNS": str(tmp_path / "runs"), "MAFIASCOPE_PUBLIC": "1"}) as url:
        r = check(url, "--timeout", "30")
        assert r.returncode == 0, r.stdout + r.stderr
        assert [ln.split(":")[0] for ln in r.stdout.splitlines()] == ["ok   health", "ok   server", "ok   page"]
        if Path(CHROMIUM).exists() and importlib.util.find_spec("playwright"):
            r = check(url, "--browser", "--chromium", CHROMIUM, "--expect", "public", "--timeout", "60")
            assert r.returncode == 0, r.stdout + r.stderr
            assert "ok   mode: Public mode (MAFIASCOPE_PUBLIC=1): quotas apply" in r.stdout
            r = check(url, "--browser", "--chromium", CHROMIUM, "--expect", "local", "--timeout", "60")
            assert r.returncode == 1 and "FAIL mode: Public mode" in r.stdout
    r = check(f"http://127.0.0.1:{free_port()}", "--timeout", "3")
    assert r.returncode == 1 and r.stdout.startswith("FAIL health:")
