"""How long a value's ``json.dumps`` text is, without writing it: the probe scanner's facts about a
stored answer's raw text come from the value's orjson text plus the separators counted here."""

from __future__ import annotations

from typing import Any


def separators(v: Any) -> int:
    """How many item and key separators ``json.dumps`` writes for ``v`` (each one character longer
    with the default separators than with the compact ones)."""
    cls = v.__class__
    if cls is list:
        n = len(v) - 1 if v else 0
        for x in v:
            if x.__class__ is list or x.__class__ is dict:
                n += separators(x)
        return n
    if cls is dict:
        n = 2 * len(v) - 1 if v else 0
        for x in v.values():
            if x.__class__ is list or x.__class__ is dict:
                n += separators(x)
        return n
    return 0


def json_shape(v: Any) -> int:
    """:func:`separators` of ``v``, or -1 when ``v`` holds a float (orjson and ``json.dumps`` may
    write a float differently, e.g. ``1e-05``): without floats the default ``json.dumps`` text of a
    value parsed by orjson is its orjson text with a space after each separator (the two escape
    every string alike), so its length needs no serialising. The objects of a list (the usual
    answer: a list of flat objects) are walked in line rather than by a call each."""
    cls = v.__class__
    if cls is list:
        n = len(v) - 1 if v else 0
        for x in v:
            c = x.__class__
            if c is dict:
                if x:
                    n += 2 * len(x) - 1
                    for y in x.values():
                        c = y.__class__
                        if c is dict or c is list:
                            m = json_shape(y)
                            if m < 0:
                                return -1
                            n += m
                        elif c is float:
                            return -1
            elif c is list:
                m = json_shape(x)
                if m < 0:
                    return -1
                n += m
            elif c is float:
                return -1
        return n
    if cls is dict:
        n = 2 * len(v) - 1 if v else 0
        for x in v.values():
            c = x.__class__
            if c is dict or c is list:
                m = json_shape(x)
                if m < 0:
                    return -1
                n += m
            elif c is float:
                return -1
        return n
    return -1 if cls is float else 0
