"""
Loss curves of the logistic-regression solvers
==============================================

``loss_curve_`` holds the objective mean log-loss + alpha/2 ||w||^2 after each iteration of
the batch solvers (lecture 000's batch gradient ascent "gd" with step 1/L, and L-BFGS on the
same objective), and the mean loss over each epoch for AdaGrad SGD (one row at a time,
003/004; measured while the weights move, so it is not the same number as the objective at
the epoch's end). L-BFGS stops at its tolerance after a few dozen iterations; gradient ascent
is still descending after 60.
"""
import matplotlib.pyplot as plt
import numpy as np

import fastml
from fastml.datasets import load_auto_mpg
from fastml.plot import plot_loss_curve

X, mpg = load_auto_mpg(return_X_y=True)
y = np.where(mpg >= 23, "good", "bad")
Z = (X - X.mean(axis=0)) / X.std(axis=0)

fig, axes = plt.subplots(1, 3, figsize=(13, 4))
for ax, solver in zip(axes, ["gd", "lbfgs", "sgd"]):
    model = fastml.LogisticRegression(solver=solver, alpha=1e-3, max_iter=60, tol=None,
                                      random_state=0).fit(Z, y)
    plot_loss_curve(model, ax=ax, title=f'solver="{solver}"')
    print(f"{solver:6s} final objective {model.loss_curve_[-1]:.5f} "
          f"after {len(model.loss_curve_)} steps, accuracy {model.score(Z, y):.3f}")
fig.tight_layout()
plt.show()
