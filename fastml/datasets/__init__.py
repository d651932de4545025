"""Bundled data: the Auto MPG set (provenance in data/PROVENANCE.md) and the lectures' tables."""
from ._auto_mpg import load_auto_mpg
from ._tables import load_tax_table, load_x1x2y_table, load_xor
from ._lecture_mpg import load_lecture_mpg  # noqa: E402  (decision-tree lectures)
from ._clicks import make_clicks

__all__ = ["load_auto_mpg", "load_tax_table", "load_x1x2y_table", "load_xor", "load_lecture_mpg",
           "make_clicks"]
