"""Layers point one way (docs/architecture.md, "Layers"): no module imports a module of a layer
above its own, lazily inside a function included; the package never imports the app."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "mafiascope"

# Low to high. A module belongs to the layer of the longest prefix listed for it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("mafiascope", "mafiascope.logs", "mafiascope.lexicon", "mafiascope.redaction",
                    "mafiascope.safe_yaml", "mafiascope.provenance", "mafiascope.cache_root")),
    ("rules", ("mafiascope.engine", "mafiascope.probes.parsing", "mafiascope.probes.shapes", "mafiascope.probes.render",
               "mafiascope.probes.answer_schema", "mafiascope.backends.base")),
    ("config", ("mafiascope.config", "mafiascope.backends.specs", "mafiascope.probes.dsl")),
    ("backends", ("mafiascope.backends",)),
    ("play", ("mafiascope.engine.runner", "mafiascope.engine.seating", "mafiascope.engine.batch", "mafiascope.engine.executors",
              "mafiascope.engine.conformance", "mafiascope.probes",
              # the one runner with its ledger, spec and usage: every front end (batch, arena, A/B, forks) plays through it
              "mafiascope.study.runner", "mafiascope.study.ledger", "mafiascope.study.spec", "mafiascope.study.usage")),
    ("analytics", ("mafiascope.analytics",)),
    ("experiments", ("mafiascope.replay", "mafiascope.arena")),
    ("study", ("mafiascope.study",)),
    ("cli", ("mafiascope.cli", "mafiascope.__main__")),
]
RANK = {prefix: i for i, (_, prefixes) in enumerate(LAYERS) for prefix in prefixes}


def layer_of(module: str) -> int:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in RANK:
            return RANK[".".join(parts[:n])]
    raise KeyError(module)


def module_name(path: Path, repo: Path = REPO) -> str:
    parts = list(path.relative_to(repo).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str, repo: Path) -> bool:
    where = repo / Path(*name.split("."))
    return where.with_suffix(".py").is_file() or where.is_dir()


def imports(path: Path, repo: Path = REPO) -> set[tuple[int, str]]:
    """(line, imported module) of every import in the file, those inside functions included;
    ``from X import y`` counts as X.y when y is a module, else as X."""
    mod = module_name(path, repo)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out: set[tuple[int, str]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {(node.lineno, a.name) for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            out |= {(node.lineno, f"{base}.{a.name}" if _is_module(f"{base}.{a.name}", repo) else base) for a in node.names}
    return out


def upward_imports(repo: Path = REPO) -> list[str]:
    """Every import of the package that points up a layer, or into the app, as ``file:line: why``."""
    found = []
    for path in sorted((repo / "mafiascope").rglob("*.py")):
        mod = module_name(path, repo)
        for line, target in sorted(imports(path, repo)):
            where = f"{path.relative_to(repo)}:{line}: {mod}"
            if target.split(".")[0] in ("app", "pages", "streamlit", "streamlit_app"):
                found.append(f"{where} imports {target} (the package never imports the app)")
            elif target.split(".")[0] == "mafiascope" and layer_of(target) > layer_of(mod):
                found.append(f"{where} ({LAYERS[layer_of(mod)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})")
    return found


def test_every_module_has_a_layer():
    for path in PACKAGE.rglob("*.py"):
        layer_of(module_name(path))


def test_no_module_imports_a_layer_above_its_own():
    assert upward_imports() == []


def test_the_app_imports_no_page():
    bad = [f"{p.relative_to(REPO)}:{line}: {t}" for p in sorted((REPO / "app").rglob("*.py"))
           for line, t in imports(p) if t.split(".")[0] == "pages"]
    assert bad == []


def test_the_checker_sees_a_lazy_upward_import(tmp_path):
    """The check catches what it is for: an import inside a function, from a low layer up."""
    (tmp_path / "mafiascope" / "logs").mkdir(parents=True)
    (tmp_path / "mafiascope" / "analytics").mkdir()
    (tmp_path / "mafiascope" / "logs" / "io.py").write_text("def f():\n    from ..analytics import corpus\n", encoding="utf-8")
    (tmp_path / "mafiascope" / "analytics" / "corpus.py").write_text("from ..logs import io\n", encoding="utf-8")
    found = upward_imports(tmp_path)
    assert len(found) == 1 and found[0].startswith("mafiascope/logs/io.py:2:"), found
    assert "imports mafiascope.analytics.corpus (analytics)" in found[0]
