"""mafiascope: an instrument for studying how LLM agents reason about each other in Mafia."""

__version__ = "0.1.0"
