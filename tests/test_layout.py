"""fastml._core._layout: the one copy fit_stream makes from Arrow's column buffers into
the layout of the kernel that reads the chunk (rows, or column-major)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fastml._core._layout import fill_from_columns, rows_from_columns

pytestmark = pytest.mark.kernel


@settings(max_examples=60, deadline=None, derandomize=True)
@given(n_rows=st.integers(0, 3000), n_cols=st.integers(1, 70),
       dtype=st.sampled_from([np.float64, np.float32]), seed=st.integers(0, 2**32 - 1))
def test_rows_from_columns_equals_column_stack(n_rows, n_cols, dtype, seed):
    # sizes around the block size (131072 bytes of output per block) and below it
    columns = [np.random.default_rng(seed + j).normal(size=n_rows).astype(dtype)
               for j in range(n_cols)]
    for c in columns:
        c.setflags(write=False)      # Arrow's buffers are read-only
    out = rows_from_columns(columns)
    assert out.dtype == dtype and out.flags.c_contiguous and out.shape == (n_rows, n_cols)
    np.testing.assert_array_equal(out, np.column_stack(columns) if n_rows else out)


def test_rows_from_columns_keeps_nan_and_reads_strided_columns():
    F = np.asfortranarray(np.arange(12.0).reshape(4, 3))
    F[1, 2] = np.nan
    np.testing.assert_array_equal(rows_from_columns([F[:, j] for j in range(3)]), F)
    strided = np.arange(20.0)[::2]
    np.testing.assert_array_equal(rows_from_columns([strided])[:, 0], strided)


@pytest.mark.parametrize("columns, error, match", [
    ([], ValueError, "at least one column"),
    ([np.zeros(3, dtype=np.int64)], TypeError, "float64 or float32"),
    ([np.zeros(3), np.zeros(4)], ValueError, "one length"),
    ([np.zeros(3), np.zeros(3, dtype=np.float32)], ValueError, "one dtype"),
    ([np.zeros((3, 2))], ValueError, "1-D"),
])
def test_rows_from_columns_refuses_what_it_cannot_copy(columns, error, match):
    with pytest.raises(error, match=match):
        rows_from_columns(columns)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(pieces=st.lists(st.integers(0, 700), min_size=1, max_size=5),
       n_cols=st.integers(1, 40), order=st.sampled_from("CF"),
       dtype=st.sampled_from([np.float64, np.float32]), seed=st.integers(0, 2**32 - 1))
def test_fill_from_columns_piece_by_piece_equals_column_stack(pieces, n_cols, order, dtype,
                                                             seed):
    # fit_stream fills one array from a table's record batches, in either layout
    rng = np.random.default_rng(seed)
    columns = [rng.normal(size=sum(pieces)).astype(dtype) for _ in range(n_cols)]
    out = np.full((sum(pieces) + 2, n_cols), -7.0, dtype=dtype, order=order)
    start = 0
    for m in pieces:
        piece = [c[start:start + m] for c in columns]
        for c in piece:
            c.setflags(write=False)
        fill_from_columns(piece, out, start)
        start += m
    expected = np.column_stack(columns) if start else np.empty((0, n_cols), dtype)
    np.testing.assert_array_equal(out[:start], expected)
    np.testing.assert_array_equal(out[start:], -7.0)     # nothing written past the pieces


@pytest.mark.parametrize("out, start, error, match", [
    (np.zeros((4, 2), dtype=np.float32), 0, TypeError, "float64 array"),
    (np.zeros(4), 0, TypeError, "2-D"),
    ([[0.0, 0.0]] * 4, 0, TypeError, "2-D"),
    (np.zeros((4, 3)), 0, ValueError, "do not fit"),
    (np.zeros((4, 2)), 2, ValueError, "do not fit"),
    (np.zeros((4, 2)), -1, ValueError, "do not fit"),
    (np.zeros((4, 4))[:, ::2], 0, ValueError, "C- or F-contiguous"),
])
def test_fill_from_columns_refuses_what_it_cannot_fill(out, start, error, match):
    with pytest.raises(error, match=match):
        fill_from_columns([np.ones(3), np.ones(3)], out, start)
    read_only = np.zeros((3, 2))
    read_only.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        fill_from_columns([np.ones(3), np.ones(3)], read_only)
    np.testing.assert_array_equal(read_only, 0.0)
