"""Decision trees by information gain, chi-square pruning, and random forests."""
from ._classes import DecisionTreeClassifier, DecisionTreeRegressor
from ._forest import RandomForestClassifier, RandomForestRegressor
from ._export import export_text, plot_tree

__all__ = ["DecisionTreeClassifier", "DecisionTreeRegressor", "RandomForestClassifier",
           "RandomForestRegressor", "export_text", "plot_tree"]
