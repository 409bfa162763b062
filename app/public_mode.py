"""Whether this app is public, and the operator's quotas.

**Public mode** is decided, in this order, by

1. an explicit setting: the environment variable ``MAFIASCOPE_PUBLIC`` (``1``/``0``, ``true``/``false``,
   ``yes``/``no``, ``on``/``off``), else ``public = true|false`` under ``[mafiascope]`` in ``st.secrets``;
2. the deploy environment: Streamlit Community Cloud (``HOSTNAME=streamlit``, the checkout under
   ``/mount/src``), Hugging Face Spaces, Google Cloud Run, Render, Fly.io, Railway, Heroku: public;
3. the listening address, last: public unless the server listens on loopback only. The committed
   ``.streamlit/config.toml`` sets no address (a host binds what it needs), so a plain ``streamlit run``
   is public; the README's local command passes ``--server.address 127.0.0.1``.

**Quotas** bound what one visitor, and all of them together, can start (app/jobs.py applies them to
every job). Public defaults are strict, local ones unlimited; the operator changes any of them under
``[mafiascope.quotas]`` in ``st.secrets`` or with ``MAFIASCOPE_QUOTA_<NAME>`` (the environment wins).
``0`` allows nothing (a read-only deploy); ``none`` (or ``unlimited``) lifts a limit. In public mode a
visitor sees and controls only the jobs their own session started, unless ``show_all_jobs`` (or
``MAFIASCOPE_SHOW_ALL_JOBS=1``) says otherwise. docs/app.md, "Public mode and quotas".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .paths import REPO_ROOT

ENV_PUBLIC = "MAFIASCOPE_PUBLIC"
ENV_SHOW_ALL = "MAFIASCOPE_SHOW_ALL_JOBS"
ENV_QUOTA = "MAFIASCOPE_QUOTA_"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
_UNLIMITED = ("none", "unlimited", "")


class Quotas(BaseModel):
    """What may be started. ``None``: no limit; ``0``: nothing."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    jobs_per_session: int | None = Field(None, ge=0, description="background jobs one browser session may have running at once")
    jobs_per_server: int | None = Field(None, ge=0, description="background jobs running at once on this server, all visitors together")
    games_per_job: int | None = Field(None, ge=0, description="games one launch, batch or arena run may play")
    forks_per_request: int | None = Field(None, ge=0, description="branches, re-rolls or continuations one Replay request may start")
    study_games: int | None = Field(None, ge=0, description="games one study may schedule (every arm together)")
    parallel: int | None = Field(None, ge=0, description="games a job may play at once")
    runs_disk_mb: int | None = Field(None, ge=0, description="megabytes the runs directory may hold before no new job starts")
    starts_per_hour: int | None = Field(None, ge=0, description="jobs the whole server may start in any hour")


PUBLIC_QUOTAS = Quotas(jobs_per_session=2, jobs_per_server=6, games_per_job=20, forks_per_request=10, study_games=200,
                       parallel=2, runs_disk_mb=2000, starts_per_hour=60)  # fmt: skip
LOCAL_QUOTAS = Quotas()
QUOTA_NAMES = tuple(Quotas.model_fields)


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True)

    public: bool
    why: str  # what decided it, for the page and the docs' deploy check
    show_all_jobs: bool = False
    quotas: Quotas
    problems: tuple[str, ...] = ()  # operator settings that could not be read (each one line, naming the field)


def _section() -> Mapping[str, Any]:
    try:
        import streamlit as st

        sec = st.secrets.get("mafiascope", {})
        return sec if isinstance(sec, Mapping) else {}
    except Exception:  # no secrets.toml
        return {}


def _flag(value: Any, where: str, problems: list[str]) -> bool | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    problems.append(f"{where}: {str(value)[:40]!r} is not true or false")
    return None


def deploy_environment(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> str | None:
    """The hosting service this process runs on, when it is one that serves the app to others."""
    env = os.environ if environ is None else environ
    here = str(cwd or REPO_ROOT)
    if env.get("HOSTNAME") == "streamlit" or env.get("SF_PARTNER") == "streamlit" or here.startswith("/mount/src/"):
        return "Streamlit Community Cloud"
    for var, name in (("SPACE_ID", "Hugging Face Spaces"), ("K_SERVICE", "Google Cloud Run"), ("RENDER", "Render"),
                      ("FLY_APP_NAME", "Fly.io"), ("RAILWAY_ENVIRONMENT", "Railway"), ("DYNO", "Heroku")):  # fmt: skip
        if env.get(var):
            return name
    return None


def _address() -> str | None:
    try:
        import streamlit as st

        value = st.get_option("server.address")
    except Exception:
        return None
    return str(value).strip() if value else None


def _quota_value(value: Any, where: str, problems: list[str]) -> tuple[bool, int | None]:
    """(given, value) of one quota setting; a bad one is a problem and not given."""
    if isinstance(value, bool):
        problems.append(f"{where}: expected a whole number or none")
        return False, None
    if isinstance(value, int):
        if value < 0:
            problems.append(f"{where}: {value} is below 0")
            return False, None
        return True, value
    text = str(value).strip().lower()
    if text in _UNLIMITED:
        return True, None
    if text.isdigit():
        return True, int(text)
    problems.append(f"{where}: {str(value)[:40]!r} is not a whole number >= 0 or none")
    return False, None


def settings(environ: Mapping[str, str] | None = None, secrets: Mapping[str, Any] | None = None,
             address: str | None = "?", cwd: Path | None = None) -> Settings:
    """The settings in force (arguments: for tests; by default the process' environment, st.secrets, the server option)."""
    env = os.environ if environ is None else environ
    sec = _section() if secrets is None else secrets
    problems: list[str] = []
    explicit = _flag(sec.get("public"), "st.secrets mafiascope.public", problems)
    from_env = _flag(env.get(ENV_PUBLIC), ENV_PUBLIC, problems)
    host = deploy_environment(env, cwd)
    addr = _address() if address == "?" else address
    if from_env is not None:
        public, why = from_env, f"{ENV_PUBLIC}={env.get(ENV_PUBLIC)}"
    elif explicit is not None:
        public, why = explicit, f"public = {str(explicit).lower()} in st.secrets [mafiascope]"
    elif host:
        public, why = True, f"running on {host}"
    elif addr in LOOPBACK:
        public, why = False, f"listening on {addr} only"
    else:
        public, why = True, f"listening on {addr or 'every interface'}"
    show_all = _flag(env.get(ENV_SHOW_ALL), ENV_SHOW_ALL, problems)
    if show_all is None:
        show_all = bool(_flag(sec.get("show_all_jobs"), "st.secrets mafiascope.show_all_jobs", problems))
    base = (PUBLIC_QUOTAS if public else LOCAL_QUOTAS).model_dump()
    given = sec.get("quotas", {})
    given = given if isinstance(given, Mapping) else {}
    for name in given:
        if name not in QUOTA_NAMES:
            problems.append(f"st.secrets mafiascope.quotas.{str(name)[:40]}: not a quota (quotas: {', '.join(QUOTA_NAMES)})")
    for name in QUOTA_NAMES:
        for where, raw in ((f"st.secrets mafiascope.quotas.{name}", given.get(name)), (ENV_QUOTA + name.upper(), env.get(ENV_QUOTA + name.upper()))):
            if raw is not None:
                ok, value = _quota_value(raw, where, problems)
                if ok:
                    base[name] = value
    try:
        quotas = Quotas(**base)
    except ValidationError as exc:  # cannot happen after the checks above; kept as a guard
        problems.append(f"quotas: {exc.errors()[0]['msg']}")
        quotas = PUBLIC_QUOTAS if public else LOCAL_QUOTAS
    return Settings(public=public, why=why, show_all_jobs=show_all, quotas=quotas, problems=tuple(problems))


def sidebar_note() -> None:
    """One line under the sidebar saying which mode is in force and why (a deploy check reads it), and any operator
    setting that could not be read."""
    import streamlit as st

    from .text import md_escape

    s = settings()
    if s.public:
        st.sidebar.caption(md_escape(f"Public mode ({s.why}): quotas apply" + ("." if s.show_all_jobs else
                                                                                 "; you see the jobs you start.")))
    else:
        st.sidebar.caption(md_escape(f"Local mode ({s.why})."))
    for problem in s.problems:
        st.sidebar.warning(md_escape(f"Ignored setting: {problem}"))
