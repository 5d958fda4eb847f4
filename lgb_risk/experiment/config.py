"""Experiment configuration: TOML files under ``experiments/``, validated before any training.

A configuration has these tables, every key optional, validated into one frozen record per
table (:class:`ExperimentConfig`). Each key at its default, with its meaning (written from the
declarations by :func:`sample`; a key whose default is chosen at run time is commented out)::

    {sample}

A wrong or unknown key is refused with its name and the allowed keys or values.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import sys
from pathlib import Path

from lgb_risk import measures as registry
from lgb_risk._inputs.parameters import Bounds, OneOf, declared, parameter
from lgb_risk._inputs.validation import check_number
from lgb_risk._training.training_set import DEFAULT_CUTOFF, default_target
from lgb_risk.objectives import OBJECTIVES, TARGET_MEASURES
from lgb_risk.plots import FIGURE_FORMATS
from lgb_risk.significance import CORRECTIONS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# Set by the runner for each unit (α, k, baselines, query ids) or fixed by the protocol (gains
# are 2**l - 1, as in the baselines' and the report's NDCG): not configurable in [objective].
_RUNNER_SET = ("alpha", "k", "baseline", "baselines", "query_ids", "label_gain")


def _parameters_of(cls) -> list[str]:
    """The parameters an objective declares (its dataclass fields, inherited ones included)."""
    return [f.name for f in dataclasses.fields(cls) if f.init and f.name not in _RUNNER_SET]


def objective_parameter_table() -> dict[str, list[str]]:
    """Keys of the [objective] table, each with the learners that take it (read from the
    registry :data:`lgb_risk.objectives.OBJECTIVES` each time)."""
    table: dict[str, list[str]] = {}
    for name, cls in OBJECTIVES.items():
        for key in _parameters_of(cls):
            table.setdefault(key, []).append(name)
    return table

__all__ = ["ExperimentConfig", "DataConfig", "EvaluationConfig", "SplitConfig", "BaselinesConfig",
           "TrainingConfig", "ReportConfig", "load_config", "validate", "objective_parameters",
           "objective_parameter_table", "DEFAULTS", "sample"]

#: The most repeats of the protocol a configuration may ask for.
MAX_REPEATS = 1000


def _fail(where: str, message: str):
    raise ValueError(f"configuration: {where}: {message}")


def _number(value, where, **bounds):
    try:
        return check_number(value, where, **bounds)
    except ValueError as error:  # "where must be ...": said as the other keys' errors are
        _fail(where, str(error).removeprefix(f"{where} "))


LEARNED_BASELINES = ("lambdamart", "gbrt", "coordinate_ascent", "ridge")
#: Values of [training] selection besides a measure: which iteration's model a booster keeps.
SELECTIONS = ("target", "risk", "last")


def _measure(value, where):
    if not isinstance(value, str):
        _fail(where, f"expected a measure such as 'ndcg@10' or 'err@20', got {value!r}")
    try:
        registry.parse(value)
    except ValueError as error:
        _fail(where, str(error))


def _measures(value, where):
    if value is None:
        return
    if not isinstance(value, (list, tuple)) or not value:
        _fail(where, f"expected a non-empty list of measures, e.g. ['ndcg@10', 'err@20'], "
                     f"got {value!r}")
    for item in value:
        _measure(item, where)
    labels = [registry.parse(item).label for item in value]
    if len(set(labels)) != len(labels):
        _fail(where, f"a measure is listed twice: {list(value)!r}")


def _selection(value, where):
    if value in SELECTIONS:
        return
    if not isinstance(value, str):
        _fail(where, f"expected one of {', '.join(map(repr, SELECTIONS))} or a measure, got "
                     f"{value!r}")
    try:
        registry.parse(value)
    except ValueError as error:  # the measure's own reason: its name, a parameter, a cut-off
        _fail(where, f"expected one of {', '.join(map(repr, SELECTIONS))} or a measure such "
                     f"as 'ndcg@10', got {value!r}: {error}")


def _repeats(value, where):
    _number(value, where, minimum=1, integer=True)
    if value > MAX_REPEATS:
        _fail(where, f"at most {MAX_REPEATS} (each repeat trains every learner and α on every "
                     f"fold, and has a folder of its own), got {value}")


def _name(value, where):
    if not isinstance(value, str) or not value:
        _fail(where, f"expected a name, got {value!r}")


def _learned_baselines(value, where):
    if not isinstance(value, (list, tuple)) or len(set(value)) != len(value):
        _fail(where, f"expected a list of distinct names from {', '.join(LEARNED_BASELINES)}, "
                     f"got {value!r}")
    for name in value:
        if name not in LEARNED_BASELINES:
            _fail(where, f"unknown learned baseline {name!r}; allowed: "
                         f"{', '.join(LEARNED_BASELINES)}")


# Each table's keys are declared once (lgb_risk._inputs.parameters): type, default, check and doc;
# validate() runs the checks, and a test holds the module docstring's sample to the keys.


@dataclasses.dataclass(frozen=True)
class DataConfig:
    """``[data]``: LETOR files, or the built-in synthetic generator's size and shape."""

    source: str = parameter("synthetic", check=OneOf(("letor", "synthetic")),
                            doc="LETOR files, or the built-in synthetic generator.")
    path: str | None = parameter(
        None, kind="str", doc="letor: a folder of Fold*/ (Fold1's train, vali and test pooled) "
                              "or one LETOR file, relative to the configuration's folder.")
    n_features: int | None = parameter(None, check=Bounds(integer=True, minimum=1,
                                                          optional=True),
                                       doc="letor: the number of feature columns.")
    queries: int = parameter(300, check=Bounds(integer=True, minimum=1),
                             doc="synthetic: the number of queries.")
    mean_docs: float = parameter(
        40.0, check=Bounds(minimum=2),
        doc="synthetic: the mean number of documents of a query.")
    features: int = parameter(20, check=Bounds(integer=True, minimum=2),
                              doc="synthetic: the number of features.")
    seed: int = parameter(0, check=Bounds(integer=True, minimum=0),
                          doc="synthetic: the generator's seed.")


@dataclasses.dataclass(frozen=True)
class EvaluationConfig:
    """``[evaluation]``: the measures the report gives (each with its risk measures, tests and
    figures), the first being the objectives' default target; or ``k``, NDCG@k alone."""

    k: int | None = parameter(None, check=Bounds(integer=True, minimum=1, optional=True),
                              doc="NDCG@k: the one measure, when ``measures`` is not given "
                                  f"(neither given: NDCG@{DEFAULT_CUTOFF}, the objectives' "
                                  "default target).")
    measures: tuple[str, ...] | None = parameter(
        None, kind="list of str", check=_measures,
        doc="The measures reported (:mod:`lgb_risk.measures`), e.g. [\"ndcg@10\", "
            "\"err@20\"]; the first is the objectives' default target.")

    def reported(self) -> tuple[str, ...]:
        """The measures reported, as written: ``measures``, or NDCG@k."""
        return tuple(self.measures) if self.measures else (default_target(self.k),)


@dataclasses.dataclass(frozen=True)
class SplitConfig:
    """``[split]``: the protocol's seeded split ([GEO] §6.1)."""

    seed: int = parameter(2016, check=Bounds(integer=True, minimum=0), doc="The split's seed.")
    heldout: float = parameter(
        0.2, check=Bounds(minimum=0, maximum=0.9, above=True),
        doc="The fraction of the queries held out to train the learned baselines.")
    folds: int = parameter(5, check=Bounds(integer=True, minimum=3),
                           doc="Folds of the main queries.")
    repeats: int = parameter(
        1, kind=Bounds(integer=True, minimum=1, maximum=MAX_REPEATS).kind, check=_repeats,
        doc="The whole protocol repeated with derived seeds; repeat 0 is the seed's split.")


@dataclasses.dataclass(frozen=True)
class BaselinesConfig:
    """``[baselines]``: the feature baseline (its 0-based column) and the learned ones."""

    column: int = parameter(0, check=Bounds(integer=True, minimum=0),
                            doc="The 0-based column of the feature baseline (BM25), as "
                                "FeatureBaseline and RiskRanker(baseline_feature=) count; or, "
                                "instead, letor_feature: LETOR's 1-based feature number "
                                "(letor_feature = 25 is column = 24).")
    feature_name: str = parameter("bm25", kind="str", check=_name,
                                  doc="Its name in the report.")
    learned: tuple[str, ...] = parameter(
        LEARNED_BASELINES, kind="list of str", check=_learned_baselines,
        doc=f"The learned baselines, from {', '.join(LEARNED_BASELINES)}.")


@dataclasses.dataclass(frozen=True)
class TrainingConfig:
    """``[training]``: the protocol of every booster."""

    rounds: int = parameter(500, check=Bounds(integer=True, minimum=1), doc="Trees at most.")
    early_stopping: int = parameter(
        20, check=Bounds(integer=True, minimum=0),
        doc="Stop after this many rounds without gain in the selection measure; 0: train all "
            "rounds.")
    selection: str = parameter(
        "target", kind='"target", a measure, "risk" or "last"', check=_selection,
        doc="The model kept: the iteration of the best validation value of the target measure "
            "or of the measure named, of the learner's own risk measure at its α (in the "
            "target measure), or every tree.")
    num_threads: int = parameter(1, check=Bounds(integer=True, minimum=1),
                                 doc="LightGBM threads per unit of work.")


@dataclasses.dataclass(frozen=True)
class ReportConfig:
    """``[report]``: α of the report's risk columns, the learner of the TR/TJ figure, the
    multiple-comparison correction of its p-values over the learner × α grid, and the figures'
    file format."""

    alpha: float = parameter(5.0, check=Bounds(minimum=0),
                             doc="α of the risk columns of the report.")
    learner: str | None = parameter(None, kind="str",
                                    doc="The learner of the per-query TR/TJ figure.")
    correction: str = parameter(
        "holm", check=OneOf(tuple(CORRECTIONS)),
        doc="The correction of the p-values over the learner × α grid.")
    figure_format: str = parameter(
        "png", check=OneOf(FIGURE_FORMATS),
        doc="The figures' file format: png (200 dpi), or pdf (fonts embedded as TrueType) or "
            "svg (text kept as text) for a paper.")


_TABLES = {"data": DataConfig, "evaluation": EvaluationConfig, "split": SplitConfig,
           "baselines": BaselinesConfig, "training": TrainingConfig, "report": ReportConfig}


@dataclasses.dataclass(frozen=True)
class ExperimentConfig:
    """A validated configuration: one frozen record per TOML table (module docstring).

    ``learners`` maps each learner to its α values; ``objective`` and ``lightgbm`` are the
    tables as given (checked by :func:`validate`). Made by :func:`validate` or
    :func:`load_config`; change a copy with :func:`dataclasses.replace` and validate it again
    (``validate(config.to_dict())``).
    """

    name: str = "experiment"
    data: DataConfig = DataConfig()
    evaluation: EvaluationConfig = EvaluationConfig()
    split: SplitConfig = SplitConfig()
    baselines: BaselinesConfig = BaselinesConfig()
    learners: dict = dataclasses.field(default_factory=lambda: {"LambdaMART": (0.0,)})
    training: TrainingConfig = TrainingConfig()
    objective: dict = dataclasses.field(default_factory=dict)
    lightgbm: dict = dataclasses.field(default_factory=dict)
    report: ReportConfig = ReportConfig()

    def to_dict(self) -> dict:
        """The configuration as plain TOML/JSON values (tuples as lists): what ``config.json``
        records and :func:`validate` reads back."""
        return json.loads(json.dumps(dataclasses.asdict(self)))


#: Every key's default, as plain values (the tables of :class:`ExperimentConfig`).
DEFAULTS = ExperimentConfig().to_dict()


def _column_of_letor_feature(table: dict) -> dict:
    """``[baselines]`` with ``letor_feature`` (LETOR's 1-based number) as ``column``; the former
    ``feature`` key, which was LETOR's number, refused with what to write."""
    if "feature" in table:
        given = table["feature"]
        _fail("baselines.feature", f"features are named by column = (0-based) or letor_feature = "
              f"(LETOR's 1-based number); feature = {given!r} was LETOR's number: write "
              f"letor_feature = {given!r}" + (f" (or column = {given - 1})"
                                               if isinstance(given, int) else ""))
    if "letor_feature" not in table:
        return table
    if "column" in table:
        _fail("baselines.letor_feature", "give column (0-based) or letor_feature (1-based), not "
              "both")
    table = dict(table)
    number = table.pop("letor_feature")
    _number(number, "baselines.letor_feature", minimum=1, integer=True)
    return {**table, "column": number - 1}


def _toml(value) -> str:
    """A TOML literal of a default."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


def _commented(line: str, doc: str) -> list[str]:
    """``line`` with ``doc`` as a comment beside it, wrapped at 92 characters."""
    import re
    import textwrap

    plain = re.sub(r":\w+:`~?([^`]+)`", r"\1", doc).replace("``", "")
    column = 38
    lines = textwrap.wrap(plain, width=92 - column - 2) or [""]
    first = line.ljust(column) + "# " + lines[0] if len(line) < column else line
    rest = lines[1:] if len(line) < column else lines
    return [first] + [" " * column + "# " + text for text in rest]


def sample() -> str:
    """A configuration naming every key at its default, each with its meaning (TOML); the
    [learners], [objective] and [lightgbm] tables with an example each."""
    lines = _commented(f"name = {_toml(DEFAULTS['name'])}", "names the output folder (runs/NAME)")
    for table, record in _TABLES.items():
        lines += ["", f"[{table}]"]
        for key in declared(record):
            line = (f"{key.name} = {_toml(key.default)}" if key.default is not None
                    else f"# {key.name} = ...")
            lines += _commented(line, f"({key.kind}) {key.doc}")
    lines += ["", "[learners]"]
    lines += _commented("LambdaMART = [0]", "each learner with its training α values")
    lines += ["UCRO = [1, 5]", "", "[objective]"]
    lines += _commented("# lambdarank_norm = true", "the objectives' parameters, for every "
                        "learner that takes them: " + ", ".join(objective_parameter_table()))
    lines += ["", "[lightgbm]"]
    lines += _commented("learning_rate = 0.1", "passed to lightgbm.train as they are")
    return "\n".join(lines)


def validate(raw: dict) -> ExperimentConfig:
    """Merge ``raw`` (a parsed TOML document) over the defaults and check every key and value;
    return the typed configuration."""
    config = copy.deepcopy(DEFAULTS)
    for key, value in raw.items():
        if key not in DEFAULTS:
            _fail(key, f"unknown key; allowed: {', '.join(DEFAULTS)}")
        if key == "name":
            if (not isinstance(value, str) or not value or value in (".", "..")
                    or any(c in value for c in "/\\:") or value != value.strip()):
                _fail("name", f"expected a plain folder name (no path, not '.' or '..'), got "
                      f"{value!r}")
            config["name"] = value
            continue
        if not isinstance(value, dict):
            _fail(key, f"expected a table [{key}], got {value!r}")
        if key in ("lightgbm", "learners", "objective"):
            config[key] = dict(value)
            continue
        if key == "baselines":
            value = _column_of_letor_feature(value)
        for sub, v in value.items():
            if sub not in DEFAULTS[key]:
                _fail(f"{key}.{sub}", f"unknown key; allowed: {', '.join(DEFAULTS[key])}")
            config[key][sub] = v

    for table, record in _TABLES.items():  # each key's declared check
        for key in declared(record):
            if key.check is not None:
                where = f"{table}.{key.name}"
                try:
                    key.validate(config[table][key.name], where)
                except ValueError as error:  # said as the other keys' errors are
                    text = str(error)
                    if text.startswith("configuration: "):
                        raise
                    _fail(where, text.removeprefix(f"{where} "))
    data = config["data"]
    if data["source"] == "letor" and not isinstance(data["path"], str):
        _fail("data.path", "a letor source needs a path (a folder of Fold*/ or a file)")
    learned = config["baselines"]["learned"]

    learners = config["learners"]
    if not learners:
        _fail("learners", f"name at least one learner from {', '.join(OBJECTIVES)}")
    for name, alphas in learners.items():
        if name not in OBJECTIVES:
            _fail(f"learners.{name}", f"unknown learner; allowed: {', '.join(OBJECTIVES)}")
        if not isinstance(alphas, list) or not alphas:
            _fail(f"learners.{name}", f"expected a non-empty list of α values, got {alphas!r}")
        for a in alphas:
            _number(a, f"learners.{name}", minimum=0)
        if len(set(alphas)) != len(alphas):
            _fail(f"learners.{name}", f"α values repeat: {alphas!r}")
        learners[name] = tuple(float(a) for a in alphas)
    if "LambdaMART" not in learners:
        _fail("learners", "LambdaMART is needed: the report tests every learner against it")
    needs_learned = {name for name in learners
                     if OBJECTIVES[name].baseline_parameter == "baselines"}
    if needs_learned and not learned:
        _fail("baselines.learned", f"{', '.join(sorted(needs_learned))} need learned baselines")

    if None not in (config["evaluation"]["k"], config["evaluation"]["measures"]):
        _fail("evaluation", "give measures or k (k = 10 means measures = ['ndcg@10']), not both")
    if config["evaluation"]["measures"] is not None:
        config["evaluation"]["measures"] = tuple(config["evaluation"]["measures"])
    if config["objective"].get("measure") is None:  # a given target is checked as declared
        first = EvaluationConfig(**config["evaluation"]).reported()[0]
        target_spec = registry.parse(first)
        if target_spec.measure.name not in TARGET_MEASURES or target_spec.k is None:
            _fail("objective.measure", f"the objectives' target must be ndcg@k or err@k; "
                                       f"{first!r} (the first of [evaluation] measures, the "
                                       "default target) is not: set [objective] measure")
    train = config["training"]
    if train["selection"] == "last" and train["early_stopping"]:
        _fail("training.selection", "'last' keeps every tree, so nothing can stop training "
                                    "early: set early_stopping = 0")
    _check_objective_parameters(config["objective"], learners)
    objective_keys = objective_parameter_table()
    for key in config["lightgbm"]:
        if key in ("objective", "metric", "num_threads", "deterministic", "verbose",
                   "label_gain"):
            _fail(f"lightgbm.{key}", "set by the runner; not allowed here")
        if key in objective_keys:
            _fail(f"lightgbm.{key}", "an objective parameter, which LightGBM ignores with a "
                                     "custom objective: set it in [objective]")
    report = config["report"]
    if report["learner"] is not None and report["learner"] not in learners:
        _fail("report.learner", f"expected one of the configured learners "
                                f"({', '.join(learners)}), got {report['learner']!r}")
    config["baselines"]["learned"] = tuple(learned)
    return ExperimentConfig(
        name=config["name"], learners=learners, objective=config["objective"],
        lightgbm=config["lightgbm"],
        **{table: record(**config[table]) for table, record in _TABLES.items()})


def objective_parameters(config: ExperimentConfig, learner: str) -> dict:
    """The [objective] parameters that ``learner``'s class takes."""
    accepted = _parameters_of(OBJECTIVES[learner])
    return {key: value for key, value in config.objective.items() if key in accepted}


def _check_objective_parameters(table: dict, learners) -> None:
    parameters = objective_parameter_table()
    for key in table:
        if key not in parameters:
            _fail(f"objective.{key}", f"unknown key; allowed: {', '.join(parameters)}")
        takers = parameters[key]
        if not set(takers) & set(learners):
            _fail(f"objective.{key}", f"taken by {', '.join(takers)}, none of which is among "
                                      "the configured learners")
    for name in learners:
        accepted = _parameters_of(OBJECTIVES[name])
        params = {key: value for key, value in table.items() if key in accepted}
        try:
            OBJECTIVES[name](**params).validate_params()
        except ValueError as exc:
            _fail("objective", f"{exc} (for {name})")


def load_config(path: str | os.PathLike | None = None, *,
                data: str | os.PathLike | None = None) -> ExperimentConfig:
    """Read and validate a TOML configuration; None gives the built-in demo configuration.

    ``data`` (the command line's ``--data``) replaces the configuration's data with LETOR files
    at that path, before validation, so that the data the run will use is the data validated;
    it is resolved against the current folder. ``data.path`` from the file is resolved relative
    to the configuration file's folder.
    """
    if path is None:
        from importlib import resources

        raw = tomllib.loads(resources.files("lgb_risk").joinpath("resources/demo.toml")
                            .read_text())
        folder = Path.cwd()
    else:
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"no such configuration file: {p}")
        try:
            raw = tomllib.loads(p.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"configuration {p}: not valid TOML: {exc}") from None
        folder = p.parent
    if data is not None:
        table: dict = raw["data"] if isinstance(raw.get("data"), dict) else {}
        raw = {**raw, "data": {**{k: v for k, v in table.items() if k in ("n_features", "seed")},
                               "source": "letor", "path": str(Path(data).resolve())}}
    config = validate(raw)
    if config.data.path is None:
        return config
    return dataclasses.replace(config, data=dataclasses.replace(
        config.data, path=str((folder / config.data.path).resolve())))


__doc__ = (__doc__ or "").replace("{sample}", "\n".join(
    ("    " + line).rstrip() for line in sample().splitlines()).lstrip())
