"""Sphinx directives that write the manual's reference pages from the library's own registries and
declarations, so that no page can drift from the code:

- ``.. lgb-risk-measures::``: every measure of :data:`lgb_risk.measures.MEASURES` (its
  parameters, cut-off, range, the conventions it reads, active evaluation) and the aliases;
- ``.. lgb-risk-conventions::``: every named convention, the tool it equals and its choices;
- ``.. lgb-risk-objectives::``: every objective of :data:`lgb_risk.objectives.OBJECTIVES` with
  its declared parameters;
- ``.. lgb-risk-configuration::``: every table and key of an experiment configuration;
- ``.. lgb-risk-changelog::``: ``CHANGELOG.md`` (the Markdown it uses: headings, lists, code,
  emphasis, links) as reStructuredText.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils.parsers.rst import Directive
from docutils.statemachine import StringList
from sphinx.util.nodes import nested_parse_with_titles

ROOT = Path(__file__).resolve().parents[2]


class _Generated(Directive):
    """A directive whose content is reStructuredText lines made by :meth:`lines`."""

    def lines(self) -> list[str]:
        raise NotImplementedError

    def run(self):
        from docutils import nodes

        container = nodes.section() if self.keeps_titles else nodes.container()
        nested_parse_with_titles(self.state, StringList(self.lines(), "<generated>"), container)
        return container.children

    keeps_titles = True


def _literal(value) -> str:
    return f"``{value!r}``" if value is not None else "``None``"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A list-table of ``rows``."""
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        lines.append(f"   * - {row[0]}")
        lines += [f"     - {cell}" for cell in row[1:]]
    return lines + [""]


class MeasuresDirective(_Generated):
    def lines(self) -> list[str]:
        from lgb_risk import measures
        from lgb_risk.conventions import CHOICES, DEFAULT

        out: list[str] = []
        aliases: dict[str, list[str]] = {}
        for alias, name in measures.ALIASES.items():
            aliases.setdefault(name, []).append(alias)
        for name, measure in measures.MEASURES.items():
            title = f"``{name}`` — {measure.label or name}"
            out += [title, "~" * len(title), "", measure.summary[0].upper() + measure.summary[1:]
                    + ".", ""]
            written = f"``{name}@K`` or ``{name}``" if measure.cutoff == "optional" else \
                f"``{name}`` (no cut-off)"
            low, high = measure.bounds
            facts = [("Written", written),
                     ("Per-query values", f"from {'−∞' if low is None else f'{low:g}'} to "
                                          f"{'∞' if high is None else f'{high:g}'}")]
            if name in aliases:
                facts.append(("Also accepted as", ", ".join(f"``{a}``" for a in aliases[name])))
            if measure.reads:
                facts.append(("Convention choices it reads", ", ".join(
                    f"``{key}`` (default {_literal(getattr(DEFAULT, key))}; "
                    f"{', '.join(f'``{c}``' for c in CHOICES.get(key, ('an integer',)))})"
                    if key in CHOICES else
                    f"``{key}`` (default {_literal(getattr(DEFAULT, key))}; an integer)"
                    for key in measure.reads)))
            active = measure.active
            facts.append(("Active evaluation", f"yes ({active.family} form)"
                          if isinstance(active, measures.ActiveForm) else f"no: {active}"))
            out += [f":{key}: {value}" for key, value in facts] + [""]
            if measure.parameters:
                out += _table(["parameter", "type", "default", "meaning"], [
                    [f"``{p.name}``", p.kind, _literal(p.default), p.doc]
                    for p in measure.parameters])
                example = measure.parameters[0]
                shown = 3 if example.check.integer else 0.9
                out += [f"Written e.g. ``{name}({example.name}={shown})@10``.", ""]
        return out


class ConventionsDirective(_Generated):
    def lines(self) -> list[str]:
        from lgb_risk.conventions import CHOICES, CONVENTIONS, DEFAULT

        keys = [k for k in DEFAULT._fields if k not in ("name", "source")]
        rows = [["``default``", DEFAULT.source, "(the defaults below)"]]
        for name, convention in CONVENTIONS.items():
            differs = [f"``{k}={getattr(convention, k)!r}``" for k in keys
                       if getattr(convention, k) != getattr(DEFAULT, k)]
            rows.append([f"``{name}``", convention.source, ", ".join(differs) or "none"])
        out = _table(["convention", "equals", "choices that differ from the defaults"], rows)
        out += _table(["choice", "default", "values"], [
            [f"``{k}``", _literal(getattr(DEFAULT, k)),
             ", ".join(f"``{c}``" for c in CHOICES.get(k, ())) or "an integer >= 1"]
            for k in keys])
        return out


class ObjectivesDirective(_Generated):
    def lines(self) -> list[str]:
        from lgb_risk._inputs.parameters import declared
        from lgb_risk.objectives import OBJECTIVES

        out: list[str] = []
        for name, cls in OBJECTIVES.items():
            summary = (cls.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
            title = f"``{name}``"
            out += [title, "~" * len(title), "", summary, "",
                    f"API: :class:`lgb_risk.objectives.{name}`.", ""]
            out += _table(["parameter", "type", "default", "meaning"], [
                [f"``{p.name}``", p.kind.replace("*", r"\*"),
                 p.default_text or (_literal(p.default) if p.show_default else "see meaning"),
                 p.doc.replace("\n", " ")]
                for p in declared(cls)])
        return out


class ConfigurationDirective(_Generated):
    def lines(self) -> list[str]:
        from lgb_risk._inputs.parameters import declared
        from lgb_risk.experiment import config
        from lgb_risk.objectives import OBJECTIVES

        out: list[str] = []
        for table, cls in config._TABLES.items():
            title = f"``[{table}]``"
            summary = (cls.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
            out += [title, "~" * len(title), "", summary, ""]
            out += _table(["key", "type and bounds", "default", "meaning"], [
                [f"``{p.name}``", p.kind, _literal(p.default), p.doc.replace("\n", " ")]
                for p in declared(cls)])
        out += ["``[learners]``", "~" * 14, "",
                "Each learner to train, with the list of its α values: "
                + ", ".join(f"``{name}``" for name in OBJECTIVES)
                + " (``LambdaMART`` takes ``[0]``).", ""]
        out += ["``[objective]``", "~" * 15, "",
                "The objectives' parameters (:ref:`objectives`), for every learner that takes "
                "them; the classes' defaults apply to the keys not given. Set by the runner, "
                "not here: " + ", ".join(f"``{k}``" for k in config._RUNNER_SET) + ".", ""]
        out += _table(["key", "learners that take it"], [
            [f"``{key}``", ", ".join(learners)]
            for key, learners in config.objective_parameter_table().items()])
        out += ["``[lightgbm]``", "~" * 14, "",
                "Passed to ``lightgbm.train`` as they are (``learning_rate``, ``num_leaves``, "
                "...).", ""]
        return out


class ChangelogDirective(_Generated):
    """CHANGELOG.md's Markdown (headings, lists, inline code, bold, links) as rst."""

    def lines(self) -> list[str]:
        out: list[str] = []
        underline = {1: "=", 2: "-", 3: "~"}
        block: list[str] = []  # a list item or paragraph: a code span may cross its lines

        def flush() -> None:
            out.extend(_inline("\n".join(block)).split("\n") if block else [])
            block.clear()

        for line in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").splitlines():
            heading = re.match(r"^(#{1,3}) (.*)$", line)
            if heading:
                flush()
                level = len(heading.group(1))
                if level == 1:
                    continue  # the page's own title
                text = _inline(heading.group(2))
                out += [text, underline[level] * len(text), ""]
                continue
            if not line.strip() or re.match(r"^\s*[-*] ", line):
                flush()
            if line.strip():
                block.append(line)
            else:
                out.append(line)
        flush()
        return out


def _inline(text: str) -> str:
    """Markdown's inline code and links as reStructuredText (bold is written alike): a code
    span touching a letter is set off by an escaped space, as rst needs."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unmatched backtick: left as it is
        return text
    out = []
    for i, part in enumerate(parts):
        if i % 2 == 0:
            out.append(re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"`\1 <\2>`__", part))
            continue
        before = "\\ " if parts[i - 1][-1:].isalnum() else ""
        after = "\\ " if parts[i + 1][:1].isalnum() else ""
        out.append(f"{before}``{part}``{after}")
    return "".join(out)


def setup(app):
    for name, directive in (("lgb-risk-measures", MeasuresDirective),
                            ("lgb-risk-conventions", ConventionsDirective),
                            ("lgb-risk-objectives", ObjectivesDirective),
                            ("lgb-risk-configuration", ConfigurationDirective),
                            ("lgb-risk-changelog", ChangelogDirective)):
        app.add_directive(name, directive)
    return {"parallel_read_safe": True}
