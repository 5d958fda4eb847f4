"""LambdaMART and risk-sensitive LambdaMART objectives for LightGBM.

Every objective is a callable ``(preds, train_data) -> (grad, hess)`` for
``lightgbm.train(params={"objective": obj, ...})``; ``obj.sklearn_objective`` has the signature
``(y_true, y_pred, weight, group)`` that ``LGBMRanker(objective=...)`` expects.

LambdaMART (Burges 2010), as LightGBM's native ``lambdarank`` computes it: per query, documents
ordered by current score s; for each pair (h, o) of different labels with one of them among the
top T positions, ΔNDCG_ho = abs(g(l_h) − g(l_o)) · abs(D(p_h) − D(p_o)) / IDCG@T, with
D(p) = 1/log2(p + 2), divided by 0.01 + abs(s_h − s_o) when ``lambdarank_norm``;
ρ = 1 / (1 + exp(σ (s_h − s_o))); λ = −σ ρ ΔNDCG_ho added to h's gradient and subtracted from
o's, σ² ρ (1 − ρ) ΔNDCG_ho added to both hessians; with ``lambdarank_norm`` each query's λs and
hessians are then multiplied by log2(1 + Σ)/Σ, Σ = Σ_pairs 2σρΔNDCG_ho. Document weights multiply
gradient and hessian.

A risk-sensitive objective multiplies each pair's λ and hessian by a risk multiplier m ≥ 0
derived from a risk function F of the query's effectiveness M = NDCG@k of the current ranking:
m = (F(M + ΔM) − F(M)) / ΔM, ΔM the signed change of NDCG@k if the pair were swapped ([GEO] §6,
Eq. 9's ΔM'). With ``measure="err@k"`` the target is ERR@k instead (Chapelle et al. 2009), as in
RankLib's LambdaMART: ΔNDCG_ho is replaced by the exact change of ERR@k if h and o swapped, and
M, M_b and ΔM are ERR@k. The normaliser log2(1 + Σ)/Σ is taken from LambdaMART's own Σ, without the
multipliers (``norm_includes_risk=False``), so that a query's emphasis reaches the trees; with
α = 0, U-CRO, T-SARO, T-FARO and T*-FARO give LambdaMART's gradients bit for bit.

The recipe for a new objective, and the only one: four additions in two files (seven for one
shipped with the library), about 16 lines; the configuration's ``[objective]`` table,
``[learners]``, the runner and the report read the registry and the declared fields.

1. A state type (a ``NamedTuple`` of what the risk function needs, per query and per training
   set) and its pair multiplier, registered with ``@multiplier_of(StateType)``
   (:mod:`lgb_risk._training.lambda_kernel` says what each receives). One shipped with the
   library is written there, listed in ``BUILT_IN_STATES``, its kind named beside it, and given
   a branch in ``_builtin_multiplier``, so that every built-in objective shares one compiled
   kernel; one written elsewhere (a script, a notebook) gets its own copy, compiled in memory.
2. A ``@dataclass(eq=False, kw_only=True)`` subclass of :class:`OneBaseline` or
   :class:`SeveralBaselines` (which hold α, k and the baselines) that sets ``paper_name``,
   declares its own parameters as fields and implements ``risk_state`` (the contract of
   :class:`~lgb_risk._training.pair_objective.PairObjective`) from the model's values and
   :attr:`~OneBaseline.baseline_values`; and its entry in ``OBJECTIVES``.

The user guide's page on the objectives writes one from outside the library, step by step.

Faithful mode (the default) reproduces LightGBM's native ``lambdarank`` tree for tree: ρ comes
from LightGBM's sigmoid lookup table (2**20 bins over [−25/σ, 25/σ], clamped at the ends), the
score distance gets ``0.01f`` (float32) added, and each document's λ and hessian accumulate in
float32, pair by pair in LightGBM's order. ``exact_sigmoid=True`` evaluates ρ exactly instead.
The pair loop is one numba kernel (:mod:`lgb_risk._training.lambda_kernel`), parallel over
queries; the per-query risk state is computed once per boosting iteration for all queries at once.

References: [LM] (Burges 2010), [CRO] (Wang et al. 2012: U-CRO), [TR] (TRisk; T-SARO,
T-FARO, §6), [GEO] (ZRisk, GeoRisk; T*-FARO and GeoRisk, §6); :mod:`lgb_risk.references`.

Examples
--------
>>> import numpy as np
>>> from lgb_risk import LambdaMART, TFARO
>>> labels, scores, group = np.array([2, 0, 1, 0]), np.array([0.1, 0.4, 0.3, 0.2]), [4]
>>> grad, hess = LambdaMART().gradients(scores, labels, group)
>>> risk_grad, _ = TFARO(alpha=5, baseline=[0.9]).gradients(scores, labels, group)
>>> bool(np.all(np.abs(risk_grad) >= np.abs(grad)))
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from lgb_risk import measures as registry
from lgb_risk import risk
from lgb_risk._inputs.parameters import FLAG, Bounds, OneOf, declared, documented, parameter
from lgb_risk._measuring.distributions import normal_cdf
from lgb_risk._training import lambda_kernel as kernel
from lgb_risk._training import training_set
from lgb_risk._training.lambda_kernel import multiplier_of
from lgb_risk._training.pair_objective import PairObjective
from lgb_risk.baselines import aligned_baselines

if TYPE_CHECKING:
    from lgb_risk._inputs.type_aliases import ArrayLike

__all__ = ["LambdaMART", "UCRO", "TSARO", "TFARO", "TStarFARO", "GeoRisk", "OneBaseline",
           "SeveralBaselines", "multiplier_of", "OBJECTIVES", "make_objective", "check_parameter",
           "TARGET_MEASURES"]

#: The measures an objective can take as its target (``measure=``).
TARGET_MEASURES = training_set.TARGET_MEASURES

#: The definitions of the per-query risk score TR_q that T-SARO, T-FARO and T*-FARO offer.
TR_DEFINITIONS = ("x_over_sx", "delta_over_se", "jforests")


@documented
@dataclass(eq=False, kw_only=True)
class LambdaMART(PairObjective):
    """LambdaMART gradients as LightGBM's native ``lambdarank`` computes them.

    Parameters
    ----------
    {parameters}

    Notes
    -----
    Usage: ``lightgbm.train({"objective": LambdaMART(), ...}, train_set)``, or
    ``LGBMRanker(objective=LambdaMART().sklearn_objective)``. Dataset weights multiply each
    document's gradient and hessian, as in LightGBM. The objective refuses labels outside
    ``label_gain``, NaN or infinite predictions and a Dataset without query groups.

    Examples
    --------
    >>> import numpy as np
    >>> grad, hess = LambdaMART().gradients([0.5, 0.2, 0.1], [0, 1, 2], group=[3])
    >>> [round(float(g), 4) for g in grad]  # positive: push down; the label-2 document goes up
    [0.5959, 0.1173, -0.7132]
    """

    #: The learner's name in the papers (reports and figures use it).
    paper_name = "LambdaMART"
    #: The risk measure of :func:`lgb_risk.feval.risk_feval` that selects this learner's model on
    #: validation data under the papers' protocol (Jforests selects on the measure the learner
    #: optimises); None: NDCG@k.
    risk_measure: ClassVar[str | None] = None

    # The parameters, declared once (lgb_risk._inputs.parameters): the initialiser, ``repr``,
    # ``validate_params``, the docstring's table and the experiment configuration's [objective]
    # table all read these fields.
    sigmoid: float = parameter(
        1.0, check=Bounds(minimum=0, above=True),
        doc="σ of ρ = 1 / (1 + exp(σ Δs)) (LightGBM's ``sigmoid``).")
    lambdarank_truncation_level: int = parameter(
        30, check=Bounds(integer=True, minimum=1),
        doc="T: pairs need one document at a position < T; IDCG is taken at T.")
    lambdarank_norm: bool = parameter(
        True, check=FLAG,
        doc="Divide ΔNDCG by the score distance and rescale each query by log2(1 + Σ)/Σ "
            "(LightGBM's default). ``False`` is the setting of Jforests, the papers' "
            "implementation.")
    label_gain: object = parameter(
        None, kind="sequence of float, optional", show_default=False,
        doc="Gain of each label; default ``2**l - 1`` for l = 0..30, as LightGBM (checked "
            "against the labels at the first call).")
    exact_sigmoid: bool = parameter(
        False, check=FLAG,
        doc="Evaluate ρ exactly instead of through LightGBM's lookup table (then models drift "
            "from native ones after a few trees; faithful mode is the default).")
    measure: str | None = parameter(
        None, kind='str, optional', check=training_set.check_target, show_default=False,
        doc="The target measure, ``\"ndcg@k\"`` or ``\"err@k\"`` (``\"err(max_label=4)@20\"``). "
            "NDCG (the default): each pair weighs LightGBM's ΔNDCG, the change of NDCG if its "
            "documents swapped with IDCG and the pairs taken at ``lambdarank_truncation_level`` "
            "(native ``lambdarank``); a risk objective measures its risk with NDCG@k, k the "
            "measure's cut-off or ``k``. ERR@k (Chapelle et al. 2009): each pair weighs the "
            "exact change of ERR@k if its documents swapped, as RankLib's LambdaMART does, and "
            "a risk objective measures the model and the baselines with ERR@k; "
            "R(l) = (2^l − 1)/2^l_max with l_max the measure's ``max_label``, or else the "
            "highest label of the training set.")

    def target(self) -> registry.MeasureSpec | None:
        return None if self.measure is None else registry.parse(self.measure)

    def risk_state(self, model_values: np.ndarray, initial: bool) -> kernel.RiskState:
        return kernel.NoRisk()


@dataclass(eq=False, kw_only=True)
class _RiskSensitive(LambdaMART):
    """Parameters and baseline handling shared by the risk-sensitive objectives; a subclass
    declares its baseline parameter (:class:`OneBaseline`, :class:`SeveralBaselines`)."""

    alpha: float = parameter(1.0, check=Bounds(minimum=0),
                             doc="Risk sensitivity α: a loss against the baseline weighs 1 + α.")
    k: int | None = parameter(
        None, check=Bounds(integer=True, minimum=1, optional=True),
        default_text=f"the measure's cut-off, else {training_set.DEFAULT_CUTOFF}",
        doc="Cut-off of the NDCG@k that the risk state is measured with, when ``measure`` is "
            "not given; with ``measure``, leave it unset or give the measure's own cut-off.")
    query_ids: Any = parameter(
        None, kind="array-like, optional", repr=False, show_default=False,
        doc="Training query ids in the Dataset's order, to align a BaselineStore.")
    norm_includes_risk: bool = parameter(
        False, check=FLAG,
        doc="With ``lambdarank_norm``: compute each query's normaliser log2(1 + Σ)/Σ from the "
            "multiplied pairs (version 0.1's placement, which cancels most of the "
            "emphasis) instead of from LambdaMART's own Σ (default).")

    def validate_params(self) -> None:
        super().validate_params()
        if self.measure is not None and self.k is not None:
            measure_k = registry.parse(self.measure).k
            if measure_k != self.k:
                raise ValueError(f"k={self.k} contradicts measure={self.measure!r}: give the "
                                 "cut-off once, in the measure")

    def target(self) -> registry.MeasureSpec:
        """The target measure as parsed: ``measure``, else NDCG@k."""
        return registry.parse(self.measure if self.measure is not None
                              else training_set.default_target(self.k))

    def _norm_includes_risk(self) -> bool:
        return bool(self.norm_includes_risk)

    def _prepare_risk(self, setup):
        """The baselines' values aligned to the training queries: (n_queries, n_systems)."""
        given = self.baseline_parameter
        assert given is not None  # a risk-sensitive objective names its baseline parameter
        self._baseline = aligned_baselines(
            getattr(self, given), setup.group.size if self.shard is None else
            self.shard.n_queries, query_ids=self.query_ids,
            measure=training_set.measured_target(
                self.target(), setup.labels, self.label_gain), several=given == "baselines",
            owner=type(self).__name__, parameter=given, the_set="the training set")

    @property
    def baseline_values(self) -> np.ndarray:
        """The baselines' values of the target on every training query, (n_queries, n_systems)
        in the Dataset's query order, for :meth:`risk_state`: aligned at the first call."""
        return self._baseline


@dataclass(eq=False, kw_only=True)
class OneBaseline(_RiskSensitive):
    """The base of a risk objective against one baseline, ``baseline=``: U-CRO's, T-SARO's,
    T-FARO's, and one's own (the user guide's "Your own risk objective")."""

    baseline_parameter = "baseline"
    baseline: Any = parameter(
        None, kind="array-like (n_queries,), BaselineStore or FeatureBaseline", repr=False,
        show_default=False,
        doc="Baseline value of the target measure (NDCG@k by default) on each training query, "
            "in the Dataset's query order; or a store "
            "with one baseline plus ``query_ids``; or, for XGBoost, a feature column of the "
            "rows (:class:`~lgb_risk.baselines.FeatureBaseline`).")


@dataclass(eq=False, kw_only=True)
class SeveralBaselines(_RiskSensitive):
    """The base of a risk objective against several baselines, ``baselines=``: T*-FARO's,
    GeoRisk's, and one's own."""

    baseline_parameter = "baselines"
    baselines: Any = parameter(
        None, kind="array-like (n_queries, n_systems), BaselineStore or FeatureBaseline",
        repr=False, show_default=False,
        doc="Baselines' values of the target measure (NDCG@k by default) on each training "
            "query (rows in the Dataset's query order), or a "
            "store plus ``query_ids``; or, for XGBoost, feature columns of the rows "
            "(:class:`~lgb_risk.baselines.FeatureBaseline`).")


@dataclass(eq=False, kw_only=True)
class _AdaptiveAlpha(_RiskSensitive):
    """α'_q = α (1 − Φ(TR_q)) of T-SARO, T-FARO and T*-FARO ([TR] §6.3), and s_x's update rule;
    the parameters are documented on :class:`TSARO`."""

    se_update: str = parameter(
        "first", check=OneOf(("first", "iteration")),
        doc='``"first"``: s_x is taken after the first boosting iteration and kept, as [TR] §6.3 '
            "describes: at the first call from the initial model, at the first call whose "
            "predictions differ from the initial ones (after the first tree) again, and frozen. "
            "Jforests, the papers' implementation, takes it once before the first tree, where "
            "the model's NDCG is 0 on every query (every x_q = −(1 + α) M_b(q)). "
            '``"iteration"``: s_x is recomputed at every iteration. Training again from the '
            "initial predictions on the same data starts over; :meth:`reset` forgets the frozen "
            "value by hand.")
    tr_definition: str = parameter(
        "x_over_sx", check=OneOf(TR_DEFINITIONS),
        doc="Which TR_q sets α'_q (see :class:`TSARO`).")

    def __post_init__(self) -> None:
        super().__post_init__()
        self.reset()

    def reset(self):
        """Forget the frozen s_x (``se_update="first"``) before training a new model."""
        self._initial_scores = None
        self._frozen_sx = None

    def _prepare_risk(self, setup):
        super()._prepare_risk(setup)
        self.reset()

    def _predictions_initial(self, scores) -> bool:
        if self.se_update == "iteration":
            return False  # s_x is taken anew every iteration: the first one is not special
        if self._initial_scores is None or np.array_equal(scores, self._initial_scores):
            self._initial_scores = scores.copy()  # the first iteration of a training run
            return True
        return False

    def _sx(self, x, initial: bool) -> float:
        """s_x of this iteration under ``se_update``."""
        current = float(x.std(ddof=1)) if x.size > 1 else 0.0
        if self.se_update == "iteration":
            return current
        if initial:
            self._frozen_sx = None
            return current
        if self._frozen_sx is None:  # the first iteration after the first tree
            self._frozen_sx = current
        return self._frozen_sx

    def _alpha_prime(self, model, baseline, initial) -> np.ndarray:
        """α'_q = α (1 − Φ(TR_q)) under ``tr_definition``; α/2 on every query where TR_q's
        denominator is 0 (no query stands out).

        A model within ``TIE_TOLERANCE`` of its baseline on a query ties it there (δ_q = 0), as
        U-CRO's kink does: the two NDCG values come from different code paths, and a model
        that ties its baseline everywhere (a booster started from the baseline's scores) would
        otherwise get s_x from rounding noise and α'_q anywhere in (0, α) instead of α/2.
        """
        alpha = float(self.alpha)
        delta = model - baseline
        delta[np.abs(delta) <= kernel.TIE_TOLERANCE] = 0.0
        if self.tr_definition == "jforests":
            numerator = delta
            scale = (1.0 + alpha) * (float(baseline.std(ddof=1)) if baseline.size > 1 else 0.0)
        else:
            x = risk.downside_weighted(delta, alpha)
            s_x = self._sx(x, initial)
            if self.tr_definition == "x_over_sx":
                numerator, scale = x, s_x
            else:  # "delta_over_se"
                numerator, scale = delta, s_x / math.sqrt(x.size)
        tr = numerator / scale if scale > 0 else np.zeros_like(delta)
        return alpha * (1.0 - normal_cdf(tr))


@documented
@dataclass(eq=False, kw_only=True)
class UCRO(OneBaseline):
    """U-CRO: LambdaMART optimising URisk against one baseline (Wang et al. 2012).

    The risk function is URisk's per-query term ([TR] Eq. 4),
    F(M) = M − M_b if M ≥ M_b, else (1 + α)(M − M_b), with M the model's and M_b the baseline's
    NDCG@k on the query. Each pair's λ and hessian are multiplied by
    m = (F(M + ΔM) − F(M)) / ΔM = 1 + α φ, φ ∈ [0, 1] the fraction of the swap's NDCG change
    [M, M + ΔM] that lies below the baseline: 1 + α while both ends are below it, 1 while both
    are above, the exact fraction when the swap crosses it. Where ΔM = 0, m is F's one-sided
    slope at M in the direction of the pair; M within 10⁻⁹ of M_b counts as the tie M = M_b
    (the kink: 1 for a mis-ordered pair, 1 + α otherwise), so that the side a tie falls on does
    not depend on rounding in the last bits of the model's and the baseline's NDCG. α = 0 gives
    LambdaMART exactly.

    [GEO] Eq. 9 states U-CRO with a multiplier that is 1 + α or 1 according to where M lies, with
    no crossing fraction; this class follows Wang et al.'s crossing rule, as Jforests (the
    papers' implementation) does.

    Parameters
    ----------
    {parameters}

    Examples
    --------
    >>> import numpy as np
    >>> labels, scores, group = [2, 0, 1, 0], [0.1, 0.4, 0.3, 0.2], [4]
    >>> plain, _ = UCRO(alpha=0, baseline=[0.9]).gradients(scores, labels, group)
    >>> bool(np.array_equal(plain, LambdaMART().gradients(scores, labels, group)[0]))
    True
    >>> below, _ = UCRO(alpha=5, baseline=[1.0]).gradients(scores, labels, group)
    >>> bool(np.allclose(below, 6 * plain, rtol=1e-6))  # no swap rises above a perfect baseline
    True
    """

    paper_name = "U-CRO"
    risk_measure = "urisk"

    def risk_state(self, model_values: np.ndarray, initial: bool) -> kernel.RiskState:
        return kernel.CrossingRisk(alpha=np.full(model_values.size, float(self.alpha)),
                                   model_values=model_values,
                                   baseline_values=self.baseline_values[:, 0])


@documented
@dataclass(eq=False, kw_only=True)
class TSARO(_AdaptiveAlpha, OneBaseline):
    """T-SARO: U-CRO with a per-query α'_q = α (1 − Φ(TR_q)) ([TR] §6.3, Eq. 25).

    TR_q = x_q / s_x ([TR] Eq. 21), x_q = M − M_b if M ≥ M_b else (1 + α)(M − M_b) the
    risk-weighted difference of the current model against the baseline on query q, s_x its
    sample standard deviation over the training queries, Φ the standard normal CDF: queries with
    significant losses (TR_q < −2) get nearly α, significant wins nearly 0.

    The papers and their implementation define TR_q three ways (``tr_definition``), with
    δ_q = M − M_b and c training queries:

    ``"x_over_sx"`` (default)
        TR_q = x_q / s_x, [TR] Eq. 21, the per-query score that [TR] §6.3 builds T-SARO from.
    ``"delta_over_se"``
        TR_q = δ_q / SE, SE = s_x / √c the standard error of URisk: [GEO] §6 (the text after
        Eq. 10). √c times larger than the default, so Φ saturates: α'_q is nearly α or 0.
    ``"jforests"``
        TR_q = δ_q / ((1 + α) sd(M_b)), sd the baseline's sample standard deviation over the
        training queries: Jforests, the papers' implementation, which takes s_x once before
        the first tree, where the model's NDCG is 0 on every query (so x_q = −(1 + α) M_b).
        Constant s, so ``se_update`` does not apply.

    Parameters
    ----------
    {parameters}

    Examples
    --------
    >>> import numpy as np
    >>> from lgb_risk import LambdaMART
    >>> labels, scores, group = np.array([2, 0, 0, 1]), np.array([0.2, 0.1, 0.4, 0.3]), [2, 2]
    >>> plain, _ = LambdaMART().gradients(scores, labels, group)
    >>> risk_grad, _ = TSARO(alpha=5, baseline=[0.9, 0.1]).gradients(scores, labels, group)
    >>> (np.abs(risk_grad) / np.abs(plain)).astype(float).round(2).tolist()  # query 1 is below
    [2.35, 2.35, 1.0, 1.0]
    """

    paper_name = "T-SARO"
    risk_measure = "trisk"

    def risk_state(self, model_values: np.ndarray, initial: bool) -> kernel.RiskState:
        baseline = self.baseline_values[:, 0]
        return kernel.CrossingRisk(alpha=self._alpha_prime(model_values, baseline, initial),
                                   model_values=model_values, baseline_values=baseline)


@documented
@dataclass(eq=False, kw_only=True)
class TFARO(TSARO):
    """T-FARO: every pair of query q weighted by ``1 + α'_q`` ([TR] Eq. 26).

    α'_q = α (1 − Φ(TR_q)) as in :class:`TSARO`; the multiplier does not depend on whether the
    swap crosses the baseline. With the default ``norm_includes_risk=False`` each query's
    gradients are exactly (1 + α'_q) times LambdaMART's.

    The lever between queries is bounded. What shapes the trees is the ratio of two queries'
    weights, (1 + α'_q) / (1 + α'_r), not their size (a common factor acts like a larger
    learning rate). With TR_q = x_q / s_x and some queries below the baseline, s_x grows like
    (1 + α) as α grows: a loss's TR_q tends to a finite negative value, a win's to 0, so every
    α'_q / α tends to a value in [1/2, 1] and the ratio between any two queries to at most 2.
    A larger α therefore does not strengthen T-FARO beyond that; U-CRO's and T-SARO's
    multipliers, which act on the pairs that cross the baseline, are not bounded this way.

    Parameters
    ----------
    {parameters}

    Examples
    --------
    >>> import numpy as np
    >>> labels, scores, group = [2, 0, 1, 0, 1, 0], [0.1, 0.4, 0.3, 0.2, 0.5, 0.6], [4, 2]
    >>> plain, _ = LambdaMART().gradients(scores, labels, group)
    >>> risk_grad, _ = TFARO(alpha=5, baseline=[0.9, 0.1]).gradients(scores, labels, group)
    >>> [round(float(np.abs(risk_grad[a:b]).sum() / np.abs(plain[a:b]).sum()), 3)
    ...  for a, b in ((0, 4), (4, 6))]  # 1 + α'_q: the query lost to its baseline gets more
    [5.366, 2.963]
    """

    paper_name = "T-FARO"

    def risk_state(self, model_values: np.ndarray, initial: bool) -> kernel.RiskState:
        return kernel.FlatRisk(alpha=self._alpha_prime(model_values, self.baseline_values[:, 0],
                                                       initial))


@documented
@dataclass(eq=False, kw_only=True)
class TStarFARO(_AdaptiveAlpha, SeveralBaselines):
    """T*-FARO: T-FARO against the per-query mean of several baselines ([GEO] §6.1, Eq. 3).

    M_b(q) is the mean of the baselines' NDCG@k on query q; the rest is :class:`TFARO`.

    Parameters
    ----------
    {parameters}

    Examples
    --------
    >>> import numpy as np
    >>> from lgb_risk import LambdaMART
    >>> labels, scores, group = np.array([2, 0, 0, 1]), np.array([0.2, 0.1, 0.4, 0.3]), [2, 2]
    >>> plain, _ = LambdaMART().gradients(scores, labels, group)
    >>> baselines = [[0.9, 0.5], [0.1, 0.3]]  # two baselines, per query
    >>> risk_grad, _ = TStarFARO(alpha=5, baselines=baselines).gradients(scores, labels, group)
    >>> bool(np.all(np.abs(risk_grad) >= np.abs(plain)))
    True
    """

    paper_name = "T*-FARO"
    risk_measure = "trisk"

    def _prepare_risk(self, setup):
        super()._prepare_risk(setup)
        # the one baseline that T-FARO's rule is applied against
        self._baseline = self._baseline.mean(axis=1, keepdims=True)
    risk_state = TFARO.risk_state


@documented
@dataclass(eq=False, kw_only=True)
class GeoRisk(SeveralBaselines):
    """GeoRisk-optimising LambdaMART against several baselines ([GEO] §6).

    The data matrix X holds the baselines' rows and the model's row of per-query NDCG@k; F is
    the model row's GeoRisk ([GEO] Eq. 7): with S the row's sum, T_q the column sums, N the
    matrix sum, e_q = S T_q / N and z_q = (x_q − e_q)/√e_q,
    GeoRisk = sqrt(S/c · Φ(ZRisk/c)), ZRisk = Σ_{z_q > 0} z_q + (1 + α) Σ_{z_q < 0} z_q.
    A pair's multiplier is ΔGeoRisk / ΔM ([GEO] §6, the equation after Eq. 10: ΔM' =
    GeoRisk(M_m + ΔM) − GeoRisk(M_m)), ΔGeoRisk from the paper's local update
    (``delta="local"``: S' = S + ΔM, T'_q = T_q + ΔM, N' = N + ΔM and only z_q recomputed) or
    recomputed over all queries (``delta="exact"``, O(c) per pair: for tests and small data).
    Where ΔM = 0 (a pair whose swap leaves NDCG@k unchanged: both documents at or below k) this
    class departs from the paper's ΔM', which is 0 there and would drop every such pair from the
    gradient although LambdaMART's ΔNDCG@T (T = 30 > k) moves them: the multiplier is the
    one-sided slope of GeoRisk in the pair's direction, a difference quotient with step 10⁻⁶,
    as U-CRO's is its one-sided derivative. Each iteration the multipliers are clipped at 0 and
    divided by one constant: the mean, over the queries where it is defined (e_q > 0, below), of
    the positive part max(0, ∂GeoRisk/∂M_q) of the marginal gain (right-hand, same step;
    ``delta`` decides how it is computed, and at large α some gains are negative), or 1 where no
    gain is positive. GeoRisk changes are about 1/c of
    NDCG changes, and the rescaling keeps the gradients on LambdaMART's scale.

    Where the expected value e_q = S T_q / N is 0 — the model and every baseline score 0 on q
    (or the model scores 0 on every query) — this class departs from the paper: z_q is 0 there
    by convention ([GEO] Eq. 5 divides by √e_q), and z_q after a swap grows like √ΔM, so the
    slope is infinite at ΔM → 0 and very large for small ΔM. Taken literally, a handful of
    queries on which every system fails take most of the gradient (on MQ2008 with five BM25
    baselines, 3 such queries held 44–59% of it, against about 1% under LambdaMART) and the
    mean marginal gain is set by them. So every pair of such a query gets multiplier 1 (after
    rescaling, the mean marginal gain: the query is weighted as LambdaMART weights it), and
    these queries — including those with no relevant document, whose gradients are 0 anyway —
    are left out of the mean that gives the rescaling constant. Both rules hold for either
    ``delta``. A query with e_q > 0 but small (the model and the baselines all near 0) keeps
    the paper's multiplier, which is large there by GeoRisk's design.

    Parameters
    ----------
    {parameters}

    Examples
    --------
    >>> import numpy as np
    >>> from lgb_risk import LambdaMART
    >>> labels, scores, group = np.array([2, 0, 0, 1]), np.array([0.2, 0.1, 0.4, 0.3]), [2, 2]
    >>> plain, _ = LambdaMART().gradients(scores, labels, group)
    >>> baselines = [[0.9, 0.5], [0.1, 0.3]]
    >>> risk_grad, _ = GeoRisk(alpha=5, baselines=baselines).gradients(scores, labels, group)
    >>> bool(np.all(np.sign(risk_grad) == np.sign(plain)))  # same directions, other weights
    True
    """

    paper_name = "GeoRisk"
    risk_measure = "georisk"
    delta: str = parameter(
        "local", check=OneOf(("local", "exact")),
        doc="How a pair's ΔGeoRisk is computed: the paper's local update (``\"local\"``) or "
            'recomputed over all queries (``"exact"``, O(c) per pair: for tests and small data; '
            "its first training compiles a pair kernel of its own, which numba caches).")

    def risk_state(self, model_values: np.ndarray, initial: bool) -> kernel.RiskState:
        alpha = float(self.alpha)
        matrix = np.vstack([model_values, self.baseline_values.T])  # the model's row first
        z = risk.zscores(matrix)[0]
        weighted_z = risk.downside_weighted(z, alpha)
        state_type = kernel.GeoRiskExactState if self.delta == "exact" else kernel.GeoRiskState
        state = state_type(
            model_values=model_values, column_totals=matrix.sum(axis=0), weighted_z=weighted_z,
            georisk_now=np.zeros(0), model_total=float(model_values.sum()),
            grand_total=float(matrix.sum()), zrisk=float(weighted_z.sum()),
            n_queries=float(model_values.size), georisk_alpha=alpha, scale=1.0)
        georisk_now, gains = kernel.georisk_marginal_gains(kernel.packed(state))
        defined = gains[~np.isnan(gains)]  # NaN where e_q = 0: the slope is infinite there
        scale = float(np.maximum(defined, 0.0).mean()) if defined.size else 0.0
        # No positive marginal gain anywhere: leave the multipliers unscaled.
        return state._replace(georisk_now=georisk_now, scale=scale if scale > 0 else 1.0)


#: Every objective by class name; the experiment runner and the benchmarks read it.
OBJECTIVES: dict[str, type[Any]] = {
    cls.__name__: cls for cls in (LambdaMART, UCRO, TSARO, TFARO, TStarFARO, GeoRisk)}


def check_parameter(name: str, value: Any) -> Any:
    """``value`` checked as the objectives declare parameter ``name`` (``alpha``, ``k``, ...):
    for an estimator that passes it on to an objective, so that the bound is declared once.
    Returns ``value``; raises ValueError naming the parameter."""
    for cls in OBJECTIVES.values():
        for declared_parameter in declared(cls):
            if declared_parameter.name == name:
                declared_parameter.validate(value)
                return value
    raise ValueError(f"no objective declares a parameter {name!r}")


def make_objective(name: str, *, alpha: float | None = None, k: int | None = None,
                   baseline: Any = None, query_ids: ArrayLike | None = None,
                   measure: str | None = None, **params: Any) -> LambdaMART:
    """The objective of :data:`OBJECTIVES` named ``name`` at risk sensitivity ``alpha`` against
    ``baseline``, given as the class takes it (``baseline=`` of U-CRO, T-SARO and T-FARO,
    ``baselines=`` of T*-FARO and GeoRisk: an array in the training set's query order, or a
    ``BaselineStore`` with ``query_ids``), toward the target ``measure``; ``params`` are its
    other parameters. A parameter not given takes the class's default (α = 1, NDCG@10).
    LambdaMART takes no α, k or baseline. The one place the experiment runner and
    :class:`RiskRanker` build an objective from a name.

    >>> objective = make_objective("UCRO", alpha=5, baseline=[0.5, 0.2])
    >>> type(objective).__name__, objective.alpha
    ('UCRO', 5)
    >>> make_objective("TFARO", baseline=[0.5]).alpha  # the class's default
    1.0
    """
    if name not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {name!r}")
    cls = OBJECTIVES[name]
    if cls.baseline_parameter is None:
        return cls(measure=measure, **params)
    given = {"alpha": alpha, "k": k, "query_ids": query_ids, cls.baseline_parameter: baseline}
    return cls(measure=measure, **{key: value for key, value in given.items()
                                   if value is not None}, **params)
