"""Turning raw records into feature matrices: FeatureHasher (the hashing trick of 003's click
data, bit-identical to scikit-learn's)."""
from ._hashing import FeatureHasher

__all__ = ["FeatureHasher"]
