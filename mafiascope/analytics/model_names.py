"""How models are named in a report: file names made from model names (a model may be named by a local
file path: ``/home/me/models/DeepSeek-V3.gguf``)."""

from __future__ import annotations

import hashlib
import re

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
SLUG_CHARS = 40


def file_slug(name: str) -> str:
    """A file-name part for ``name``: the last component of a path, letters, digits, ``-`` and ``_`` only
    (no dot: a figure's suffix and LaTeX's graphics loader read the last dot), at most :data:`SLUG_CHARS`
    characters; when that changed the name, a short hash of the whole name follows, so two names never
    share a slug."""
    s = str(name)
    tail = re.split(r"[\\/]+", s.rstrip("\\/"))[-1] or s
    slug = _UNSAFE.sub("_", tail).strip("_-")[:SLUG_CHARS].strip("_-")
    if slug != s or not slug:
        slug = (slug or "model") + "-" + hashlib.sha256(s.encode("utf-8")).hexdigest()[:6]
    return slug
