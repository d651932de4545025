"""
The information-gain table
==========================

Lecture 000's "information gains using the training set": for each attribute, the class
distribution of each of its values and the attribute's information gain IG(Y | X). Real
attributes get IG*, the best gain over the thresholds x_i + (x_{i+1} - x_i)/2. The same table
is ``fastml info-gain DATA --target COL`` on the command line.
"""
import matplotlib.pyplot as plt
import numpy as np

import fastml
from fastml.datasets import load_auto_mpg, load_lecture_mpg

X, y = load_lecture_mpg(return_X_y=True, as_frame=True)
table = fastml.info.information_gain_table(X, y)
print(table)

# IG* of the real attributes of the full Auto MPG data, with the best threshold of each
X_real, mpg = load_auto_mpg(return_X_y=True)
good = np.where(mpg >= 23, "good", "bad")
names = ["cylinders", "displacement", "horsepower", "weight", "acceleration", "model_year"]
gains = []
for j, name in enumerate(names):
    threshold, gain = fastml.info.best_threshold(X_real[:, j], good)
    gains.append(gain)
    print(f"{name:13s} IG* = {gain:.4f} at x < {threshold:g}")

fig, ax = plt.subplots(figsize=(7, 3.5))
ax.barh(names, gains)
ax.set_xlabel("IG* (bits)")
ax.set_title("Information gain of each real attribute for mpg >= 23")
fig.tight_layout()
plt.show()
