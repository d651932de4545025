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


# 000 shows twelve cars twice: raw ("Real-Valued inputs", slide 53; also 001 and 002) and
# discretised ("A small dataset: Miles Per Gallon", slide 17: its first eight and last four
# rows). Those pairs pin the deck's cut points to intervals: mpg 25.0 is bad and 26.0 good,
# displacement 120 low and 121 medium, horsepower 110 medium, weight 2464 low, acceleration
# 16.5 medium. The old cuts (mpg 25, displacement 120, horsepower 110, weight 2400,
# acceleration 16.5) put six of the twelve cars in other categories than the slide's.
DECK_CARS = [  # (raw values of slide 53) -> (mpg, categories of slide 17)
    ((4, 97, 75, 2265, 18.2, 77, "asia"), "good 4 low low low high 75to78 asia"),
    ((6, 199, 90, 2648, 15, 70, "america"), "bad 6 medium medium medium medium 70to74 america"),
    ((4, 121, 110, 2600, 12.8, 77, "europe"), "bad 4 medium medium medium low 75to78 europe"),
    ((8, 350, 175, 4100, 13, 73, "america"), "bad 8 high high high low 70to74 america"),
    ((6, 198, 95, 3102, 16.5, 74, "america"), "bad 6 medium medium medium medium 70to74 america"),
    ((4, 108, 94, 2379, 16.5, 73, "asia"), "bad 4 low medium low medium 70to74 asia"),
    ((4, 113, 95, 2228, 14, 71, "asia"), "bad 4 low medium low low 70to74 asia"),
    ((8, 302, 139, 3570, 12.8, 78, "america"), "bad 8 high high high low 75to78 america"),
    ((4, 120, 79, 2625, 18.6, 82, "america"), "good 4 low low medium high 79to83 america"),
    ((8, 455, 225, 4425, 10, 70, "america"), "bad 8 high high high low 70to74 america"),
    ((4, 107, 86, 2464, 15.5, 76, "europe"), "good 4 low medium low medium 75to78 europe"),
    ((5, 131, 103, 2830, 15.9, 78, "europe"), "bad 5 medium medium medium medium 75to78 europe"),
]
# slide 17's other six rows (no raw values shown): each must be some car's categories
DECK_ONLY_CATEGORIES = ["bad 8 high high high low 70to74 america",
                        "good 8 high medium high high 79to83 america",
                        "bad 8 high high high low 75to78 america",
                        "good 4 low low low low 79to83 america",
                        "bad 6 medium medium medium high 75to78 america",
                        "good 4 medium low low low 79to83 america"]


def test_lecture_mpg_discretises_000s_cars_as_the_slides_do():
    from fastml.datasets import load_lecture_mpg
    raw = load_auto_mpg()
    X, y = load_lecture_mpg(return_X_y=True)
    rows = [" ".join([y[i], *X[i]]) for i in range(len(y))]
    columns = ["cylinders", "displacement", "horsepower", "weight", "acceleration",
               "model_year", "origin"]
    for values, expected in DECK_CARS:
        match = np.ones(len(y), dtype=bool)
        for name, value in zip(columns, values):
            match &= np.asarray(raw.data[name]) == value
        assert match.sum() == 1, values                      # the car is in the bundled file
        assert rows[int(np.flatnonzero(match)[0])] == expected
    for expected in DECK_ONLY_CATEGORIES:
        assert expected in rows
