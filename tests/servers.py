"""Loopback servers for tests that drive the synchronous CLI (which runs its own event loop with
``asyncio.run``): the dev server on its own thread, a dead port, and a listener that records what reaches it."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

from mafiascope.backends.devserver import DevServer


@contextlib.contextmanager
def threaded_devserver(**kw: Any) -> Iterator[DevServer]:
    """A started :class:`DevServer` (127.0.0.1, free port) served from a daemon thread."""
    loop = asyncio.new_event_loop()
    box: dict[str, Any] = {}
    ready = threading.Event()

    async def main() -> None:
        box["stop"] = asyncio.Event()
        async with DevServer(host="127.0.0.1", port=0, **kw) as srv:
            box["srv"] = srv
            ready.set()
            await box["stop"].wait()

    th = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    th.start()
    try:
        assert ready.wait(20), "dev server did not start"
        yield box["srv"]
    finally:
        if "stop" in box:
            loop.call_soon_threadsafe(box["stop"].set)
        th.join(10)
        loop.close()


def dead_port() -> int:
    """A loopback port where nothing listens (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Listener:
    """A loopback TCP listener that records whatever reaches it (a stand-in for a visitor's URL)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received = b""
        self.connections = 0
        self._stop = threading.Event()
        self._th = threading.Thread(target=self._run, daemon=True)
        self._th.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            with conn:
                conn.settimeout(1)
                try:
                    self.received += conn.recv(65536)
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._th.join(5)
        self.sock.close()
