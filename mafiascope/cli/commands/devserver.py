"""``mafiascope dev-server``: a loopback OpenAI-compatible server with injectable faults."""

from __future__ import annotations

import argparse
import asyncio
import sys

from .. import CliError, emit, say
from ..options import add_json_flag


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("dev-server", help="loopback OpenAI-compatible server answering with offline bots")
    p.add_argument("--port", type=int, default=8766, help="port on 127.0.0.1 (0 = any free port; default 8766)")
    p.add_argument("--latency-ms", type=float, default=0.0, help="delay before every answer")
    p.add_argument("--p-429", type=float, default=0.0, help="share of calls answered 429 with Retry-After")
    p.add_argument("--p-500", type=float, default=0.0, help="share of calls answered 500")
    p.add_argument("--p-hang", type=float, default=0.0, help="share of calls that never answer (until --hang-s)")
    p.add_argument("--p-drop", type=float, default=0.0, help="share of calls whose connection is dropped")
    p.add_argument("--p-truncate", type=float, default=0.0, help="share of calls whose body stops half-way")
    p.add_argument("--p-garbage", type=float, default=0.0, help="share of calls with a body that is not a completion")
    p.add_argument("--retry-after", type=float, default=1.0, help="Retry-After seconds sent with 429s")
    p.add_argument("--hang-s", type=float, default=3600.0, help="how long a hang lasts")
    p.add_argument("--seed", type=int, default=0, help="seed of the fault schedule")
    p.add_argument("--require-key", default=None, help="answer 401 unless this bearer key is sent")
    p.add_argument("--batch-delay-s", type=float, default=0.0, help="seconds a batch (/v1/batches) takes before it completes")
    p.add_argument("--batch-p-fail", type=float, default=0.0, help="share of batches that fail with no output")
    p.add_argument("--batch-p-expire", type=float, default=0.0, help="share of batches that expire with no output")
    p.add_argument("--batch-p-line-error", type=float, default=0.0, help="share of a batch's requests answered in its error file")
    add_json_flag(p, "print one JSON object (url, settings) when ready")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from ...backends.common import wait_for_stop_signal
    from ...backends.devserver import DevServer

    probs = [args.p_429, args.p_500, args.p_hang, args.p_drop, args.p_truncate, args.p_garbage]
    if any(p < 0 or p > 1 for p in probs) or sum(probs) > 1:
        raise CliError("fault rates must be in [0, 1] and add up to at most 1")
    try:
        server = DevServer(port=args.port, latency_ms=args.latency_ms, p_429=args.p_429, p_500=args.p_500,
                           p_hang=args.p_hang, p_drop=args.p_drop, p_truncate=args.p_truncate,
                           p_garbage=args.p_garbage, retry_after=args.retry_after, hang_s=args.hang_s,
                           seed=args.seed, require_key=args.require_key, batch_delay_s=args.batch_delay_s,
                           batch_p_fail=args.batch_p_fail, batch_p_expire=args.batch_p_expire,
                           batch_p_line_error=args.batch_p_line_error)
    except ValueError as exc:
        raise CliError(str(exc)) from None

    async def main() -> None:
        try:
            await server.start()
        except OSError as exc:
            raise CliError(f"cannot bind 127.0.0.1:{args.port}: {exc.strerror or exc}") from None
        emit(args, {"base_url": server.base_url, "seed": args.seed, "faults": server.p,
                    "latency_ms": args.latency_ms, "retry_after": args.retry_after},
             f"dev server on {server.base_url} (models: bot-<preset>, echo, parrot)")
        sys.stdout.flush()
        try:
            await wait_for_stop_signal()
        finally:
            await server.stop()
            say(args, f"served: {server.stats.as_dict()}")

    asyncio.run(main())
    return 0
