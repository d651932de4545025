"""The ``.. fastml-cli::`` directive: the command-line reference, read from the argparse parser
(fastml.cli.build_parser), so the page always says what the installed command accepts.

For the main parser and each subcommand it emits the usage line, the description, a table of
the arguments (name, metavar / choices, default, help) and the example from the epilog.
"""
import argparse

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective


def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    return {}


def _rows(parser):
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        name = ", ".join(action.option_strings) or action.dest.upper()
        if action.metavar and action.option_strings:
            name += f" {action.metavar}"
        default = action.default
        hidden = default is None or default is False or default == () or \
            default == argparse.SUPPRESS
        shown = "" if hidden else repr(default)
        if action.required and action.option_strings:
            shown = "required"
        rows.append((name, shown, (action.help or "").replace("%%", "%")))
    return rows


def _section_lines(title, parser, underline):
    usage = parser.format_usage().strip()
    lines = [title, underline * len(title), "", ".. code-block:: text", "", f"   {usage}", ""]
    if parser.description:
        lines += [parser.description, ""]
    rows = _rows(parser)
    if rows:
        lines += [".. list-table::", "   :header-rows: 1", "   :widths: 30 15 55", "",
                  "   * - argument", "     - default", "     - meaning"]
        for name, default, help_ in rows:
            lines += [f"   * - ``{name}``", f"     - {('``' + default + '``') if default else ''}",
                      f"     - {help_}"]
        lines.append("")
    if parser.epilog:
        lines += [".. code-block:: text", ""] + [f"   {line}" for line in
                                                  parser.epilog.splitlines()] + [""]
    return lines


class FastmlCli(SphinxDirective):
    has_content = False

    def run(self):
        from fastml.cli import build_parser
        parser = build_parser()
        lines = _section_lines("fastml", parser, "-")
        for name, sub in _subparsers(parser).items():
            lines += _section_lines(f"fastml {name}", sub, "-")
        container = nodes.section()
        container.document = self.state.document
        self.state.nested_parse(StringList(lines, source="fastml.cli.build_parser"), 0,
                                container, match_titles=True)
        return container.children


def setup(app):
    app.add_directive("fastml-cli", FastmlCli)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
