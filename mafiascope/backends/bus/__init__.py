"""The model bus: external processes (any language) play seats over plain HTTP.

``hub.py`` is the broker (``mafiascope bus serve``), ``client.py`` the engine side
(:class:`BusBackend`), ``worker.py`` the reference worker (``mafiascope bus worker``),
``protocol.py`` the JSON bodies. The wire protocol is documented in docs/bus.md.
"""
