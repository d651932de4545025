"""The bundled data: the Auto MPG file and the lectures' tables, with their published numbers."""
import numpy as np
import pytest

from fastml.datasets import load_auto_mpg, load_tax_table, load_x1x2y_table, load_xor


def test_auto_mpg_has_the_392_complete_cars():
    X, y = load_auto_mpg(return_X_y=True)
    assert X.shape == (392, 6) and y.shape == (392,)
    assert np.isfinite(X).all() and np.isfinite(y).all()
    full = load_auto_mpg(dropna=False)
    assert len(full.target) == 406 and np.isnan(full.target).sum() == 8
    assert np.isnan(full.data["horsepower"]).sum() == 6
    assert set(full.data["origin"]) == {"america", "europe", "asia"}
    assert "Quinlan" in full.DESCR


def test_auto_mpg_as_frame():
    pytest.importorskip("pandas")
    ds = load_auto_mpg(as_frame=True)
    assert ds.data.shape == (392, 8) and list(ds.data.columns[:2]) == ["cylinders",
                                                                       "displacement"]


def test_tax_table_matches_lecture_004():
    X, y = load_tax_table(return_X_y=True)
    assert X.shape == (10, 3) and (y == "No").sum() == 7           # P(No) = 7/10
    no = y == "No"
    assert (X[no, 0] == "Yes").sum() == 3                          # P(Refund=Yes|No) = 3/7
    assert (X[no, 1] == "Married").sum() == 4                      # P(Married|No) = 4/7
    income = X[no, 2].astype(float)
    assert income.mean() == 110 and income.var(ddof=1) == 2975    # 004's mean and variance
    X7, _ = load_tax_table(return_X_y=True, drop_tid=7)
    assert X7.shape == (9, 3)


def test_x1x2y_and_xor_tables():
    X, y = load_x1x2y_table(return_X_y=True)
    assert X.shape == (6, 2) and list(y).count("T") == 5
    X, y = load_xor()
    np.testing.assert_array_equal(y, (X[:, 0] != X[:, 1]).astype(int))


@pytest.mark.parametrize("tid", [0, 11, -1, 7.0, "7", True, np.True_])
def test_tax_table_refuses_a_tid_it_does_not_have(tid):
    """drop_tid=11 used to drop nothing, silently (and True meant Tid 1)."""
    with pytest.raises(ValueError, match=r"drop_tid must be one of the table's Tids 1-10"):
        load_tax_table(drop_tid=tid)


def test_tax_table_drops_exactly_the_named_tid():
    X, y = load_tax_table(return_X_y=True)
    for tid in (1, np.int64(7), 10):
        X_less, y_less = load_tax_table(return_X_y=True, drop_tid=tid)
        keep = np.arange(10) != int(tid) - 1
        np.testing.assert_array_equal(X_less, X[keep])
        np.testing.assert_array_equal(y_less, y[keep])


def test_tax_table_drop_tid_is_hinted_as_an_int():
    import typing
    from fastml import _typing
    from fastml.datasets import _tables
    hints = typing.get_type_hints(_tables.load_tax_table, {**vars(_tables), **vars(_typing)})
    assert hints["drop_tid"] == typing.Optional[int]


@pytest.mark.parametrize("name", ["load_auto_mpg", "load_lecture_mpg", "load_tax_table",
                                  "load_x1x2y_table"])
def test_as_frame_gives_a_frame_and_a_series_both_ways(name):
    # load_auto_mpg(as_frame=True, return_X_y=True) gave two arrays, and the Dataset's
    # target stayed an array for the mpg loaders (an outside audit)
    pd = pytest.importorskip("pandas")
    from fastml import datasets
    load = getattr(datasets, name)
    X, y = load(as_frame=True, return_X_y=True)
    data = load(as_frame=True)
    assert isinstance(X, pd.DataFrame) and isinstance(y, pd.Series)
    assert isinstance(data.data, pd.DataFrame) and isinstance(data.target, pd.Series)
    assert y.name == data.target_name == data.target.name
    plain = load(return_X_y=True)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(plain[1]))
    assert X.shape == np.shape(plain[0])
