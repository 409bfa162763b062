"""Test-wide setup: the analytics cache goes to a temporary directory, never to the user's cache
(``~/.cache/mafiascope``) nor into a corpus; child processes (CLI, app launches) inherit it."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from mafiascope.cache_root import ENV_CACHE_DIR, user_cache_root

# Hypothesis keeps its example database and caches in ./.hypothesis by default: scratch files
# belong in the user's cache dir, never in the checkout (and no test depends on replayed examples)
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(user_cache_root() / "hypothesis"))
# The app decides public mode from the listening address when nothing says otherwise (app/public_mode.py); the
# tests run it as a local app unless a test asks for public mode (tests/test_app_quotas.py).
os.environ.setdefault("MAFIASCOPE_PUBLIC", "0")
try:
    from hypothesis import settings as _hyp_settings

    _hyp_settings.register_profile("mafiascope", database=None)
    _hyp_settings.load_profile("mafiascope")
except ImportError:  # hypothesis is a dev requirement; the property tests skip without it
    pass


@pytest.fixture(autouse=True, scope="session")
def _analytics_cache_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    old = os.environ.get(ENV_CACHE_DIR)
    os.environ[ENV_CACHE_DIR] = str(tmp_path_factory.mktemp("analytics-cache"))
    yield
    if old is None:
        os.environ.pop(ENV_CACHE_DIR, None)
    else:
        os.environ[ENV_CACHE_DIR] = old


@pytest.fixture(autouse=True)
def _default_key_resolver() -> Iterator[None]:
    """Every AppTest run installs the app's key resolver and public-mode check process-wide (app/keys.install), and
    tests register secrets with the process's scrubber; the next test starts without them, as a fresh CLI process
    would (a test secret such as 'sk-preflight-...' otherwise masked the word 'preflight' in later tests' errors)."""
    yield
    from mafiascope.backends.destinations import set_public_check
    from mafiascope.backends.keys import set_key_resolver
    from mafiascope.redaction import forget_secrets

    set_key_resolver(None)
    set_public_check(None)
    forget_secrets()
