"""
Decision regions of four classifiers
====================================

The class each model predicts over the plane of two features of the XOR-like data of lecture
003 (:func:`fastml.datasets.load_xor` gives the four corners; here a noisy version with more
points): a linear model cannot separate it, the degree-2 kernel perceptron and a tree can.
"""
import matplotlib.pyplot as plt
import numpy as np

import fastml
from fastml.plot import plot_decision_regions

rng = np.random.default_rng(0)
X = rng.uniform(-1, 1, size=(400, 2))
y = np.where((X[:, 0] > 0) ^ (X[:, 1] > 0), "odd", "even")

models = {
    "LogisticRegression (linear)": fastml.LogisticRegression(),
    "KernelPerceptron (poly, degree 2)": fastml.KernelPerceptron(kernel="poly", degree=2,
                                                                 coef0=0.0, max_iter=5,
                                                                 random_state=0),
    "DecisionTreeClassifier (max_depth=2)": fastml.DecisionTreeClassifier(max_depth=2),
    "GaussianNB": fastml.GaussianNB(),
}
fig, axes = plt.subplots(2, 2, figsize=(10, 9))
for ax, (name, model) in zip(axes.ravel(), models.items()):
    model.fit(X, y)
    plot_decision_regions(model, X, y, ax=ax, resolution=150,
                          title=f"{name}\ntraining accuracy {model.score(X, y):.2f}")
    print(f"{name:40s} accuracy {model.score(X, y):.3f}")
fig.tight_layout()
plt.show()
