"""Docstrings are read as plain text too (``help()``, IDEs), where ``coef_`` and ``|w|`` mean
an attribute and an absolute value. In reStructuredText a word ending in "_" is a hyperlink
reference and ``|w|`` a substitution, so those two plain-text spellings are made literal before
Sphinx parses a docstring. Everything else in a docstring must be valid numpydoc / RST (the
build runs with -W). Doctest lines (>>> and ...) and literal blocks are left alone.
"""
import re

# a name ending in "_" (coef_, classes_, loss_curve_), not already inside markup
_TRAILING_UNDERSCORE = re.compile(
    r"(?<![`\w*:\\{])([A-Za-z][A-Za-z0-9_]*_)(?=[\s,.;:)\]'\"/]|$)")
# |x| or |gradient|: an absolute value / norm, not a substitution
_BARS = re.compile(r"(?<![`\\|\w])\|([^|\s`][^|`]{0,40}?)\|(?=[\s,.;:)\]'\"/]|$)")


def _literal_text(line):
    line = _TRAILING_UNDERSCORE.sub(r"``\1``", line)
    return _BARS.sub(lambda m: f"``|{m.group(1)}|``", line)


def plain_text_to_rst(app, what, name, obj, options, lines):
    in_literal = False
    literal_indent = 0
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if in_literal:
            if stripped and indent <= literal_indent:
                in_literal = False
            else:
                continue
        if stripped.startswith((">>>", "...")) or stripped.startswith(".. "):
            continue
        lines[i] = _literal_text(line)
        if stripped.endswith("::"):
            in_literal, literal_indent = True, indent


def setup(app):
    # after numpydoc (priority 500) has turned the sections into RST
    app.connect("autodoc-process-docstring", plain_text_to_rst, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
