"""JSON extraction and truncation repair of probe answers (docs/metrics.md §3.2).

The extractor moved to :mod:`mafiascope.probes.parsing` so the probe engine (recording
time) and analytics (repaired mode) share one implementation; this module re-exports it.
Analytics uses only the strict extractor; the probe engine's lenient recording-time pass
(``parse_answer``) is not applied here. What each parse mode counts: docs/report_schema.md.
"""

from __future__ import annotations

from ..probes.parsing import extract_json, is_transport_error

__all__ = ["extract_json", "is_transport_error"]
