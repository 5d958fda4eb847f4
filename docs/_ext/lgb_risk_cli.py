"""A Sphinx directive that writes the command-line reference from the parser itself:
``.. lgb-risk-commands::`` gives each command's help, as ``lgb-risk COMMAND --help`` prints it
in a terminal 88 characters wide (its examples included), so that the reference cannot drift
from the command line."""

from docutils import nodes
from docutils.parsers.rst import Directive


class CommandsDirective(Directive):
    """Every ``lgb-risk`` command: a section with its help text."""

    def run(self):
        import argparse
        import os

        from lgb_risk.cli import build_parser

        os.environ["COLUMNS"] = "88"  # argparse's width: a page's, not the build's terminal
        parser = build_parser()
        sections = []
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        overview = nodes.section(ids=["lgb-risk"])
        overview += nodes.title(text="lgb-risk")
        overview += nodes.literal_block(text=parser.format_help())
        sections.append(overview)
        for name, command in commands.choices.items():
            section = nodes.section(ids=[f"lgb-risk-{name}"])
            section += nodes.title(text=f"lgb-risk {name}")
            section += nodes.literal_block(text=command.format_help())
            sections.append(section)
        return sections


def setup(app):
    app.add_directive("lgb-risk-commands", CommandsDirective)
    return {"parallel_read_safe": True}
