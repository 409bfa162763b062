"""``mafiascope bus serve`` (the hub) and ``mafiascope bus worker`` (reference worker)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import Any

from .. import CliError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("bus", help="model bus: hub and reference worker (docs/bus.md)")
    sub = p.add_subparsers(dest="bus_command", metavar="SUBCOMMAND")

    s = sub.add_parser("serve", help="run the hub (binds 127.0.0.1 by default)")
    s.add_argument("--host", default="127.0.0.1",
                   help='interface to bind (default 127.0.0.1; "" is refused: say 0.0.0.0 to bind every interface)')
    s.add_argument("--port", type=int, default=8765, help="port (0 = any free port; default 8765)")
    s.add_argument("--token", default=None,
                   help='bearer token, or "${ENV}"; default $MAFIASCOPE_BUS_TOKEN, else a new one is generated and printed')
    s.set_defaults(func=_serve)

    w = sub.add_parser("worker", help="serve a routing key from an OpenAI-compatible endpoint or a bot")
    w.add_argument("--hub", default=None, help="hub URL (default $MAFIASCOPE_BUS_URL or http://127.0.0.1:8765)")
    w.add_argument("--token", default=None, help='bearer token or "${ENV}" (default $MAFIASCOPE_BUS_TOKEN)')
    w.add_argument("--base-url", default=None, help="OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1")
    w.add_argument("--model", default=None, help="model name sent to the endpoint")
    w.add_argument("--api-key", default=None, help='API key reference, e.g. "${OPENAI_API_KEY}" (quote it)')
    w.add_argument("--temperature", type=float, default=None, help="sampling temperature sent to the endpoint when the job gives none")
    w.add_argument("--timeout", type=float, default=120.0, help="seconds per HTTP attempt to the endpoint")
    w.add_argument("--bot", default=None, metavar="PRESET", help="serve offline bot replies instead")
    w.add_argument("--echo", action="store_true", help="answer 'OK: <last line>' (smoke tests)")
    w.add_argument("--serve-as", action="append", default=None, metavar="KEY",
                   help="routing key(s) to serve (repeatable; default: the model name, bot-<preset> or echo)")
    w.add_argument("--concurrency", type=int, default=1, help="jobs handled at once (default 1)")
    w.add_argument("--worker-id", default=None, help="id to register under (default: a new w-<hex> id)")
    w.add_argument("--poll-wait", type=float, default=25.0, help="long-poll seconds (max 55)")
    w.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    w.set_defaults(func=_worker)

    p.set_defaults(func=lambda args: (p.print_help(), 1)[1])


def _token_ref(value: str | None) -> str | None:
    """``--token`` as given (a literal or ``"${VAR}"``), else a reference to ``$MAFIASCOPE_BUS_TOKEN`` when it is set."""
    import os

    return value or ("${MAFIASCOPE_BUS_TOKEN}" if os.environ.get("MAFIASCOPE_BUS_TOKEN") else None)


def _hub_endpoint(name: str, hub: str, value: str | None) -> Any:
    """The hub and its token (resolved for that URL under the key policy: backends/clients.py); a one-line
    CliError when the URL is unusable or the token is refused or set nowhere."""
    from ...backends.base import BackendError
    from ...backends.clients import BusEndpoint
    from ...backends.specs import Source

    try:  # the operator typed it (or set $MAFIASCOPE_BUS_TOKEN for this command)
        return BusEndpoint(name, hub, _token_ref(value), field="--token", source=Source.OPERATOR)
    except BackendError as exc:
        raise CliError(str(exc)) from None


def _serve(args: argparse.Namespace) -> int:
    from ...backends.bus.hub import Hub
    from ...backends.common import wait_for_stop_signal

    if not args.host.strip():
        raise CliError('--host: an empty host would bind every interface; give an address (0.0.0.0 to mean all)')
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port: {args.port} is not a port number (0-65535)")
    from ...backends.bus.hub import new_token

    host = f"[{args.host}]" if ":" in args.host else args.host
    token = _hub_endpoint("bus hub", f"http://{host}:{args.port}", args.token).token
    generated = not token
    token = token or new_token()
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: binding {args.host}: the hub is reachable from other machines (token auth only, plain HTTP)",
              file=sys.stderr)

    async def main() -> None:
        hub = Hub(token, host=args.host, port=args.port)
        try:
            await hub.start()
        except OSError as exc:
            raise CliError(f"cannot bind {args.host}:{args.port}: {exc.strerror or exc}") from None
        print(f"bus hub listening on {hub.url}", flush=True)
        if generated:
            print(f"token: {token}", flush=True)
            print("(workers: --token <token>; engine: export MAFIASCOPE_BUS_TOKEN=<token>)", flush=True)
        try:
            await wait_for_stop_signal()
        finally:
            await hub.stop()

    asyncio.run(main())
    return 0


def _check_worker_numbers(args: argparse.Namespace) -> None:
    """Finite and in range, before anything connects (a NaN poll wait would be refused by the hub forever)."""
    import math

    from ...backends.bus.protocol import MAX_POLL_WAIT_S

    checks = [("--poll-wait", args.poll_wait, 0.0, MAX_POLL_WAIT_S), ("--timeout", args.timeout, 0.001, 3600.0),
              ("--temperature", args.temperature, 0.0, 2.0)]
    for flag, value, lo, hi in checks:
        if value is not None and not (math.isfinite(value) and lo <= value <= hi):
            raise CliError(f"{flag}: {value!r} is not a finite number between {lo:g} and {hi:g}")
    if not 1 <= args.concurrency <= 256:
        raise CliError(f"--concurrency: {args.concurrency} is not between 1 and 256")


def _worker(args: argparse.Namespace) -> int:
    import os

    from ...backends.base import BackendError
    from ...backends.bus.client import DEFAULT_HUB
    from ...backends.bus.worker import HubAuthError, Worker, build_adapter
    from ...backends.common import on_stop_signals

    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stderr)
    _check_worker_numbers(args)
    hub = _hub_endpoint("bus worker", args.hub or os.environ.get("MAFIASCOPE_BUS_URL") or DEFAULT_HUB, args.token)
    if not hub.token:
        raise CliError("a bus token is required: --token T or $MAFIASCOPE_BUS_TOKEN")
    try:
        adapter = build_adapter(base_url=args.base_url, model=args.model, api_key=args.api_key, bot=args.bot,
                                echo=args.echo, timeout=args.timeout, max_concurrency=max(1, args.concurrency),
                                temperature=args.temperature)
    except (ValueError, KeyError, BackendError) as exc:
        raise CliError(str(exc).strip("'\"")) from None
    keys = args.serve_as or [args.model or (f"bot-{args.bot}" if args.bot else "echo")]

    async def main() -> None:
        worker = Worker(hub, adapter, keys, worker_id=args.worker_id, concurrency=args.concurrency,
                        poll_wait=args.poll_wait)
        on_stop_signals(worker.stop)
        print(f"bus worker {worker.worker_id} serving {', '.join(keys)} via {hub.url}", file=sys.stderr, flush=True)
        await worker.run()

    try:
        asyncio.run(main())
    except HubAuthError as exc:
        raise CliError(str(exc)) from None
    return 0
