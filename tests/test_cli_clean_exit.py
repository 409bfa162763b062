"""A CLI game against a network backend exits without aiohttp's unclosed-session warnings.

The shared backends keep one HTTP client per event loop; ``asyncio.run`` at the CLI's top
used to end the loop with those clients open, and aiohttp printed "Unclosed client session"
and "Unclosed connector" on the user's terminal after every game.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.servers import threaded_devserver

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("probed", [False, True])
def test_run_against_an_openai_backend_leaves_no_unclosed_client(tmp_path, probed):
    with threaded_devserver() as srv:
        cfg = {
            "name": "clean-exit", "language": "en",
            "rules": {"name": "classic", "roles": {"Mafia": 1, "Doctor": 1, "Villager": 3}, "intro_round": False, "max_rounds": 2},
            "seats": [{"backend": "m"} for _ in range(5)],
            "backends": {"m": {"type": "openai", "base_url": srv.base_url, "model": "bot-balanced", "timeout": 10}},
            "probes": {"enabled": probed, "battery": str(ROOT / "configs/probes/suspicion_en.yaml")},
        }  # fmt: skip
        path = tmp_path / "cfg.yaml"
        path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
        cmd = [sys.executable, "-m", "mafiascope", "run", "-c", str(path), "--seed", "1", "--logs", str(tmp_path / "logs"), "-q"]
        if not probed:
            cmd.append("--no-probes")
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=180,
                             env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "default"})  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Unclosed" not in out.stderr, out.stderr[-2000:]
    assert "ResourceWarning" not in out.stderr, out.stderr[-2000:]
