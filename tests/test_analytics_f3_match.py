"""F3's matching by one sorted search per query equals the rule read literally (docs/metrics.md §6):
B's latest usable entry about A at or before A's probe key, the last entry of a record about a
target, of equal keys the later probe row."""

from __future__ import annotations

import numpy as np
import pytest

from mafiascope.analytics import f3_match as M


def _by_rule(q, it, r, ra, okey) -> tuple[list[int], list[int]]:
    out_q, out_r = [], []
    for i in q.tolist():
        best = None
        for pos, j in enumerate(r.tolist()):
            if (ra["g"][j], ra["seat"][j], ra["tgt"][j]) != (it["g"][i], it["tgt"][i], it["seat"][i]):
                continue
            if okey[ra["pi"][j]] <= okey[it["pi"][i]]:
                rank = (okey[ra["pi"][j]], ra["pi"][j], pos)  # key, then probe row, then the record's last entry
                best = (rank, j) if best is None or rank > best[0] else best
        if best is not None:
            out_q.append(i)
            out_r.append(best[1])
    return out_q, out_r


def _items(rng: np.random.Generator, n: int, pi_of_game: list[np.ndarray], seats: int) -> dict[str, np.ndarray]:
    g = np.sort(rng.integers(0, len(pi_of_game), n)).astype(np.int32)
    pi = np.array([rng.choice(pi_of_game[x]) for x in g.tolist()], dtype=np.int32)
    order = np.lexsort((pi, g))  # items stored by game and probe row, as the corpus stores them
    return {"g": g[order], "pi": pi[order], "seat": rng.integers(0, seats, n).astype(np.int8),
            "tgt": rng.integers(0, seats, n).astype(np.int8)}


@pytest.mark.parametrize("seed", range(6))
def test_match_block_equals_the_rule(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m, seats = 4, 4
    per_game = rng.integers(1, 9, m)
    okey = rng.integers(0, 5, int(per_game.sum())).astype(np.int64) * 1000  # few keys: many ties between probes
    bounds = np.r_[0, np.cumsum(per_game)]
    pi_of_game = [np.arange(bounds[x], bounds[x + 1]) for x in range(m)]
    it, ra = _items(rng, 60, pi_of_game, seats), _items(rng, 80, pi_of_game, seats)
    q = np.flatnonzero(it["seat"] != it["tgt"]).astype(np.int32)
    r = np.flatnonzero(rng.random(len(ra["g"])) < 0.8)  # some entries unusable
    lo = 1  # a block of games 1..3
    q, r = q[it["g"][q] >= lo], r[ra["g"][r] >= lo]
    got_q, got_r = M.match_block(q, it, r, ra, okey, seats, lo)
    want_q, want_r = _by_rule(q, it, r, ra, okey)
    assert got_q.tolist() == want_q and got_r.tolist() == want_r
    assert len(want_q) > 3  # the draw matched something


def test_match_block_without_rows() -> None:
    it = {k: np.zeros(0, dtype=np.int32) for k in ("g", "pi", "seat", "tgt")}
    q, r = M.match_block(np.zeros(0, dtype=np.int32), it, np.zeros(0, dtype=np.int64), it, np.zeros(0, np.int64), 1, 0)
    assert len(q) == len(r) == 0


@pytest.mark.parametrize("chunk", [1, 3, 1 << 20])
def test_rows_where_equals_flatnonzero(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    mask = np.random.default_rng(chunk).random(50) < 0.4
    monkeypatch.setattr(M, "_CHUNK", chunk)
    got = M.rows_where(len(mask), lambda s: mask[s])
    assert got.dtype == np.int32 and got.tolist() == np.flatnonzero(mask).tolist()
    assert len(M.rows_where(0, lambda s: mask[s])) == 0


def test_rows_of_a_block_of_games_by_slices_equal_by_masks() -> None:
    g = np.repeat(np.arange(6), [3, 0, 4, 1, 5, 2]).astype(np.int32)
    rows = np.flatnonzero(np.arange(len(g)) % 3 != 1).astype(np.int32)
    for lo, hi in ((0, 1), (1, 3), (2, 6), (5, 6), (0, 6)):
        by_slices = M._in_games(rows, g, lo, hi, True)
        assert by_slices.tolist() == M._in_games(rows, g[rows], lo, hi, False).tolist()


def test_search_equals_searchsorted_and_keeps_the_haystack_dtype(monkeypatch: pytest.MonkeyPatch) -> None:
    """``search`` gives numpy's answer; a needle that fits is cast to the haystack's dtype (else numpy
    converts the whole haystack on every call: 0.4 s of F3's matching at 10,000 games)."""
    a = np.array([-3, 0, 0, 2, 7, 7, 9], dtype=np.int32)
    needles = [np.int64(0), 7, (0, 8), np.array([-5, 2, 100], dtype=np.int64), np.int64(2**40), np.array([], dtype=np.int64),
               np.uint8(7)]
    for v in needles:
        for side in ("left", "right"):
            assert M.search(a, v, side).tolist() == np.searchsorted(a, v, side=side).tolist(), (v, side)
    seen: list[np.dtype] = []
    real = np.searchsorted
    monkeypatch.setattr(M.np, "searchsorted", lambda x, v, side="left": seen.append(np.asarray(v).dtype) or real(x, v, side=side))
    M.search(a, np.int64(5))
    M.search(a, (1, 2))
    M.search(a, np.int64(2**40))  # does not fit: numpy's own conversion
    assert seen == [np.int32, np.int32, np.int64]
