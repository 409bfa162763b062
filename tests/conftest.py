"""Test-wide setup: the analytics cache goes to a temporary directory, never to the user's cache
(``~/.cache/mafiascope``) nor into a corpus; child processes (CLI, app launches) inherit it."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from mafiascope.analytics.cache import ENV_CACHE_DIR


@pytest.fixture(autouse=True, scope="session")
def _analytics_cache_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    old = os.environ.get(ENV_CACHE_DIR)
    os.environ[ENV_CACHE_DIR] = str(tmp_path_factory.mktemp("analytics-cache"))
    yield
    if old is None:
        os.environ.pop(ENV_CACHE_DIR, None)
    else:
        os.environ[ENV_CACHE_DIR] = old
