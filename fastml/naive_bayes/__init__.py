"""Naive Bayes over categorical, Gaussian and mixed attributes (lecture 004)."""
from ._classes import CategoricalNB, GaussianNB, NaiveBayes, ZeroProbabilityWarning

__all__ = ["CategoricalNB", "GaussianNB", "NaiveBayes"]
