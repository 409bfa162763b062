"""Layers point one way (docs/architecture.md, "Layers"): no module imports a module of a layer
above its own, lazily inside a function included; the package never imports the app; and no module
reaches into another module's private names (``_x``): what two modules share is public where it is
defined."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "mafiascope"

# Low to high. A module belongs to the layer of the longest prefix listed for it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("mafiascope", "mafiascope.logs", "mafiascope.lexicon", "mafiascope.redaction",
                    "mafiascope.safe_yaml", "mafiascope.provenance", "mafiascope.cache_root", "mafiascope.export_text")),
    ("rules", ("mafiascope.engine", "mafiascope.probes.parsing", "mafiascope.probes.shapes", "mafiascope.probes.render",
               "mafiascope.probes.answer_schema", "mafiascope.backends.base")),
    ("config", ("mafiascope.config", "mafiascope.backends.specs", "mafiascope.probes.dsl")),
    ("backends", ("mafiascope.backends",)),
    ("play", ("mafiascope.play", "mafiascope.probes")),
    ("analytics", ("mafiascope.analytics", "mafiascope.dataframes")),
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


OURS = ("mafiascope", "app", "pages")


def private_uses(roots: tuple[str, ...] = OURS, repo: Path = REPO) -> list[str]:
    """Every use of another module's private name in ``roots``, as ``file:line: what``: ``from m import _x``,
    ``import m._x`` and ``m._x`` where ``m`` names a module of ours (dunders such as ``__version__`` are public)."""

    def private(name: str) -> bool:
        return name.startswith("_") and not name.startswith("__")

    found = []
    for root in roots:
        for path in sorted((repo / root).rglob("*.py")):
            mod = module_name(path, repo)
            package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
            tree = ast.parse(path.read_text(encoding="utf-8"))
            modules: dict[str, str] = {}  # local name -> a module of ours it is bound to
            where = f"{path.relative_to(repo)}"
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for a in node.names:
                        if a.name.split(".")[0] in roots:
                            modules[a.asname or a.name.split(".")[0]] = a.name
                            if any(private(part) for part in a.name.split(".")):
                                found.append(f"{where}:{node.lineno}: import {a.name}")
                elif isinstance(node, ast.ImportFrom):
                    base = node.module or ""
                    if node.level:
                        up = package.split(".")[: len(package.split(".")) - node.level + 1]
                        base = ".".join(up + ([node.module] if node.module else []))
                    if base.split(".")[0] not in roots:
                        continue
                    for a in node.names:
                        if private(a.name):
                            found.append(f"{where}:{node.lineno}: from {base} import {a.name}")
                        elif _is_module(f"{base}.{a.name}", repo):
                            modules[a.asname or a.name] = f"{base}.{a.name}"
            for node in ast.walk(tree):
                if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                        and private(node.attr)):
                    found.append(f"{where}:{node.lineno}: {node.value.id}.{node.attr} ({modules[node.value.id]})")
    return sorted(found)


def test_every_module_has_a_layer():
    for path in PACKAGE.rglob("*.py"):
        layer_of(module_name(path))


def test_no_module_imports_a_layer_above_its_own():
    assert upward_imports() == []


def test_no_module_uses_another_modules_private_names():
    assert private_uses() == []


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


def test_the_checker_sees_a_private_name_taken_from_another_module(tmp_path):
    """Each way of reaching into another module is caught; a module's own private names and dunders are not."""
    (tmp_path / "mafiascope" / "logs").mkdir(parents=True)
    (tmp_path / "mafiascope" / "logs" / "io.py").write_text("_x = 1\n__version__ = '1'\n_y = _x\n", encoding="utf-8")
    (tmp_path / "mafiascope" / "logs" / "a.py").write_text(
        "from .io import _x\nfrom . import io\nfrom .io import __version__\n\n\ndef f():\n    return io._x\n", encoding="utf-8")
    (tmp_path / "mafiascope" / "logs" / "b.py").write_text("import mafiascope.logs.io as m\nv = m._y\n", encoding="utf-8")
    found = private_uses(("mafiascope",), tmp_path)
    assert found == ["mafiascope/logs/a.py:1: from mafiascope.logs.io import _x", "mafiascope/logs/a.py:7: io._x (mafiascope.logs.io)",
                     "mafiascope/logs/b.py:2: m._y (mafiascope.logs.io)"], found
