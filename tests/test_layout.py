"""fastml._core._layout.rows_from_columns: the one copy fit_stream makes from Arrow's column
buffers into the kernels' row layout."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fastml._core._layout import rows_from_columns

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
