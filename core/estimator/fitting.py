"""Fitting the activation coefficients (data/calibration.toml) to the measured peaks, and leaving models out.

Minimises the squared log error of the estimator's tracked bytes (total less runtime overhead) against
MemTracker's peak, per recipe: under-estimates weigh more, coefficients stay non-negative and near the
values that counting saved tensors gives. tools/fit_calibration.py writes the result back;
tests/test_estimator_measured.py refits without each model in turn and checks the models it did not see,
so the check that the formulas carry to new models runs with every test run.

Pure and deterministic. A trial calibration costs one `per_card` call per case: each case's defaults and
model are resolved once (`prepare`), and checked to give exactly what `estimate` gives.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from core.estimator.calibration import ActivationCoefficients, Calibration
from core.estimator.measured import MeasuredCase
from core.estimator.memory import estimate, per_card, resolve_model
from core.query import Query
from core.registry import ModelArch, load_registry

# recipe in data/measured/memory.csv -> its coefficient section in calibration.toml
SECTIONS = {
    "inference": "inference",
    "full": "full",
    "full-bf16": "full_bf16",
    "lora": "lora",
    # issue 18: the same policy recipes with a fused loss, or with DPO / GRPO's reference and sequences
    "full-chunked": "full",
    "dpo-full": "full",
    "grpo-full": "full",
    "dpo-lora": "lora",
    "grpo-lora": "lora",
}
KEYS = ("hidden", "intermediate", "q", "kv", "checkpoint_hidden", "logits_per_vocab", "embedding_grad_copies")

# What each coefficient should be from counting the tensors a block saves (bytes per token per unit of
# width); the fit may move away from these only as far as the measurements demand, so that shapes the table
# does not cover (MHA in full fine-tuning, say) keep sensible values.
PRIORS: dict[str, dict[str, float]] = {
    # prefill transient: three bf16 MLP tensors (gate/act, up, product), q/k/v and the attention output.
    "inference": {"hidden": 2.0, "intermediate": 6.0, "q": 6.0, "kv": 4.0},
    # bf16 autocast: fp32 residual and norm internals (~9×4 B), bf16 gate/up/act/product, q/k/v, rotary.
    "full": {
        "hidden": 36.0,
        "intermediate": 8.0,
        "q": 10.0,
        "kv": 8.0,
        "checkpoint_hidden": 4.0,
        "logits_per_vocab": 12.0,
        "embedding_grad_copies": 3.0,
    },
    "full_bf16": {
        "hidden": 18.0,
        "intermediate": 8.0,
        "q": 10.0,
        "kv": 8.0,
        "checkpoint_hidden": 2.0,
        "logits_per_vocab": 12.0,
        "embedding_grad_copies": 3.0,
    },
    # frozen bf16 base: the residual stream is bf16; LoRA's A saves its input per adapted matrix.
    "lora": {
        "hidden": 20.0,
        "intermediate": 8.0,
        "q": 10.0,
        "kv": 8.0,
        "checkpoint_hidden": 2.0,
        "logits_per_vocab": 12.0,
    },
}
PRIOR_WEIGHT = 0.02

# An under-estimate is a wrong "yes, it fits" — it costs a user a rental — so it weighs three times more.
UNDER_WEIGHT = 3.0


@dataclass(frozen=True)
class PreparedCase:
    """A measured case with its defaults filled in and its model resolved, ready for trial calibrations."""

    case: MeasuredCase
    query: Query
    model: ModelArch
    gpus: int

    @property
    def section(self) -> str:
        return SECTIONS[self.case.recipe]


def prepare(cases: Sequence[MeasuredCase], calibration: Calibration) -> list[PreparedCase]:
    """Resolve each case once. Raises if the shortcut would not give what `estimate` gives, so the fit
    can never drift from the estimator users get."""
    registry = load_registry()
    prepared = []
    for case in cases:
        full = estimate(case.query, calibration=calibration)
        query = full.query.model_copy(update={"card": None, "card_memory_bytes": None})
        one = PreparedCase(case, query, resolve_model(query, registry), query.gpus or 1)
        if tracked(one, calibration) != full.breakdown.tracked:
            raise ValueError(f"{case.case_id}: per_card and estimate disagree; the fit needs updating")
        prepared.append(one)
    return prepared


def tracked(case: PreparedCase, calibration: Calibration) -> int:
    return per_card(case.query, case.model, case.gpus, calibration)[0].tracked


def errors(calibration: Calibration, cases: Sequence[PreparedCase]) -> list[float]:
    """Relative error of the tracked bytes against each measured peak (+0.05: 5% over)."""
    return [tracked(case, calibration) / case.case.peak_bytes - 1 for case in cases]


def loss(calibration: Calibration, cases: Sequence[PreparedCase]) -> float:
    return sum((UNDER_WEIGHT if e < 0 else 1.0) * math.log1p(e) ** 2 for e in errors(calibration, cases))


def with_coeff(calibration: Calibration, section: str, coeff: dict[str, float]) -> Calibration:
    current: ActivationCoefficients = getattr(calibration, section)
    updated = ActivationCoefficients(**(current.model_dump() | coeff))
    return calibration.model_copy(update={section: updated})


def penalty(section: str, coeff: dict[str, float]) -> float:
    priors = PRIORS[section]
    return PRIOR_WEIGHT * sum(math.log((coeff[k] + 0.1) / (v + 0.1)) ** 2 for k, v in priors.items())


# (case id, the section's coefficients) -> tracked bytes. Refits without one model walk mostly the same
# trial points as the fit on every case, so leaving each model out costs about twice one fit, not ten times.
Memo = dict[tuple[str, tuple[float, ...]], int]


def fit_section(
    calibration: Calibration, section: str, cases: Sequence[PreparedCase], memo: Memo | None = None
) -> Calibration:
    """Coordinate search from the priors, steps halving from 50% to 1%."""
    memo = {} if memo is None else memo
    coeff: dict[str, float] = getattr(calibration, section).model_dump() | PRIORS[section]

    def objective(trial: dict[str, float]) -> float:
        candidate = with_coeff(calibration, section, trial)
        point = tuple(getattr(candidate, section).model_dump().values())
        total = 0.0
        for case in cases:
            key = (case.case.case_id, point)
            if key not in memo:
                memo[key] = tracked(case, candidate)
            error = memo[key] / case.case.peak_bytes - 1
            total += (UNDER_WEIGHT if error < 0 else 1.0) * math.log1p(error) ** 2
        return total + penalty(section, trial)

    # Inference logits are the last position only (logits_to_keep=1): too small for the peaks to inform,
    # so that constant stays as derived (bf16 logits + generate()'s fp32 copy).
    keys = list(PRIORS[section])
    best = objective(coeff)
    step = 0.5
    while step > 0.01:
        improved = False
        for key in keys:
            for direction in (+1, -1):
                trial = dict(coeff)
                trial[key] = max(0.0, coeff[key] * (1 + direction * step) if coeff[key] else step)
                value = objective(trial)
                if value < best - 1e-12:
                    best, coeff, improved = value, trial, True
        if not improved:
            step /= 2
    return with_coeff(calibration, section, coeff)


def fit_all(calibration: Calibration, cases: Sequence[PreparedCase], memo: Memo | None = None) -> Calibration:
    for section in SECTIONS.values():
        subset = [c for c in cases if c.section == section]
        if subset:
            calibration = fit_section(calibration, section, subset, memo)
    return calibration


def leave_one_model_out(
    calibration: Calibration, cases: Sequence[PreparedCase]
) -> list[tuple[PreparedCase, float]]:
    """Fit without any of a model's cases, then predict them; each model in turn. Returns (case, error).

    A case reads only its own recipe's coefficients, so only the sections that hold the model are fitted
    again; the others keep the fit on every case, which is what fitting them again would give.
    """
    memo: Memo = {}
    fitted_on_all = fit_all(calibration, cases, memo)
    out: list[tuple[PreparedCase, float]] = []
    for model in sorted({c.case.query.model or "" for c in cases}):
        held = [c for c in cases if c.case.query.model == model]
        fitted = fitted_on_all
        for section in sorted({c.section for c in held}):
            rest = [c for c in cases if c.section == section and c.case.query.model != model]
            if rest:
                fitted = fit_section(fitted, section, rest, memo)
        out.extend(zip(held, errors(fitted, held), strict=True))
    return out
