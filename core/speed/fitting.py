"""Fitting the speed constants (data/speed.toml) to the published figures (data/measured/speed.csv).

The objective is the squared log ratio gpufit / published over the figures marked `fit`, plus a weak pull of
each fitted constant towards its prior (PARAMS: the value a reading of the sources gives before any fit), so a
constant the table says little about stays where the sources put it. The search is coordinate descent over
multiplicative steps; each step re-predicts only the figures the constant moves (found once by perturbing
it), which keeps a whole fit, and the leave-one-source-out check, to seconds. Shared by tools/fit_speed.py
and tests/test_speed_published.py.
"""

from __future__ import annotations

import copy
import math
import statistics
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from core.paths import DATA_DIR
from core.speed.constants import SpeedConstants
from core.speed.published import PreparedFigure, predict

Path = tuple[str, ...]
PRIOR_WEIGHT = 0.02
OUTSIDE_WEIGHT = 20.0
STEPS = (0.5, 0.7, 0.85, 0.95, 1.05, 1.18, 1.4, 2.0)


@dataclass(frozen=True)
class Param:
    path: Path  # keys into data/speed.toml; a [[bandwidth]] entry is named by its `match`
    prior: float
    low: float
    high: float


def _rt(name: str, key: str, prior: float, low: float, high: float) -> Param:
    return Param(("runtimes", name, key), prior, low, high)


def _bw(match: str) -> Param:
    return Param(("bandwidth", match, "efficiency"), 0.8, 0.2, 0.98)


PARAMS: tuple[Param, ...] = (
    _rt("vllm", "launch_s_per_layer", 4e-5, 1e-6, 5e-4),
    _rt("vllm", "step_s", 1e-3, 1e-5, 1e-2),
    _rt("vllm", "seq_s", 2e-5, 1e-7, 5e-4),
    _rt("vllm", "prefill_mfu", 0.55, 0.2, 0.9),
    _rt("vllm", "moe_s_per_layer", 2e-5, 1e-7, 1e-3),
    _rt("vllm", "moe_token_s", 1e-7, 1e-10, 1e-4),
    # vLLM V0's eager decode past max_seq_len_to_capture (8192 tokens): Python launching each layer's kernels
    _rt("vllm", "eager_s_per_layer", 1e-4, 1e-6, 1e-3),
    _rt("sglang", "moe_token_s", 1e-7, 1e-10, 1e-4),
    _rt("sglang", "launch_s_per_layer", 4e-5, 1e-6, 5e-4),
    _rt("sglang", "moe_s_per_layer", 2e-5, 1e-7, 5e-4),
    _rt("sglang", "step_s", 1e-3, 1e-5, 1e-2),
    _rt("sglang", "bandwidth_factor", 1.0, 0.4, 1.25),
    _rt("sglang", "prefill_mfu", 0.55, 0.2, 0.9),
    _rt("tensorrt-llm", "launch_s_per_layer", 2e-5, 1e-6, 5e-4),
    _rt("tensorrt-llm", "step_s", 5e-4, 1e-5, 1e-2),
    _rt("tensorrt-llm", "seq_s", 1e-6, 1e-8, 5e-4),
    _rt("tensorrt-llm", "prefill_mfu", 0.6, 0.2, 0.9),
    _rt("tensorrt-llm", "prefill_fixed_s", 3e-3, 1e-5, 2e-2),
    _rt("tensorrt-llm", "bandwidth_factor", 1.0, 0.4, 1.25),
    # the share of a legacy GQA kernel's KV re-reads that miss L2: the XQA blog's 2.4x at Llama 2 70B's
    # group of 8 gives (2.4 - 1) / 7 = 0.2 (the prior)
    _rt("tensorrt-llm", "legacy_gqa_reread_share", 0.2, 0.0, 1.0),
    _rt("transformers", "launch_s_per_layer", 6e-4, 5e-5, 3e-3),
    _rt("transformers", "step_s", 2e-3, 1e-5, 2e-2),
    _rt("transformers", "launch_serial_share", 0.3, 0.01, 1.0),
    _rt("transformers", "kv_read_factor", 1.0, 0.3, 3.0),
    _rt("transformers", "bandwidth_factor", 1.0, 0.4, 1.25),
    _rt("transformers", "prefill_mfu", 0.45, 0.1, 0.9),
    _rt("llama.cpp", "launch_s_per_layer", 5e-5, 1e-6, 5e-4),
    # what builds since CUDA graphs save per layer: PR #6766's tables give 22 µs (the prior)
    _rt("llama.cpp", "graphs_saving_s_per_layer", 2.2e-5, 1e-6, 1e-4),
    # a MoE layer's extra nodes in llama.cpp's build_moe_ffn (router logits, softmax, argsort / top-k,
    # get_rows of the weights, their sum, clamp and division, the weighting, k - 1 adds over the experts):
    # ~15 small kernels at the ~2 µs a node of a captured dense layer costs (launch_s_per_layer less
    # graphs_saving_s_per_layer over ~25 nodes) is 30 µs (the prior)
    _rt("llama.cpp", "moe_s_per_layer", 3e-5, 1e-7, 5e-4),
    _rt("llama.cpp-metal", "launch_s_per_layer", 1.8e-4, 1e-6, 5e-4),
    _bw("^h20$"),
    _bw("^(a100|a800)"),
    _bw("^(h100|h800|h200)"),
    _bw("^(rtx-4090|rtx-4080|l40s?$|l20$|rtx-6000-ada)"),
    _bw("^(rtx-3090|rtx-3080|rtx-a6000|rtx-a5000|a40$|a10g?$)"),
    _bw("^tesla-p40$"),
    _bw("^m2-ultra$"),
    Param(("formats", "fp8"), 0.9, 0.4, 1.25),
    Param(("formats", "int4"), 0.8, 0.3, 1.25),
    Param(("formats", "gguf_k"), 0.8, 0.3, 1.25),
    Param(("formats", "gguf_legacy"), 0.9, 0.3, 1.25),
    Param(("formats", "diffusion_fp8"), 1.5, 1.0, 2.5),
    # [mfu] is Megatron-Core's utilisation (the frameworks' factors scale it): ~50% on A100 and H100
    # (Megatron-LM README, NeMo performance tables); a 4090 under torchtune ~0.5 of its peak, i.e. ~0.6 before
    # PyTorch's 0.85
    Param(("mfu", "datacenter"), 0.5, 0.2, 0.8),
    Param(("mfu", "consumer"), 0.6, 0.2, 0.9),
    Param(("training", "fp8_gain"), 1.4, 1.0, 2.0),
    Param(("training", "tp_exposed"), 0.3, 0.01, 1.0),
    Param(("training", "dp_exposed"), 0.3, 0.01, 1.0),
    Param(("training", "moe_a2a_exposed"), 0.7, 0.05, 1.0),
    Param(("training", "expert_width_half"), 1000.0, 50.0, 20000.0),
    Param(("training", "cpu_offload_factor"), 0.7, 0.2, 1.0),
    Param(("training", "goodput"), 0.9, 0.5, 1.0),
    Param(("training", "qlora_dequant_bytes_per_param"), 13.5, 2.0, 200.0),
    Param(("training", "frameworks", "pytorch"), 0.85, 0.4, 1.3),
    # Hugging Face stacks: 0.85 of Megatron's utilisation with everything in it; their unfused elementwise
    # kernels are counted apart since issue 22's v5 (data/speed.toml framework_elementwise_bytes), ~13% of a
    # 7B LoRA step on an A100 (the rows that anchor it), so the GEMMs' own share is 0.85 x 1.13 = 0.96
    Param(("training", "frameworks", "hf-trainer"), 0.96, 0.4, 1.3),
    # an eager stack's host time per layer per pass (prior: transformers' decode launch cost per layer) and
    # DeepSpeed ZeRO-3's hooks on top (prior ~7 modules x 0.15 ms)
    Param(("training", "framework_launch_s_per_layer", "hf-trainer"), 5.4e-4, 1e-5, 5e-3),
    Param(("training", "zero3_hook_s_per_layer"), 1e-3, 1e-5, 2e-2),
    Param(("link", "allreduce_latency_s_nvlink"), 1.4e-5, 1e-6, 1e-4),
    Param(("stacks", "rocm_per_layer_factor"), 1.5, 1.0, 4.0),
)


def load_raw() -> dict[str, Any]:
    with open(DATA_DIR / "speed.toml", "rb") as handle:
        return tomllib.load(handle)


def get_value(raw: dict[str, Any], path: Path) -> float:
    node: Any = raw
    if path[0] == "bandwidth":
        node = next(entry for entry in raw["bandwidth"] if entry["match"] == path[1])
        return float(node[path[2]])
    for key in path:
        node = node[key]
    return float(node)


def set_value(raw: dict[str, Any], path: Path, value: float) -> None:
    if path[0] == "bandwidth":
        entry = next(entry for entry in raw["bandwidth"] if entry["match"] == path[1])
        entry[path[2]] = value
        return
    node: Any = raw
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def _cost(r: float) -> float:
    """Squared log ratio, plus a steep wall past ±20% so that no figure is left far outside for the sake of
    the others' fit."""
    return r * r + OUTSIDE_WEIGHT * max(0.0, abs(r) - math.log(1.2)) ** 2


def constants_of(raw: dict[str, Any]) -> SpeedConstants:
    return SpeedConstants.model_validate(raw)


def log_ratio(c: SpeedConstants, figure: PreparedFigure) -> float:
    return math.log(predict(c, figure) / figure.figure.published)


def _sensitivity(
    raw: dict[str, Any], figures: Sequence[PreparedFigure], params: Sequence[Param]
) -> list[list[int]]:
    """For each parameter, the figures whose prediction it moves."""
    base = constants_of(raw)
    before = [predict(base, f) for f in figures]
    moved: list[list[int]] = []
    for param in params:
        trial = copy.deepcopy(raw)
        set_value(trial, param.path, get_value(raw, param.path) * 1.1)
        c = constants_of(trial)
        moved.append([i for i, f in enumerate(figures) if abs(predict(c, f) / before[i] - 1) > 1e-6])
    return moved


def fit(
    raw: dict[str, Any],
    figures: Sequence[PreparedFigure],
    params: Sequence[Param] = PARAMS,
    *,
    sweeps: int = 12,
) -> dict[str, Any]:
    """Coordinate descent on the objective; returns a fitted copy of `raw`."""
    raw = copy.deepcopy(raw)
    fitted = [f for f in figures if f.figure.status == "fit"]
    moved = _sensitivity(raw, fitted, params)
    c = constants_of(raw)
    residual = [log_ratio(c, f) for f in fitted]
    for _ in range(sweeps):
        improved = False
        for param, rows in zip(params, moved, strict=True):
            if not rows:
                continue
            current = get_value(raw, param.path)
            prior_cost = PRIOR_WEIGHT * math.log(current / param.prior) ** 2
            best: tuple[float, float, dict[int, float] | None] = (
                sum(_cost(residual[i]) for i in rows) + prior_cost,
                current,
                None,
            )
            for step in STEPS:
                value = min(max(current * step, param.low), param.high)
                if value == current:
                    continue
                set_value(raw, param.path, value)
                trial_c = constants_of(raw)
                trial = {i: log_ratio(trial_c, fitted[i]) for i in rows}
                cost = (
                    sum(_cost(r) for r in trial.values()) + PRIOR_WEIGHT * math.log(value / param.prior) ** 2
                )
                if cost < best[0] - 1e-12:
                    best = (cost, value, trial)
            set_value(raw, param.path, best[1])
            if best[2] is not None:
                improved = True
                for i, r in best[2].items():
                    residual[i] = r
        if not improved:
            break
    return raw


def ratios(raw: dict[str, Any], figures: Iterable[PreparedFigure]) -> list[tuple[PreparedFigure, float]]:
    c = constants_of(raw)
    return [(f, predict(c, f) / f.figure.published) for f in figures]


def leave_one_source_out(
    raw: dict[str, Any], figures: Sequence[PreparedFigure], *, sweeps: int = 4
) -> list[tuple[PreparedFigure, float]]:
    """Each source's fitted figures predicted by constants fitted without that source: the constants it moves
    restart from their priors and are refitted on the other sources' figures (the rest keep the full fit)."""
    out: list[tuple[PreparedFigure, float]] = []
    sources = sorted({f.figure.source for f in figures if f.figure.status == "fit"})
    for source in sources:
        held = [f for f in figures if f.figure.source == source and f.figure.status == "fit"]
        rest = [f for f in figures if f.figure.source != source]
        touched = [p for p, rows in zip(PARAMS, _sensitivity(raw, held, PARAMS), strict=True) if rows]
        start = copy.deepcopy(raw)
        for param in touched:
            set_value(start, param.path, param.prior)
        refit = fit(start, rest, touched, sweeps=sweeps)
        out.extend(ratios(refit, held))
    return out


def summary(pairs: Sequence[tuple[PreparedFigure, float]]) -> dict[str, float]:
    values = [r for _, r in pairs]
    return {
        "n": len(values),
        "median": statistics.median(values),
        "within_25": sum(1 for r in values if 0.8 <= r <= 1.25),
        "worst": max(values, key=lambda r: abs(math.log(r))),
    }
