"""The app never shows a visitor the server's absolute paths (run pickers, URLs, launch lines)."""

from __future__ import annotations

from pathlib import Path

from app.paths import REPO_ROOT, public_command, public_path


def test_paths_are_named_by_the_checkout_or_their_log_root(tmp_path, monkeypatch):
    assert public_path(REPO_ROOT / "data" / "arena" / "demo-bots") == "data/arena/demo-bots"
    root = tmp_path / "srv" / "logs"
    (root / "study-a").mkdir(parents=True)
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(root))
    assert public_path(root / "study-a") == "logs/study-a"
    assert public_path(tmp_path / "elsewhere" / "run-7") == "run-7"  # outside every root: only its name
    line = public_command(["-m", "mafiascope", "study", "run", str(root / "study-a" / "spec.yaml"), "--dir", str(root / "study-a")])
    assert str(tmp_path) not in line
    assert line == "mafiascope study run logs/study-a/spec.yaml --dir logs/study-a"  # as a user types it (issue 35)
    assert public_command(["/usr/bin/python3", "-m", "mafiascope", "arena", "run"]) == "mafiascope arena run"
