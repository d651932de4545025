"""fastml.info: the lectures' entropy / information gain / IG* / chi-square numbers."""
import numpy as np
import pytest

import fastml
from fastml import info
from fastml.datasets import load_x1x2y_table, load_xor


def maker_table():
    """000's maker x mpg table: america 0 bad / 10 good, asia 2 / 5, europe 2 / 2."""
    counts = {"america": (0, 10), "asia": (2, 5), "europe": (2, 2)}
    maker, mpg = [], []
    for name, (bad, good) in counts.items():
        maker += [name] * (bad + good)
        mpg += ["bad"] * bad + ["good"] * good
    return np.array(maker, dtype=object), np.array(mpg, dtype=object)


def test_001_six_row_table():
    # 001, "Entropy Example", "Conditional Entropy", "Information gain".
    X, y = load_x1x2y_table(return_X_y=True)
    assert round(info.entropy(y), 2) == 0.65
    assert info.conditional_entropy(y, X[:, 0]) == pytest.approx(2 / 6)
    assert round(info.information_gain(y, X[:, 0]), 2) == 0.32


def test_measuring_uncertainty_distributions():
    # 000 slide 27, 001 and 002 "Measuring uncertainty": P(Y) = 1/2, 1/4, 1/8, 1/8 against
    # the uniform 1/4 each: 1/2 * 1 + 1/4 * 2 + 2 * 1/8 * 3 = 1.75 bits < log2 4 = 2 bits.
    assert info.entropy([4, 2, 1, 1], counts=True) == 1.75
    assert info.entropy(list("AAAABBCD")) == 1.75
    assert info.entropy(list("ABCD")) == 2.0


def test_000_eight_row_table_prefers_x1():
    # 000 slide 26 / 001 "Would we prefer to split on X_1 or X_2?" (the eight-row table; the
    # decks print no numbers). Y has 5 T / 3 F: H(Y) = 0.954434. X1 = T gives 4 T (0 bits),
    # X1 = F gives 1 T / 3 F (0.811278): H(Y|X1) = 0.405639, IG = 0.548795. X2 = T gives
    # 3 T / 1 F, X2 = F 2 T / 2 F: H(Y|X2) = 0.905639, IG = 0.048795. X1 it is.
    x1, x2, y = list("TTTTFFFF"), list("TFTFTFTF"), list("TTTTTFFF")
    assert info.entropy(y) == pytest.approx(0.954434, abs=5e-7)
    assert info.conditional_entropy(y, x1) == pytest.approx(0.405639, abs=5e-7)
    assert info.information_gain(y, x1) == pytest.approx(0.548795, abs=5e-7)
    assert info.conditional_entropy(y, x2) == pytest.approx(0.905639, abs=5e-7)
    assert info.information_gain(y, x2) == pytest.approx(0.048795, abs=5e-7)
    X = np.array([x1, x2], dtype=object).T
    assert info.information_gain_table(X, y, feature_names=["X1", "X2"]).best().startswith("X1")
    stump = fastml.DecisionTreeClassifier(max_depth=1).fit(X, y)
    assert stump.tree_.feature[0] == 0
    assert stump.tree_.gain[0] == pytest.approx(0.548795, abs=5e-7)


def test_000_maker_table_and_chi_square():
    # 000, "A chi-square test": H(mpg)=0.702467, H(mpg|maker)=0.478183, IG=0.224284, p=7.2%.
    maker, mpg = maker_table()
    assert info.entropy(mpg) == pytest.approx(0.702467, abs=5e-7)
    assert info.conditional_entropy(mpg, maker) == pytest.approx(0.478183, abs=5e-7)
    assert info.information_gain(mpg, maker) == pytest.approx(0.224284, abs=5e-7)
    # the per-maker column: H(mpg | america) = 0, asia 0.863121, europa 1
    for name, h in (("america", 0.0), ("asia", 0.863121), ("europe", 1.0)):
        assert info.entropy(mpg[maker == name]) == pytest.approx(h, abs=5e-7)
    stat, p = info.chi2_test([[0, 10], [2, 5], [2, 2]])
    assert float(f"{p:.2g}") == 0.072
    assert stat == pytest.approx(5.25)


def test_entropy_counts_forms_agree():
    assert info.entropy([5, 1], counts=True) == pytest.approx(info.entropy(list("tttttf")))
    assert info.entropy({"a": 1, "b": 1}) == pytest.approx(1.0)
    assert info.entropy([1, 1, 1, 1], counts=True) == pytest.approx(2.0)
    assert info.entropy([7], counts=True) == 0.0
    assert info.entropy(list("aabb"), base=np.e) == pytest.approx(np.log(2))


def test_xor_gains_are_zero():
    # 000, "The problem with Base Case 3": every attribute of XOR has IG 0.
    X, y = load_xor()
    assert info.information_gain(y, X[:, 0]) == pytest.approx(0.0)
    assert info.information_gain(y, X[:, 1]) == pytest.approx(0.0)


def test_best_threshold_against_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.integers(0, 8, size=40).astype(float)
        y = rng.integers(0, 3, size=40)
        t, gain = info.best_threshold(x, y)
        values = np.unique(x)
        mids = values[:-1] + np.diff(values) / 2
        gains = [info.information_gain(y, x, threshold=m) for m in mids]
        assert gain == pytest.approx(max(gains))
        assert t == mids[int(np.argmax(np.array(gains) >= max(gains) - info.GAIN_TIE))]
        assert t in mids  # the lectures' x_i + (x_{i+1} - x_i)/2


def reference_best_threshold(x, y):
    """Brute force: every cut between distinct known values, H(Y|X:t) from the two sides'
    class lists; the first cut within info.GAIN_TIE bits of the best wins."""
    known = ~np.isnan(x)
    x, y = x[known], y[known]

    def h(labels):
        p = np.unique(labels, return_counts=True)[1] / len(labels)
        return -(p * np.log2(p)).sum()

    values = np.unique(x)
    cuts = [info.split_point(lo, hi) for lo, hi in zip(values[:-1], values[1:])]
    gains = [h(y) - (x < t).mean() * h(y[x < t]) - (x >= t).mean() * h(y[x >= t])
             for t in cuts]
    if not cuts:
        return np.nan, 0.0
    best = next(i for i, g in enumerate(gains) if g >= max(gains) - info.GAIN_TIE)
    return cuts[best], gains[best]


def test_threshold_between_values_whose_gap_overflows_warns_nothing():
    # the gap 3.4e308 overflows: split_point takes lo/2 + hi/2 = 0, as the compiled builder
    # does, and numpy's scalar subtraction warned about that handled overflow
    import warnings
    X = np.array([[-1.7e308], [1.7e308]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert info.best_threshold(X[:, 0], [0, 1]) == (0.0, 1.0)
        assert info.split_point(np.float64(-1.7e308), np.float64(1.7e308)) == 0.0
        table = info.information_gain_table(X, [0, 1])
    assert table.rows[0]["values"] == ["< 0", ">= 0"]
    assert fastml.DecisionTreeClassifier().fit(X, [0, 1]).tree_.threshold[0] == 0.0


def test_best_threshold_equals_a_brute_force_reference_with_ties_and_nan():
    rng = np.random.default_rng(1)
    for trial in range(200):
        n = int(rng.integers(1, 50))
        x = rng.integers(0, int(rng.integers(1, 9)), size=n).astype(float)  # ties
        if trial % 4 == 0:
            x = rng.normal(size=n)
        x[rng.random(n) < 0.15] = np.nan  # missing: left out
        if np.isnan(x).all():
            continue
        y = np.array(list("abcd"))[rng.integers(0, int(rng.integers(1, 5)), size=n)]
        t, gain = info.best_threshold(x, y)
        t_ref, gain_ref = reference_best_threshold(x, y)
        assert gain == pytest.approx(gain_ref, abs=1e-12)
        assert t == t_ref or (np.isnan(t) and np.isnan(t_ref))


def test_best_threshold_on_100k_rows_is_the_compiled_trees_root_split():
    from fastml.tree import DecisionTreeClassifier
    rng = np.random.default_rng(0)
    x = np.round(rng.normal(size=100_000), 3)  # ~6,000 distinct values, many ties
    y = (x + rng.normal(size=x.size) > 0.3).astype(int) + (rng.random(x.size) < 0.2)
    t, gain = info.best_threshold(x, y)
    root = DecisionTreeClassifier(max_depth=1).fit(x.reshape(-1, 1), y).tree_
    assert root.threshold[0] == t
    assert root.gain[0] == pytest.approx(gain, abs=1e-9)


def test_best_threshold_many_classes_take_the_blocked_path(monkeypatch):
    # a target with many classes is counted in blocks of classes (bounded memory): same answer
    rng = np.random.default_rng(2)
    x, y = rng.integers(0, 30, 300).astype(float), rng.integers(0, 100, 300)
    whole = info.best_threshold(x, y)
    monkeypatch.setattr(info, "_MAX_TABLE", 7)
    blocked = info.best_threshold(x, y)
    assert blocked[0] == whole[0] and blocked[1] == pytest.approx(whole[1], abs=1e-12)
    assert whole == pytest.approx(reference_best_threshold(x, y), abs=1e-12)


def test_chi2_matches_scipy():
    from scipy.stats import chi2_contingency
    table = np.array([[3, 9, 1], [7, 2, 4]])
    stat, p = info.chi2_test(table)
    ref = chi2_contingency(table, correction=False)
    assert stat == pytest.approx(ref.statistic) and p == pytest.approx(ref.pvalue)


def test_missing_values_are_left_out():
    y = np.array([0, 0, 1, 1, 1])
    x = np.array(["a", "a", "b", None, "b"], dtype=object)
    assert info.information_gain(y, x) == pytest.approx(1.0)  # on the 4 known rows


def test_real_thresholds_are_midpoints_where_000s_table_prints_the_upper_value():
    # 000's real-valued table prints "cylinders < 5" on 40 records that include a 5-cylinder
    # car (slide 17's last row): its thresholds are the upper values x_{i+1}. fastml prints
    # 000's own split point x_i + (x_{i+1} - x_i)/2 = 4.5; both put every row on the same side.
    cylinders = np.array([4.0, 4.0, 4.0, 5.0, 6.0, 8.0, 8.0, 4.0])
    mpg = np.array(["good", "good", "good", "bad", "bad", "bad", "bad", "good"])
    table = info.information_gain_table(cylinders[:, None], mpg, feature_names=["cylinders"])
    assert table.rows[0]["values"] == ["< 4.5", ">= 4.5"]
    assert info.best_threshold(cylinders, mpg) == (4.5, 1.0)
    assert info.information_gain(mpg, cylinders, threshold=5.0) == table.rows[0]["gain"] == 1.0


def test_information_gain_table_prints_the_lecture_table():
    maker, mpg = maker_table()
    X = np.column_stack([maker, np.arange(len(maker), dtype=float)]).astype(object)
    X[:, 1] = X[:, 1].astype(float)
    table = info.information_gain_table(X, mpg, feature_names=["maker", "rank"])
    text = str(table)
    assert "Information gains using the training set (21 records)" in text
    assert "0.224284" in text
    maker_row = table.rows[0]
    assert maker_row["kind"] == "categorical"
    assert maker_row["distribution"] == [[0, 10], [2, 5], [2, 2]]
    assert table.rows[1]["kind"] == "real" and table.rows[1]["values"][0].startswith("< ")



def test_information_gain_table_columns_never_run_together():
    """A distribution wider than its column (twelve classes) ran into the gain: '1 1' and
    '0.81' printed as '1 10.81'; a long name ran into its value the same way."""
    y = np.arange(12).repeat(2)
    x = np.tile([0.0, 1.0], 12)
    X = np.column_stack([x, np.where(y < 6, "low", "high")]).astype(object)
    X[:, 0] = X[:, 0].astype(float)
    names = ["a_rather_long_feature_name", "level"]
    table = info.information_gain_table(X, y, feature_names=names)
    lines = str(table).splitlines()
    header = lines[3]
    for row in table.rows:
        line = next(text for text in lines if text.startswith(row["name"]))
        fields = line.split()
        assert fields[0] == row["name"] and fields[-1] == f"{row['gain']:.6g}"
        assert line.rindex(fields[-1]) == header.index("Info Gain")
        assert fields[1:-1] == row["values"][0].split() + list(map(str, row["distribution"][0]))


def test_bad_input():
    with pytest.raises(ValueError, match="different lengths"):
        info.information_gain([0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="non-negative"):
        info.entropy([-1, 2], counts=True)
    with pytest.raises(ValueError, match="2-D"):
        info.chi2_test([1, 2, 3])


def test_best_threshold_uses_the_builders_tie_rule(monkeypatch):
    """One tie rule (info.GAIN_TIE) for best_threshold and the compiled builder: with a wide
    tolerance, the first cut within it wins, as the brute-force reference says; with the real
    one, the root split of a stump agrees with best_threshold on data with exact ties."""
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    y = np.array([0, 0, 1, 0, 1, 1, 1, 1])
    monkeypatch.setattr(info, "GAIN_TIE", 0.2)
    assert info.best_threshold(x, y) == pytest.approx(reference_best_threshold(x, y))
    assert info.best_threshold(x, y)[0] == 1.5  # not 4.5, the cut of the largest gain
    monkeypatch.undo()
    assert info.GAIN_TIE == 1e-10
    x = np.array([0.0, 1.0, 2.0, 3.0])  # cuts 0.5 and 2.5 tie exactly
    y = np.array([0, 1, 1, 0])
    stump = fastml.DecisionTreeClassifier(max_depth=1).fit(x[:, None], y)
    assert stump.tree_.threshold[0] == info.best_threshold(x, y)[0] == 0.5


def test_entropy_and_chi2_are_stable_for_huge_counts():
    """Counts near 1e308 overflowed the total to inf: entropy returned NaN. Entropy depends on
    the proportions only; chi-square scales with the table."""
    assert info.entropy([1e308, 1e308], counts=True) == pytest.approx(1.0)
    assert info.entropy([3e307, 1e307], counts=True) == pytest.approx(info.entropy([3, 1], counts=True))
    assert info.entropy({"a": 1e308, "b": 0.0}) == 0.0
    small = info.chi2_test([[30.0, 10.0], [10.0, 30.0]])
    huge = info.chi2_test([[3e307, 1e307], [1e307, 3e307]])
    assert huge[0] == pytest.approx(small[0] * 1e306) and huge[1] == 0.0
    assert info.chi2_test([[1e308, 1e308], [1e308, 1e308]]) == (0.0, 1.0)


def test_information_gain_table_names_an_all_empty_column():
    import pandas as pd
    X = pd.DataFrame({"size": [1.0, 2.0, 3.0, 4.0], "notes": [None] * 4})
    with pytest.raises(ValueError, match="'notes' has no values"):
        info.information_gain_table(X, ["a", "a", "b", "b"])
    with pytest.raises(ValueError, match="'x1' has no values"):
        info.information_gain_table(np.array([[1.0, np.nan], [2.0, np.nan]]), [0, 1],
                                    feature_names=["x0", "x1"])


# ------------------------------------------------ missing values: NaiveBayes' rule, one function
def _missing_cases():
    pd = pytest.importorskip("pandas")
    return {
        "None": np.array(["a", None, "b", "b"], dtype=object),
        "float32 NaN among objects": np.array(["a", np.float32("nan"), "b", "b"], dtype=object),
        "pd.NA (string dtype)": pd.Series(["a", None, "b", "b"], dtype="string"),
        "pd.NA (Int64)": pd.Series([1, None, 2, 2], dtype="Int64"),
        "pd.NaT among objects": np.array([pd.Timestamp("2020-01-01"), pd.NaT,
                                          pd.Timestamp("2021-01-01"),
                                          pd.Timestamp("2021-01-01")], dtype=object),
    }


@pytest.mark.parametrize("case", ["None", "float32 NaN among objects", "pd.NA (string dtype)",
                                  "pd.NA (Int64)", "pd.NaT among objects"])
def test_missing_x_is_what_naive_bayes_leaves_out(case):
    """pd.NA raised "boolean value of NA is ambiguous", NaT and a np.float32 NaN among objects
    were counted as values (IG 1.0 instead of 0.918 on y = [0, 0, 1, 1])."""
    from fastml import NaiveBayes
    x = _missing_cases()[case]
    y = [0, 0, 1, 1]
    known = [0, 1, 1]  # row 1 left out: x = (u, v, v)
    expected_ig = info.entropy(known) - 0.0
    assert expected_ig == pytest.approx(0.9182958340544894, rel=1e-15)
    assert info.information_gain(y, x) == pytest.approx(expected_ig, rel=1e-15)
    assert info.conditional_entropy(y, x) == 0.0
    assert info.information_gain(y, x, base=np.e) == pytest.approx(expected_ig * np.log(2))
    # NaiveBayes counts the same three rows: one missing cell, not a fourth value
    frame = x.to_frame() if hasattr(x, "to_frame") else np.asarray(x).reshape(-1, 1)
    counts = NaiveBayes(categorical_features=[0]).fit(frame, y).category_count_[0]
    assert counts.sum() == 3


def test_information_gain_table_leaves_out_pandas_missing_values():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"s": pd.Series(["a", None, "b", "b"], dtype="string"),
                      "r": pd.Series([1.0, None, 2.0, 2.0], dtype="Float64")})
    table = info.information_gain_table(X, [0, 0, 1, 1])
    assert [row["gain"] for row in table.rows] == pytest.approx([0.9182958340544894] * 2)


# NaT in a datetime64 column was a value for _tabular.missing_mask (np.isnan was only asked
# of floats), so NaiveBayes counted it as a category and info agreed (an outside audit)
def test_nat_in_a_datetime_column_is_missing():
    pd = pytest.importorskip("pandas")
    x = pd.Series(pd.to_datetime(["2020-01-01", None, "2021-01-01", "2021-01-01"]))
    assert info.information_gain([0, 0, 1, 1], x) == pytest.approx(0.9182958340544894)


@pytest.mark.parametrize("labels", [
    ["a", None, None], [np.nan, np.nan, 1.0], np.array([0.0, np.float32("nan")], dtype=object)])
def test_missing_labels_are_a_value_error_naming_them(labels):
    """A label cannot be missing (fit refuses it); entropy([nan, nan, 1]) counted NaN as a class
    and entropy(["a", None, None]) failed inside numpy's sort."""
    with pytest.raises(ValueError, match=r"labels contains NaN or other missing labels \(None"):
        info.entropy(labels)
    x = ["u"] * len(labels)
    for fn in (info.conditional_entropy, info.information_gain):
        with pytest.raises(ValueError, match=r"y contains NaN or other missing labels \(None"):
            fn(labels, x)
    with pytest.raises(ValueError, match="y contains NaN or other missing labels"):
        info.best_threshold(np.arange(len(labels), dtype=float), labels)
    with pytest.raises(ValueError, match="y contains NaN or other missing labels"):
        info.information_gain_table(np.arange(len(labels), dtype=float)[:, None], labels)


@pytest.mark.parametrize("base", [1, 1.0, 0, -2, float("inf"), float("nan"), True, "2"])
def test_the_base_of_the_logarithm_is_checked(base):
    """base=1 gave inf, base=-2 NaN, base=0 -0.0."""
    for call in (lambda: info.entropy([0, 1], base=base),
                 lambda: info.entropy([1, 1], counts=True, base=base),
                 lambda: info.conditional_entropy([0, 1], [0, 1], base=base),
                 lambda: info.information_gain([0, 1], [0, 1], base=base),
                 lambda: info.best_threshold([0.0, 1.0], [0, 1], base=base)):
        with pytest.raises(ValueError, match="base"):
            call()


def test_valid_bases_give_the_entropy_in_that_unit():
    assert info.entropy([0, 1], base=2) == 1.0
    assert info.entropy([0, 1], base=np.e) == pytest.approx(np.log(2), rel=1e-15)
    assert info.entropy([0, 1, 2, 3], base=4) == pytest.approx(1.0, rel=1e-15)
    assert info.entropy([0, 1], base=0.5) == pytest.approx(-1.0, rel=1e-15)
    assert info.entropy(["a"]) == 0.0 and str(info.entropy(["a"])) == "0.0"


def test_best_threshold_is_between_examples_of_different_classes():
    # 001 "The set of possible thresholds": "only splits between examples of different classes
    # matter" (Fayyad & Irani: the entropy-minimizing cut is a boundary point). The chosen cut
    # never separates two runs of values that hold one and the same single class.
    rng = np.random.default_rng(0)
    for _ in range(500):
        n = int(rng.integers(2, 25))
        x = rng.integers(0, int(rng.integers(2, 12)), size=n).astype(float)
        y = rng.integers(0, int(rng.integers(2, 4)), size=n)
        t, gain = info.best_threshold(x, y)
        if np.isnan(t) or gain <= 0:
            continue
        below, above = set(y[x == x[x < t].max()]), set(y[x == x[x >= t].min()])
        assert not (len(below) == 1 and below == above), (x, y, t)
