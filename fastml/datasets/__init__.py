"""Bundled data: the Auto MPG set (provenance in data/PROVENANCE.md) and the lectures' tables."""
from ._auto_mpg import load_auto_mpg
from ._tables import load_tax_table, load_x1x2y_table, load_xor

__all__ = ["load_auto_mpg", "load_tax_table", "load_x1x2y_table", "load_xor"]
