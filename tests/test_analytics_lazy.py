"""The warm Corpus reads its tables lazily from the Parquet cache, column by column: every table,
every column and every derived frame must equal what an eager load (no cache) builds."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mafiascope.analytics.corpus import LAZY_TABLES, Cached, load_corpus, prepare_corpus

_X = Cached("test_x")

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
EN = ROOT / "data" / "corpus" / "mafiascope_en_demo"


def _same_tables(a, b) -> None:
    pd.testing.assert_frame_equal(a.games, b.games, check_exact=True)
    for t in LAZY_TABLES:
        pd.testing.assert_frame_equal(getattr(a, t), getattr(b, t), check_exact=True, obj=t)


@pytest.mark.parametrize("kw", [{"probed_only": False}, {"probed_only": True, "include_forks": True},
                                {"manifest": ["demo-classic-02", "demo-classic-01"], "probed_only": False}])
def test_lazy_tables_equal_eager_tables(tmp_path, kw):
    sources = [DEMO, EN]
    eager = load_corpus(sources, use_cache=False, **kw)
    prepare_corpus(sources, cache_dir=tmp_path / "cache")
    lazy = load_corpus(sources, cache_dir=tmp_path / "cache", **kw)
    assert all(lazy._tables[t]._frame is None for t in LAZY_TABLES)  # nothing but games read yet
    for t in LAZY_TABLES:
        assert lazy.n_rows(t) == len(getattr(eager, t))
    assert all(lazy._tables[t]._frame is None for t in LAZY_TABLES)
    # columns asked for on their own equal the eager table's, before and after the whole table is read
    cols = ["g", "seat", "probe_id", "eff_kind", "timestamp"]
    pd.testing.assert_frame_equal(lazy.cols("probes", cols), eager.probes[cols], check_exact=True)
    _same_tables(lazy, eager)
    pd.testing.assert_frame_equal(lazy.cols("probes", cols), eager.probes[cols], check_exact=True)
    np.testing.assert_array_equal(lazy.seat_array("role_code"), eager.seat_array("role_code"))
    # (the text column's dtype differs without a cache, as before: values compared)
    pd.testing.assert_frame_equal(lazy.event_texts(), eager.event_texts(), check_exact=True, check_dtype=False)


def test_release_reads_the_same_rows_again(tmp_path):
    c = load_corpus(DEMO, cache_dir=tmp_path / "cache", probed_only=False)
    before = {t: getattr(c, t) for t in LAZY_TABLES}
    rows = c.game_rows("probes", 3)
    c.release(*LAZY_TABLES)
    assert all(c._tables[t]._frame is None for t in LAZY_TABLES)
    for t in LAZY_TABLES:
        pd.testing.assert_frame_equal(getattr(c, t), before[t], check_exact=True)
    pd.testing.assert_frame_equal(c.game_rows("probes", 3), rows, check_exact=True)


def test_loaded_corpus_keeps_its_rows_when_the_cache_is_rebuilt(tmp_path):
    """The cache files a corpus opened stay readable (and unchanged) when a later load replaces them."""
    src = tmp_path / "games"
    shutil.copytree(DEMO, src)
    cache = tmp_path / "cache"
    eager = load_corpus(src, use_cache=False, probed_only=False)
    c = load_corpus(src, cache_dir=cache, probed_only=False)
    shutil.rmtree(src / "demo-classic-01")
    assert prepare_corpus(src, cache_dir=cache) == 0  # nothing to parse: the vanished game's rows are dropped
    later = load_corpus(src, cache_dir=cache, probed_only=False)
    assert later.m == c.m - 1
    _same_tables(c, eager)


def test_unknown_column_is_named(tmp_path):
    c = load_corpus(DEMO, cache_dir=tmp_path / "cache", probed_only=False)
    with pytest.raises(KeyError, match="probes: no column"):
        c.cols("probes", ["g", "no_such_column"])


def test_calibration_obs_narrow_equals_the_committed_items(tmp_path):
    from mafiascope.analytics.f1 import f1_items
    from mafiascope.analytics.f2 import N_BINS, calibration_obs
    from mafiascope.analytics.modes import Mode

    c = load_corpus([DEMO, EN], cache_dir=tmp_path / "cache", probed_only=False)
    for mode in (Mode(boot=0), Mode(boot=0, compat="mafiascope-2026-07")):
        it = f1_items(c, mode)
        conf = it["conf"].to_numpy()
        df = it[it["committed"].to_numpy() & ~np.isnan(conf) & (conf >= 0) & (conf <= 100)]
        old = df.assign(bin=np.minimum(N_BINS - 1, np.floor(df["conf"].to_numpy() / 20).astype(int)),
                        outcome=df["correct"].astype(float))
        new = calibration_obs(c, mode)
        assert len(new) > 20
        for col in new.columns:
            np.testing.assert_array_equal(new[col].to_numpy(), old[col].to_numpy(), err_msg=col)


def test_find_game_dirs_resolves_like_path_resolve(tmp_path):
    from mafiascope.analytics.corpus import find_game_dirs

    src = tmp_path / "real"
    shutil.copytree(DEMO, src)
    (tmp_path / "link").symlink_to(src, target_is_directory=True)
    (src / "linked-game").symlink_to(src / "demo-classic-01", target_is_directory=True)
    sub = tmp_path / "sub"
    sub.mkdir()
    for sources in ([tmp_path / "link"], [src], [str(tmp_path / "link" / "demo-*")], [tmp_path / "sub" / ".." / "real"],
                    [src / "demo-classic-02"]):
        want: dict[str, Path] = {}
        from mafiascope.logs.io import is_game_dir, list_game_dirs
        import glob

        for s in sources:
            paths = [Path(p) for p in sorted(glob.glob(str(s)))] if "*" in str(s) else [Path(s)]
            for p in paths:
                for d in list_game_dirs(p) if not is_game_dir(p) else [p]:
                    want[str(d.resolve())] = d.resolve()
        assert find_game_dirs(sources) == list(want.values()), sources


@pytest.mark.parametrize("compat", [None, "mafiascope-2026-07"])
def test_lean_report_equals_the_full_memo_report(tmp_path, compat):
    """A lean report (intermediates dropped after each group, tables released) gives the same values;
    afterwards the corpus holds none of the big intermediates, only small per-seat arrays."""
    import json

    from mafiascope.analytics.modes import Mode
    from mafiascope.analytics.f1 import F1_ARRAYS
    from mafiascope.analytics.report import build_report

    mode = Mode(boot=200, compat=compat)
    a = load_corpus([DEMO, EN], cache_dir=tmp_path / "cache", probed_only=False)
    b = load_corpus([DEMO, EN], cache_dir=tmp_path / "cache", probed_only=False)
    lean = build_report(a, mode, transcripts=compat is not None)
    full = build_report(b, mode, transcripts=compat is not None, lean=False)
    assert json.dumps(lean, sort_keys=True, default=str) == json.dumps(full, sort_keys=True, default=str)
    assert all(k[0].report for k in a.memo_keys()) and F1_ARRAYS in {k[0] for k in b.memo_keys()}
    assert a._tables["pp"]._frame is None and not a._tables["pp"]._cols
    # the report again on the lean corpus: the dropped intermediates are rebuilt the same way
    assert build_report(a, mode, transcripts=compat is not None) == lean


def _spied_lean_report(tmp_path, monkeypatch, compat, table: str, at: str) -> tuple[set[str], list[tuple[str | None, str]]]:
    """A lean report of the demo corpora: the columns of ``table`` loaded after section ``at``'s group,
    and each column of it read, with the last section finished before the read."""
    from mafiascope.analytics import executor, lazy_table, report
    from mafiascope.analytics.modes import Mode

    c = load_corpus([DEMO, EN], cache_dir=tmp_path / "cache", probed_only=False)
    state: dict = {"section": None, "kept": None}
    reads: list[tuple[str | None, str]] = []
    after, read = executor._after_group, lazy_table.LazyTable._read

    def after_spy(scope, group, before, wanted):
        after(scope, group, before, wanted)
        state["section"] = section = group.sections[-1]
        if section == at:
            state["kept"] = set(scope.c._tables[table]._cols)

    def read_spy(self, cols):
        reads.extend((state["section"], k) for k in cols if self.name == table)
        return read(self, cols)

    monkeypatch.setattr(executor, "_after_group", after_spy)
    monkeypatch.setattr(lazy_table.LazyTable, "_read", read_spy)
    report.build_report(c, Mode(boot=50, compat=compat), transcripts=compat is not None)
    return state["kept"], reads


@pytest.mark.parametrize("compat", [None, "mafiascope-2026-07"])
def test_the_sections_after_the_episodes_read_only_the_late_probe_columns(tmp_path, monkeypatch, compat):
    """A lean report keeps only LATE_PROBE_COLUMNS of the probes after the episodes, and personality and
    plans read no other probe column (one they read would be read again: same values, more work)."""
    from mafiascope.analytics.sections import LATE_PROBE_COLUMNS

    kept, reads = _spied_lean_report(tmp_path, monkeypatch, compat, "probes", "episodes")
    assert kept == set(LATE_PROBE_COLUMNS)  # pms, probe_seq, parse_ok and g let go of
    assert [k for s, k in reads if s in ("episodes", "personality")] == []  # nothing read again in personality, plans


@pytest.mark.parametrize("compat", [None, "mafiascope-2026-07"])
def test_the_assessments_confidences_go_after_f3(tmp_path, monkeypatch, compat):
    """F4 reads the role assessments but not their confidences: they are let go of after F3 and not read again."""
    kept, reads = _spied_lean_report(tmp_path, monkeypatch, compat, "ra", "f3")
    assert "conf" not in kept and {"g", "tgt"} <= kept
    assert ("votes", "conf") in reads  # read by F1 (after the votes), once
    assert [(s, k) for s, k in reads if k == "conf"] == [("votes", "conf")]


def test_with_tables_replaces_only_the_named_tables(tmp_path) -> None:
    """A what-if corpus: the named tables replaced, the rest shared, a fresh memo; unknown names refused."""
    import pytest as _pytest

    from mafiascope.analytics.corpus import load_corpus

    c = load_corpus("data/demo", cache_dir=tmp_path)
    c.memo(_X.key(), lambda: 1)
    ev = c.events.iloc[::2].reset_index(drop=True)
    d = c.with_tables(events=ev)
    assert len(d.events) == len(ev) < len(c.events)
    assert d.probes is c.probes and d.m == c.m
    assert d.peek(_X.key()) is None and c.peek(_X.key()) == 1
    with _pytest.raises(KeyError, match="nope"):
        c.with_tables(nope=ev)


@pytest.mark.parametrize("kw", [{"probed_only": False}, {"manifest": ["demo-classic-02", "demo-sheriff-01"], "probed_only": False}])
def test_release_lets_go_of_the_row_selection(tmp_path, kw):
    """A released table keeps no column of its length (its rows' game index goes too; which rows are
    selected stays) and still knows its row count; read again, it gives the same rows. The game
    index is int32 and not kept beside the table's g column."""
    c = load_corpus(DEMO, cache_dir=tmp_path / "cache", **kw)
    before = {t: getattr(c, t) for t in LAZY_TABLES}
    parts = {t: c._tables[t]._parts for t in LAZY_TABLES}
    assert all(p._g is None for ps in parts.values() for p in ps)  # not kept beside the g column
    assert all(p.g.dtype == np.int32 for ps in parts.values() for p in ps)
    c.release_columns("probes", ["g", "seat"])
    assert all(p._known for p in parts["probes"])  # columns kept: the selection stays
    c.release(*LAZY_TABLES)
    assert not any(p._g is not None for ps in parts.values() for p in ps)
    assert all(p._known and (p._sel is None) == ("manifest" not in kw) for ps in parts.values() for p in ps)
    assert all(c.n_rows(t) == len(before[t]) for t in LAZY_TABLES)
    assert not any(p._g is not None for ps in parts.values() for p in ps)  # the count did not read it again
    for t in LAZY_TABLES:
        pd.testing.assert_frame_equal(c.cols(t, ["g"]), before[t][["g"]], check_exact=True, obj=t)
        pd.testing.assert_frame_equal(getattr(c, t), before[t], check_exact=True, obj=t)
    for t in LAZY_TABLES:  # another column first, then g: its game index is read again
        c.release(t)
        cols = [x for x in before[t].columns if x != "g"][:1]
        pd.testing.assert_frame_equal(c.cols(t, cols), before[t][cols], check_exact=True, obj=t)
        assert all(p._g is None for p in parts[t])
        pd.testing.assert_frame_equal(c.cols(t, [*cols, "g"]), before[t][[*cols, "g"]], check_exact=True, obj=t)
