"""Decision trees by information gain, chi-square pruning, and random forests."""
__all__ = []
