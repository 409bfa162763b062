"""The package is whole: a wheel built from the checkout, installed outside it, runs a game and
analyses a bundled one from another directory (shipped configs and batteries come from the package)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mafiascope.config import CONFIG_DIR, shipped_config

ROOT = Path(__file__).resolve().parents[1]
DEMO_GAME = ROOT / "data" / "demo" / "demo-classic-02"


def _pip(*args: str, cwd: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "-q", "--disable-pip-version-check", *args],
                   check=True, cwd=cwd, timeout=300, capture_output=True)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pip wheel`` of a copy of the sources (an in-tree build would leave build/ and *.egg-info in the
    checkout), installed with ``pip install --target``; dependencies come from the test environment."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(ROOT / "mafiascope", src / "mafiascope", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy2(ROOT / "pyproject.toml", src / "pyproject.toml")
    _pip("wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp / "dist"), str(src), cwd=tmp)
    (wheel,) = (tmp / "dist").glob("mafiascope-*.whl")
    _pip("install", "--no-deps", "--no-compile", "--target", str(tmp / "site"), str(wheel), cwd=tmp)
    return tmp / "site"


def _installed(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_installed_wheel_runs_and_analyzes_outside_the_checkout(site, tmp_path):
    work = tmp_path / "elsewhere"
    work.mkdir()
    where = _installed(site, work, "-c", "import mafiascope.config as c; print(c.__file__); print(c.CONFIG_DIR)")
    assert where.returncode == 0, where.stderr
    module, configs = where.stdout.split()
    assert Path(module).is_relative_to(site) and Path(configs) == site / "mafiascope" / "configs"

    run = _installed(site, work, "-m", "mafiascope", "run", "--json", "--seed", "1", "--no-snapshots", "--logs", "logs")
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    game = work / out["path"]
    assert out["winner"] in ("Mafia", "Villagers", "Draw") and game.resolve().is_relative_to(work.resolve())
    setup = json.loads((game / "game.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert setup["kind"] == "setup" and setup["config"]["name"] == "classic"
    assert Path(setup["probes"]["source"]).is_relative_to(site)  # the shipped battery, from the package
    assert (game / "introspection.jsonl").stat().st_size > 0

    bare = _installed(site, work, "-m", "mafiascope", "run", "-c", "classic_sheriff", "--json", "--seed", "2",
                      "--no-probes", "--no-snapshots", "--logs", "logs")
    assert bare.returncode == 0, bare.stderr
    assert (work / json.loads(bare.stdout)["path"] / "game.jsonl").is_file()

    # the README's study commands, from the installed package: shipped specs by path or by name
    for ref in ("configs/studies/bots_quick.yaml", "bots_quick"):
        plan = _installed(site, work, "-m", "mafiascope", "study", "plan", ref, "--json")
        assert plan.returncode == 0, plan.stderr
        assert json.loads(plan.stdout)["games"] == 22
    ran = _installed(site, work, "-m", "mafiascope", "study", "run", "bots_quick", "--limit", "0", "--json")
    assert ran.returncode == 0, ran.stderr
    status = _installed(site, work, "-m", "mafiascope", "study", "status", "configs/studies/bots_quick.yaml", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["counts"]["pending"] == 22

    shutil.copytree(DEMO_GAME, work / "demo" / DEMO_GAME.name)
    rep = _installed(site, work, "-m", "mafiascope", "analyze", "demo", "--json", "--boot", "0")
    assert rep.returncode == 0, rep.stderr
    report = json.loads(rep.stdout)
    assert report["n_games"] == 1 and report["game_ids"] == [DEMO_GAME.name] and report["f2"]["n"] > 0
    assert sorted(p.name for p in work.iterdir()) == ["demo", "logs"]  # nothing else written (cache elsewhere)


def test_shipped_configs_resolve_by_name_path_or_prefix():
    assert shipped_config("classic") == shipped_config("configs/classic.yaml") == CONFIG_DIR / "classic.yaml"
    assert shipped_config("probes/chained_en.yaml") == shipped_config("configs/probes/chained_en.yaml")
    assert shipped_config("rules/sport") == CONFIG_DIR / "rules" / "sport.yaml"
    assert shipped_config("nope") is None and shipped_config("configs") is None and shipped_config("/etc/passwd") is None
    assert (ROOT / "mafiascope" / "configs" / "classic.yaml").is_file()  # the files live in the package


def _repo_text_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    files = [ROOT / f for f in out.stdout.splitlines()]
    return [f for f in files if f.suffix in (".py", ".md", ".toml", ".txt", ".yaml", ".cfg") and f.is_file() and not f.is_symlink()]


def test_nothing_reads_outside_the_repository():
    """A fresh clone runs every test: no file of the repository, tests included, names a path beside the
    checkout (the original's corpora are bundled in data/corpus, its reference figures in tests/fixtures/reference)."""
    up = ".." + "/"  # spelled apart so this test's own source is no hit
    needles = (up + "shared", "shared/" + "spec", "shared/" + "corpus", "shared/" + "seeds", '"shared"' + " /", "'shared'" + " /",
               "ROOT" + ".parent", "REPO" + ".parent", "parents[1]" + ".parent", "parents" + "[2]")
    bad = []
    for f in _repo_text_files():
        text = f.read_text(encoding="utf-8", errors="replace")
        for needle in needles:
            if needle in text:
                bad.append(f"{f.relative_to(ROOT).as_posix()}: {needle}")
    assert bad == []


def test_metric_citations_name_existing_sections():
    import re

    headings = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8"), re.M))
    cited = {}
    for f in _repo_text_files():
        text = f.read_text(encoding="utf-8", errors="replace")
        for sec in re.findall(r"metrics\.md\s+§(\d+(?:\.\d+)?)", text):
            cited.setdefault(sec, f.relative_to(ROOT).as_posix())
    assert len(cited) >= 10
    assert {s: f for s, f in cited.items() if s not in headings} == {}


def test_every_bench_script_has_its_reference_section():
    """docs/benchmarks.md is the reference of bench/: each script has a section that names it in its heading
    and shows how to run it, and the file names no script that is gone."""
    import re

    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    scripts = {p.name for p in (ROOT / "bench").glob("*.py") if "__main__" in p.read_text(encoding="utf-8")}  # not helpers
    headed = set(re.findall(r"^## .*`bench/([a-z_]+\.py)", text, re.M))
    run = set(re.findall(r"^python bench/([a-z_]+\.py)", text, re.M))
    assert scripts - headed == set() and scripts - run == set()
    assert set(re.findall(r"bench/([a-z_]+\.py)", text)) <= {p.name for p in (ROOT / "bench").glob("*.py")}
