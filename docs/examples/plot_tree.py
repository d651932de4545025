"""
A decision tree by information gain, pruned by chi-square
=========================================================

Lecture 000 grows the MPG tree by information gain and then collapses every split whose
chi-square ``p_chance`` exceeds MaxPchance. Here the same on the 392 cars of
:func:`fastml.datasets.load_lecture_mpg` (its categorical attributes), unpruned and with
``max_pchance=0.1``.
"""
import matplotlib.pyplot as plt

import fastml
from fastml.datasets import load_lecture_mpg
from fastml.plot import plot_tree

X, y = load_lecture_mpg(return_X_y=True, as_frame=True)
full = fastml.DecisionTreeClassifier().fit(X, y)
pruned = fastml.DecisionTreeClassifier(max_pchance=0.1).fit(X, y)
print(f"unpruned: {full.tree_.n_leaves} leaves, training accuracy {full.score(X, y):.3f}")
print(f"pruned:   {pruned.tree_.n_leaves} leaves, training accuracy {pruned.score(X, y):.3f}")
print(fastml.export_text(pruned))

# The picture: the pruned tree's top three levels (max_depth=3 grows the same top levels)
top = fastml.DecisionTreeClassifier(max_pchance=0.1, max_depth=3).fit(X, y)
fig, ax = plt.subplots(figsize=(16, 6))
plot_tree(top, ax=ax, title="MPG tree: max_pchance=0.1, top three levels")
plt.show()
