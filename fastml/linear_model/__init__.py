"""Linear models: logistic regression, the perceptron family, the hinge-loss SVM, and linear /
ridge / polynomial regression. Every online learner here runs the one SGD loop of
fastml/linear_model/_sgd_fast.pyx through the driver in _sgd.py, except the kernel and the
voted perceptrons, which keep their mistakes (_kernel_perceptron_fast.pyx, _voted_fast.pyx)."""
from ._logistic import LogisticRegression
from ._kernel_perceptron import KernelPerceptron
from ._perceptron import Perceptron
from ._voted import VotedPerceptron
from ._svm import LinearSVM

__all__ = ["LogisticRegression"]
__all__ += ["Perceptron", "VotedPerceptron", "KernelPerceptron", "LinearSVM"]
from ._polynomial import PolynomialFeatures
from ._regression import LinearRegression, LinearStats, PolynomialRegression, Ridge

__all__ += ["LinearRegression", "Ridge", "PolynomialRegression", "PolynomialFeatures",
            "LinearStats"]
