"""Reading probe answers: the code lives in :mod:`mafiascope.logs.answers` (the compact probe
records re-parse stored replies there); this module keeps the probe engine's import path."""

from __future__ import annotations

from ..logs.answers import (PARSER_VERSION, ParsedAnswer, chain_text, extract_json, finite, is_transport_error,
                            jsonish_to_json, parse_answer, strip_think)

__all__ = ["PARSER_VERSION", "ParsedAnswer", "chain_text", "extract_json", "finite", "is_transport_error",
           "jsonish_to_json", "parse_answer", "strip_think"]
