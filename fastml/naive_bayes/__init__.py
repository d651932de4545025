"""Naive Bayes over categorical, Gaussian and mixed attributes."""
__all__ = []
