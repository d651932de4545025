"""The published name and the optional extras: what an install hint tells a user to type.

fastml is imported as ``fastml`` and published as ``fastml-classic`` (the name ``fastml`` on the
package index belongs to an unrelated project), the way scikit-learn is imported as ``sklearn``.
Every "needs X" error builds its hint here, so the name is written once.
"""
from importlib import import_module

DISTRIBUTION = "fastml-classic"


def install_hint(extra):
    """The pip command that installs fastml with one optional extra."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def require(module, extra, purpose):
    """Import `module` (a dotted name), or raise an ImportError saying what needs it and which
    extra installs it."""
    try:
        return import_module(module)
    except ImportError:
        top = module.split(".")[0]
        raise ImportError(f"{purpose} needs {top}: {install_hint(extra)}", name=top) from None
