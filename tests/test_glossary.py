"""The glossary (mafiascope/lexicon/glossary.py) is the one source of the app's help texts and of docs/glossary.md."""

from __future__ import annotations

import re
from pathlib import Path

from mafiascope.lexicon import glossary

ROOT = Path(__file__).resolve().parents[1]


def test_docs_glossary_is_generated_from_the_module():
    text = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    assert glossary.markdown() in text, "docs/glossary.md is stale: python -m mafiascope.lexicon.glossary --write docs/glossary.md"


def test_every_term_is_a_sentence_and_keys_are_unique():
    keys = [t.key for t in glossary.TERMS]
    assert len(keys) == len(set(keys))
    for t in glossary.TERMS:
        assert (t.text[0].isupper() or t.text[0].isdigit()) and t.text.endswith((".", ")")), t.key
        assert len(t.text) < 400, t.key


def test_every_term_the_app_asks_for_exists():
    asked = set()
    for f in [*(ROOT / "app").glob("*.py"), *(ROOT / "pages").glob("*.py")]:
        for call in re.findall(r"glossary\.(?:tip|plain)\(([^)]*)\)", f.read_text(encoding="utf-8")):
            asked |= set(re.findall(r"\"([^\"]+)\"", call))
    assert asked, "the app uses the glossary"
    assert asked <= set(glossary.BY_KEY), asked - set(glossary.BY_KEY)
