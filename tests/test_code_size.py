"""Files stay under 400 lines and functions under 80 (issue #13 item 8): the ones over today are
listed below and the list can only shrink. Split a new long file or function where a reader
gains, instead of adding it here."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("mafiascope", "app", "pages")
MAX_FILE_LINES, MAX_FUNCTION_LINES = 400, 80

LONG_FILES: set[str] = set()
LONG_FUNCTIONS = {
    "mafiascope/analytics/corpus.py:load_corpus",
    "mafiascope/analytics/load.py:_parse_game",
    "mafiascope/analytics/report.py:format_report", "mafiascope/analytics/viewer.py:step_metrics", "mafiascope/arena/run.py:run_arena",
}  # fmt: skip


def _sources() -> list[Path]:
    return sorted(p for root in ROOTS for p in (REPO / root).rglob("*.py"))


def long_files() -> set[str]:
    return {str(p.relative_to(REPO)) for p in _sources() if len(p.read_text(encoding="utf-8").splitlines()) > MAX_FILE_LINES}


def long_functions() -> set[str]:
    found: set[str] = set()

    def visit(node: ast.AST, path: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef) and child.end_lineno - child.lineno + 1 > MAX_FUNCTION_LINES:
                    found.add(f"{path}:{name}")
                visit(child, path, "" if isinstance(child, ast.ClassDef) and not prefix else f"{name}.")
            else:
                visit(child, path, prefix)

    for p in _sources():
        visit(ast.parse(p.read_text(encoding="utf-8")), str(p.relative_to(REPO)), "")
    return found


def test_no_new_file_over_400_lines():
    assert long_files() - LONG_FILES == set()


def test_no_new_function_over_80_lines():
    assert long_functions() - LONG_FUNCTIONS == set()


def test_the_exception_lists_hold_only_what_is_still_long():
    """A file or function split below the limit leaves the list (so it cannot grow back unnoticed)."""
    assert LONG_FILES - long_files() == set()
    assert LONG_FUNCTIONS - long_functions() == set()
