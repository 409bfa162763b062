"""Hypothesis fuzz targets for every parser/loader that reads untrusted input (issue 12).

Shared by tests/test_fuzz_inputs.py (a few hundred examples each) and bench/fuzz.py (as many as
asked). Each target takes one generated input and raises AssertionError when the code under test
does anything but its documented behaviour: a ValueError subclass with a message naming the
source (configs, batteries, rosters, rule sets), a warning naming file:line (JSONL readers), no
exception at all (the analytics loader), a 4xx and never a 5xx (the bus hub). :func:`fuzz` runs
one target and returns how many inputs it tried.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
CONFIG_FILES = sorted((ROOT / "configs").glob("*.yaml")) + sorted((ROOT / "configs" / "rules").glob("*.yaml"))
BATTERY_FILES = sorted((ROOT / "configs" / "probes").glob("*.yaml"))
DEMO_GAMES = sorted(p for p in (ROOT / "data" / "demo").iterdir() if (p / "game.jsonl").is_file())
PER_EXAMPLE = timedelta(seconds=10)  # "never a hang": an example slower than this fails the run

# ----------------------------------------------------------------------------- strategies

_YAML_TOKENS = [":", " ", "\n", "  ", "- ", "{", "}", "[", "]", ",", "&a", "*a", "&b", "*b", "!!python/object", "!!str",
                "|", ">", "'", '"', "#", "?", "%YAML 1.1\n", "---\n", "...\n", "~", "null", "true", "1e999", ".nan",
                "-.inf", "0x1F", "99999999999999999999999", "seats", "rules", "roles", "Mafia", "Villager", "backends",
                "type", "openai", "bot", "bus", "probes", "question", "id", "when", "{player}", "{0}", "{}", "${HOME}",
                "${NOPE_NOT_SET}", "\t", "\ufeff", "é", "Мафия", "\x00", "\x85", "\u2028"]  # fmt: skip

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(allow_nan=True, allow_infinity=True),
                    st.text(max_size=20), st.sampled_from(["Mafia", "Don", "Sheriff", "Doctor", "Villager", "bot", "openai",
                                                           "sport", "classic", "tournament", "after_each_message"]))  # fmt: skip
json_values = st.recursive(scalars, lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(st.text(max_size=12), c, max_size=4)),
                           max_leaves=12)  # fmt: skip

yamlish = st.lists(st.one_of(st.sampled_from(_YAML_TOKENS), st.text(max_size=8)), max_size=80).map("".join)


@st.composite
def mutated(draw: st.DrawFn, files: list[Path]) -> str:
    """A shipped file's text after a few random edits: cut, duplicate, insert a token, swap a value."""
    text = files[draw(st.integers(0, len(files) - 1))].read_text(encoding="utf-8")
    for _ in range(draw(st.integers(1, 4))):
        n = len(text)
        i = draw(st.integers(0, n))
        j = draw(st.integers(i, min(n, i + 40)))
        op = draw(st.sampled_from(["cut", "dup", "insert", "value"]))
        if op == "cut":
            text = text[:i] + text[j:]
        elif op == "dup":
            text = text[:j] + text[i:j] + text[j:]
        elif op == "insert":
            text = text[:i] + draw(st.sampled_from(_YAML_TOKENS)) + text[i:]
        else:
            colon = text.find(": ", i)
            if colon != -1:
                end = text.find("\n", colon)
                end = len(text) if end == -1 else end
                text = text[: colon + 2] + json.dumps(draw(json_values)) + text[end:]
    return text


def structured(fields: list[str]) -> st.SearchStrategy[str]:
    """YAML of a mapping whose keys are mostly the loader's own field names, values anything."""
    import yaml

    keys = st.one_of(st.sampled_from(fields), st.text(max_size=10))
    return st.dictionaries(keys, json_values, max_size=6).map(lambda d: yaml.safe_dump(d, allow_unicode=True))


# ----------------------------------------------------------------------------- targets


def _expect_value_error(call: Callable[[], Any], source: str) -> None:
    try:
        call()
    except ValueError as exc:
        msg = str(exc)
        assert msg.strip(), "empty error message"
        assert source in msg.splitlines()[0], f"error does not name {source!r}: {msg[:200]}"


def check_config(text: str) -> None:
    from mafiascope.config import parse_game_config, parse_yaml_text

    _expect_value_error(lambda: parse_game_config(parse_yaml_text(text, "fuzz.yaml") or {}, "fuzz.yaml"), "fuzz.yaml")


def check_battery(text: str) -> None:
    from mafiascope.config import parse_yaml_text
    from mafiascope.probes.dsl import BatteryError, parse_battery

    _expect_value_error(lambda: parse_battery(parse_yaml_text(text, "fuzz.yaml", BatteryError), "fuzz.yaml"), "fuzz.yaml")


def check_roster(text: str) -> None:
    from mafiascope.arena.roster import parse_roster
    from mafiascope.config import parse_yaml_text

    _expect_value_error(lambda: parse_roster(parse_yaml_text(text, "fuzz.yaml"), "fuzz.yaml"), "fuzz.yaml")


def check_rule_set(text: str) -> None:
    from mafiascope.arena.run import load_rule_set

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "fuzz.yaml"
        path.write_text(text, encoding="utf-8")
        _expect_value_error(lambda: load_rule_set(str(path)), "fuzz.yaml")


def check_yaml_bytes(data: bytes) -> None:
    from mafiascope.config import parse_yaml_bytes

    _expect_value_error(lambda: parse_yaml_bytes(data, "upload.yaml"), "upload.yaml")


jsonl_lines = st.lists(st.one_of(
    st.binary(max_size=60),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(st.text(max_size=8), json_values, max_size=4).map(lambda d: json.dumps(d, ensure_ascii=False).encode()),
    st.sampled_from([b"NaN", b'{"a": NaN}', b'{"a": Infinity}', b"\xef\xbb\xbf{}", b'{"a": "\\ud800"}', b"\xff\xfe", b"[]"]),
), max_size=12)  # fmt: skip


def check_jsonl(lines: list[bytes]) -> None:
    from mafiascope.logs.io import LogFormatError, TornLineWarning, iter_jsonl

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "x.jsonl"
        path.write_bytes(b"\n".join(lines))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rows = list(iter_jsonl(path, skip_corrupt=True))
        assert all(isinstance(r, dict) for r in rows)
        for w in caught:
            assert issubclass(w.category, TornLineWarning) and str(w.message).startswith(f"{path}:"), str(w.message)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                list(iter_jsonl(path))
        except LogFormatError as exc:
            assert str(exc).startswith(f"{path}:")


@st.composite
def damaged_game(draw: st.DrawFn) -> tuple[str, bytes, bytes]:
    """A demo game's game.jsonl and introspection.jsonl with records, fields and bytes damaged."""
    game = DEMO_GAMES[draw(st.integers(0, len(DEMO_GAMES) - 1))]
    out = []
    for name in ("game.jsonl", "introspection.jsonl"):
        lines = (game / name).read_bytes().split(b"\n")[:60]
        for _ in range(draw(st.integers(0, 6))):
            i = draw(st.integers(0, len(lines) - 1))
            op = draw(st.sampled_from(["field", "bytes", "drop", "truncate", "dup"]))
            if op == "field":
                try:
                    rec = json.loads(lines[i])
                except ValueError:
                    continue
                if isinstance(rec, dict) and rec:
                    key = draw(st.sampled_from(sorted(rec)))
                    rec[key] = draw(json_values)
                    lines[i] = json.dumps(rec, ensure_ascii=False).encode()
            elif op == "bytes":
                k = draw(st.integers(0, max(0, len(lines[i]) - 1)))
                lines[i] = lines[i][:k] + draw(st.binary(min_size=1, max_size=4)) + lines[i][k + 1 :]
            elif op == "drop":
                del lines[i]
                if not lines:
                    lines = [b""]
            elif op == "truncate":
                lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
            else:
                lines.insert(i, lines[i])
        out.append(b"\n".join(lines))
    return game.name, out[0], out[1]


def check_analytics(game: tuple[str, bytes, bytes]) -> None:
    from mafiascope.analytics.cache import _parse_batch

    name, g, p = game
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / name
        path.mkdir()
        (path / "game.jsonl").write_bytes(g)
        (path / "introspection.jsonl").write_bytes(p)
        [(_, _, _, skipped)], _ = _parse_batch([str(path)])  # documented: bad input never raises (rows and Arrow batch)
        for note in skipped:
            assert note.split(":", 1)[0] in ("game.jsonl", "introspection.jsonl") and ": skipping " in note, note


# ----------------------------------------------------------------------------- the bus hub

BUS_TOKEN = "fuzz-token-0123456789"


class HubThread:
    """A hub on 127.0.0.1 in its own event loop thread, for synchronous fuzz examples."""

    def __enter__(self) -> "HubThread":
        from mafiascope.backends.bus.hub import Hub

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.hub = asyncio.run_coroutine_threadsafe(Hub(BUS_TOKEN).start(), self.loop).result(10)
        status, body = self.request("POST", "/v1/register", json.dumps({"worker": "fuzz", "models": ["m"]}).encode())
        assert status == 200, body
        return self

    def request(self, method: str, path: str, body: bytes | None = None, timeout: float = 10) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.hub.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers={"Authorization": f"Bearer {BUS_TOKEN}",
                                                           "Content-Type": "application/json"})
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    def poll_is_on_time(self) -> None:
        t0 = time.monotonic()
        status, _ = self.request("GET", "/v1/work?worker=fuzz&wait=0.2")
        assert status == 204 and time.monotonic() - t0 < 3, f"a normal poll took {time.monotonic() - t0:.1f}s"

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.hub.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


_QUERY_VALUES = ["nan", "NaN", "inf", "-inf", "-0", "1e308", "1e-320", "0x10", "", "%00", "%ff", "1" * 400, "0.05", "55", "56",
                 "fuzz", "../x", "%2e%2e"]  # fmt: skip
bus_requests = st.tuples(
    st.sampled_from([("GET", "/v1/work"), ("GET", "/v1/status"), ("POST", "/v1/register"), ("POST", "/v1/result"),
                     ("POST", "/v1/generate")]),
    st.lists(st.tuples(st.sampled_from(["wait", "worker", "x", "wait[]"]),
                       st.one_of(st.sampled_from(_QUERY_VALUES), st.text(alphabet="0123456789.-+eEinfa%", max_size=12))),
             max_size=3),
    st.one_of(st.just(b""), st.binary(max_size=40), structured(["model", "messages", "seed", "temperature", "timeout_s",
                                                                "requeue", "wait_for_worker_s", "max_tokens", "worker",
                                                                "models", "meta", "job_id", "prompt_tokens"]).map(
        lambda y: json.dumps(__import__("yaml").safe_load(y), default=str).encode())),
)  # fmt: skip


def make_bus_check(hub: HubThread) -> Callable[[Any], None]:
    from urllib.parse import quote

    def check(req: Any) -> None:
        (method, path), query, body = req
        params = [(k, "0.05" if path == "/v1/work" and k == "wait" and _long_wait(v) else v) for k, v in query]
        if path == "/v1/work" and not any(k == "wait" for k, _ in params):  # the default long poll (25 s) outlasts
            params.append(("wait", "0.05"))  # the request's 10 s timeout: every poll is fuzzed with a short wait
        qs = "&".join(f"{quote(k)}={quote(v, safe='%')}" for k, v in params)
        if path == "/v1/generate":  # a valid generate would wait for a worker: keep every wait short
            try:
                data = json.loads(body)
            except ValueError:
                data = None
            if isinstance(data, dict):
                body = json.dumps({**data, "wait_for_worker_s": 0, "timeout_s": 0.1}).encode()
        status, _ = hub.request(method, f"{path}?{qs}" if qs else path, body or None)
        assert status < 500, f"{method} {path}?{qs} -> {status}"

    return check


def _long_wait(v: str) -> bool:
    """A valid wait would hold the example for up to 55 s; those are fuzzed at 0.05 s instead."""
    from urllib.parse import unquote

    try:
        return float(unquote(v)) > 0.05  # the hub sees the value percent-decoded ("%35" is 5)
    except ValueError:
        return False


# ----------------------------------------------------------------------------- runner

TARGETS: dict[str, tuple[st.SearchStrategy[Any], Callable[[Any], None]]] = {
    "config loader (YAML-ish text)": (yamlish, check_config),
    "config loader (mutated shipped configs)": (mutated(CONFIG_FILES), check_config),
    "config loader (known fields, random values)": (structured(["name", "rules", "language", "seats", "backends", "probes",
                                                                "snapshots", "max_tokens", "reask", "seed"]), check_config),
    "battery loader (YAML-ish text)": (yamlish, check_battery),
    "battery loader (mutated shipped batteries)": (mutated(BATTERY_FILES), check_battery),
    "roster loader (mutated roster)": (mutated([ROOT / "configs" / "roster_bots.yaml"]), check_roster),
    "rule-set loader (mutated rule sets)": (mutated(sorted((ROOT / "configs" / "rules").glob("*.yaml"))), check_rule_set),
    "YAML upload bytes": (st.one_of(st.binary(max_size=200), yamlish.map(lambda t: t.encode("utf-8", "surrogatepass"))),
                          check_yaml_bytes),
    "JSONL reader (random lines)": (jsonl_lines, check_jsonl),
    "analytics loader (damaged demo games)": (damaged_game(), check_analytics),
}  # fmt: skip


def fuzz(strategy: st.SearchStrategy[Any], check: Callable[[Any], None], max_examples: int) -> int:
    """Run ``check`` on ``max_examples`` generated inputs (no shrinking database, nothing written to
    the checkout); returns the number of inputs tried. A failing input raises, after shrinking."""
    tried = 0

    @settings(max_examples=max_examples, deadline=PER_EXAMPLE, database=None, derandomize=False,
              phases=[Phase.explicit, Phase.generate, Phase.shrink],
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
    @given(strategy)
    def run(x: Any) -> None:
        nonlocal tried
        tried += 1
        check(x)

    run()
    return tried
