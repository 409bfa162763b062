#!/usr/bin/env python3
"""Check a deployed mafiascope app from the outside: ``python scripts/check_deploy.py URL``.

Standard library only (run it from any machine); ``--browser`` also opens the app in Chromium through
Playwright (``pip install playwright`` and a Chromium) and reads what the page says.

Checks, one line each (``ok`` or ``FAIL``), exit 1 if any failed:

* **health**: Streamlit's health endpoint answers ``ok`` (``URL/_stcore/health``; behind Streamlit
  Community Cloud's proxy also tried as ``URL/~/+/_stcore/health``) -- the server is up and answering;
* **server**: ``_stcore/host-config`` answers JSON -- it is a Streamlit server, not a proxy's error page;
* **page**: the app's HTML loads;
* with ``--browser``: the app runs its first script without an exception, shows its pages, and says in
  the sidebar whether it is in public mode (``--expect public`` or ``--expect local`` makes that a check).

It sends no key and no form input: it only reads what any visitor can read.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from urllib.parse import urljoin, urlsplit

PREFIXES = ("", "~/+/")  # Community Cloud serves the Streamlit server under /~/+/ behind its own page
AGENT = "mafiascope-check-deploy/1"


def _get(url: str, timeout: float) -> tuple[int, str]:
    req = urllib.request.Request(url, headers={"User-Agent": AGENT})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 (the user's own URL)
            return resp.status, resp.read(1 << 20).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""
    except (urllib.error.URLError, OSError) as exc:
        return 0, str(getattr(exc, "reason", exc))


def http_checks(base: str, timeout: float) -> list[tuple[str, bool, str]]:
    base = base.rstrip("/") + "/"
    out: list[tuple[str, bool, str]] = []
    found = None
    tried = []
    for prefix in PREFIXES:
        status, body = _get(urljoin(base, prefix + "_stcore/health"), timeout)
        tried.append(f"/{prefix}_stcore/health: {status or body}")
        if status == 200 and body.strip() == "ok":
            found = prefix
            break
    out.append(("health", found is not None, f"/{found}_stcore/health answers ok" if found is not None else "; ".join(tried)))
    prefix = found or ""
    status, body = _get(urljoin(base, prefix + "_stcore/host-config"), timeout)
    try:
        ok = status == 200 and isinstance(json.loads(body), dict)
    except ValueError:
        ok = False
    out.append(("server", ok, f"/{prefix}_stcore/host-config: HTTP {status}" + ("" if ok else " (not Streamlit's JSON)")))
    status, body = _get(urljoin(base, prefix), timeout)
    ok = status == 200 and "<html" in body.lower()
    out.append(("page", ok, f"/{prefix}: HTTP {status}" + ("" if ok else " (no HTML page)")))
    return out


def browser_checks(base: str, timeout: float, expect: str | None, chromium: str | None) -> list[tuple[str, bool, str]]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return [("browser", False, "playwright is not installed (pip install playwright)")]
    out: list[tuple[str, bool, str]] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(**({"executable_path": chromium} if chromium else {}))
        try:
            page = browser.new_page()
            page.goto(base, timeout=timeout * 1000)
            frame = page
            deadline = time.time() + timeout
            note = ""
            while time.time() < deadline:  # the app may sit in Community Cloud's iframe
                for f in [page, *page.frames]:
                    text = f.locator("body").inner_text(timeout=2000) if f.locator("body").count() else ""
                    if "Public mode (" in text or "Local mode (" in text:
                        frame, note = f, text
                        break
                if note:
                    break
                time.sleep(1)
            out.append(("app", bool(note), "the app ran its first page" if note else "no mafiascope page within the timeout"))
            if note:
                errors = frame.locator('[data-testid="stException"]').count()
                out.append(("no exception", errors == 0, f"{errors} exception box(es) on the first page"))
                mode = "public" if "Public mode (" in note else "local"
                line = next(ln for ln in note.splitlines() if "mode (" in ln)
                out.append(("mode", expect in (None, mode), line.strip()[:200]))
        finally:
            browser.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Check a deployed mafiascope app (see the module docstring).")
    ap.add_argument("url", help="the app's address, e.g. https://mafiascope.streamlit.app")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per request (a sleeping Cloud app takes a while)")
    ap.add_argument("--browser", action="store_true", help="also open the app in Chromium (Playwright)")
    ap.add_argument("--chromium", default=None, help="Chromium executable for --browser (default: Playwright's)")
    ap.add_argument("--expect", choices=("public", "local"), default=None, help="with --browser: the mode the app must say")
    args = ap.parse_args(argv)
    if urlsplit(args.url).scheme not in ("http", "https"):
        ap.error("url: give an http:// or https:// address")
    results = http_checks(args.url, args.timeout)
    if args.browser:
        results += browser_checks(args.url, args.timeout, args.expect, args.chromium)
    for name, ok, detail in results:
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
