"""
Naive Bayes against logistic regression: learning curves
========================================================

Lecture 002 shows that Gaussian naive Bayes with class-independent variances has exactly the
form of logistic regression (``GaussianNB(variance="shared").to_logistic()`` returns that
logistic regression), then compares the two learners: GNB (usually) needs less data, LR
(usually) gets to a better solution in the limit — the result of Ng & Jordan (2002), "On
discriminative vs. generative classifiers: a comparison of logistic regression and naive
Bayes", NIPS 14.

Here both learn whether a car of the Auto MPG data is American from its six numeric
attributes. ``fastml.plot.learning_curves`` holds out 98 cars, trains on nested random
subsets of the other 294, and repeats that 20 times: the lines are the mean held-out error,
the bands one standard deviation over the repeats. Naive Bayes is close to its final error
after a handful of cars; logistic regression starts worse and ends clearly lower.
"""
import matplotlib.pyplot as plt
import numpy as np

import fastml
from fastml.datasets import load_auto_mpg
from fastml.plot import learning_curves

cars = load_auto_mpg()
X = np.column_stack([cars.data[c] for c in cars.feature_names[:6]])
Z = (X - X.mean(axis=0)) / X.std(axis=0)
american = np.where(cars.data["origin"] == "america", "america", "other")

gnb = fastml.GaussianNB(variance="shared")
lr = fastml.LogisticRegression(solver="newton", alpha=1e-4)
fig, ax = plt.subplots(figsize=(7, 4.5))
curves = learning_curves({"Gaussian naive Bayes (shared variances)": gnb,
                          "logistic regression (Newton)": lr},
                         Z, american, sizes=[4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 294],
                         n_repeats=20, random_state=0, ax=ax,
                         title="Is the car American? (Auto MPG, 98 test cars, 20 splits)")
print(curves.table())

# the same hypothesis class: GNB fitted on all cars, as a logistic regression
as_lr = gnb.fit(Z, american).to_logistic()
print("GNB as logistic regression: max |P difference| =",
      np.abs(as_lr.predict_proba(Z) - gnb.predict_proba(Z)).max())
plt.show()
