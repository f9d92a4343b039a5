"""Speed against published runs (data/measured/speed.csv, sources in speed_sources.toml), like memory against
PyTorch's peaks: every figure marked `fit` within ±25% of its published value with the constants in
data/speed.toml, the fit reproducible (core/speed/fitting.py finds the same quality from the written values),
and each source predicted from the others within ±35% — except where a source is the only one that measured a
card family or a runtime's term (listed below, with why). Figures marked `excluded` say why in the table.
"""

from __future__ import annotations

import math

import pytest

from core.speed.fitting import fit, leave_one_source_out, load_raw, ratios, summary
from core.speed.published import PreparedFigure, load_published, load_sources, prepared_figures

FIT_BOUND = 1.25
HELD_OUT_BOUND = 1.35
# Share of all fitted figures (the listed exceptions included) that their source left out predicts within
# ±35%: 119 of 142 after issue 22's training terms (96 of 117 before); 124 of 146 with the 2025 llama.cpp
# builds and the PCIe collectives (servespeed); 128 of 152 with Qwen's 256 / 512-token LoRA rows and the
# launch and ZeRO-3 hook terms they fit (trainspeed); it may only rise.
LEFT_OUT_WITHIN_35 = 0.84

# Sources whose figures are the only measurement of something the model needs; left out, that term falls back
# to its prior and the source cannot be predicted from the others. They are still held to ±25% when fitted.
ONLY_SOURCE: dict[str, str] = {
    "qwen3-speed": (
        "the only H20 figures and the only fitted SGLang ones: one card and one runtime cannot be told "
        "apart, so the H20's ~35-45% of its 4.0 TB/s under SGLang 0.4.6 sits in SGLang's bandwidth_factor; "
        "dstack's SGLang DeepSeek runs (H200, MI300X) are excluded because one set of SGLang terms does not "
        "fit both, and the held-out SGLang 0.5.8 runs on 8x B200 (speed_heldout2) disagree with it in both "
        "directions (Qwen3-235B 0.6x, GLM-4.6 1.2x), so no other source predicts it"
    ),
    "dzhsurf-deepseek": (
        "the only int4 (AWQ, Marlin kernels) MoE served: dstack's FP8 DeepSeek-R1 runs on vLLM predict its "
        "concurrency 1 within 10% but 15 and 100 about 1.5x too fast, the Marlin MoE kernels' per-token cost"
    ),
    "diffusers-torchao": (
        "the only image-generation figures: the FP8 recipe's speed-up (torchao float8 + torch.compile) and "
        "the diffusion pipeline's utilisation are measured nowhere else"
    ),
    "qwen2.5-speed": (
        "the only dense int4 served (GPTQ-Int4 through Marlin): left out, the int4 kernels' factor is set "
        "by DeepSeek-V3 AWQ's MoE rows alone, whose grouped Marlin MoE kernels are slower, and its two int4 "
        "rows come out 1.5-2x too slow; its other rows (vLLM on A100 80GB to 129k tokens, transformers at "
        "30k with kv_passes' derived pass count) are predicted by the others within ±35%"
    ),
}
# Single figures the others cannot predict, and why.
ONLY_FIGURE: dict[str, str] = {
    "mb-qwen3-30b-a3b-fp8": (
        "the only fine-grained MoE (768-wide experts) trained: its 12% MFU sets the expert GEMM width term, "
        "which no other figure constrains as tightly"
    ),
    "trt-ttft-l40s-7b-2048": "TensorRT-LLM's only L40S prefill: the L40S's FP8 prefill comes from it",
    "trt-h100-70b-b64-2048-2048": (
        "the only fitted decode of a GQA model at long KV before TensorRT-LLM's XQA kernel: it sets "
        "legacy_gqa_reread_share (0.58, 5.1x the KV at its group of 8); left out, the share falls back to "
        "the XQA blog's 2.4x and the row comes out 1.45x too fast"
    ),
    "mb-gpt-oss-120b-bf16": (
        "MoE training is measured by Megatron-Bridge's rows alone: left out with its source, the expert "
        "all-to-all's exposed share and the grouped-GEMM width return to their priors, and this BF16 EP 8 "
        "run comes out ~1.4x"
    ),
    "tt-70b-full-8xa100": (
        "the only optimizer offloaded to host memory (torchtune's 70B full fine-tune on 8 A100): left out, "
        "its factor falls back to the prior 0.7 against the fitted ~0.54, and the figure comes out ~1.37x"
    ),
    "qwen-ft-7b-lora-256": (
        "the shortest micro-batch of a Hugging Face stack in the table (256 tokens): its step is the "
        "host's kernel launches more than the GPU's work, and Qwen's profile is the only fitted Hugging Face "
        "source, so left out the per-layer launch time falls back to the transformers decode prior "
        "(0.54 against ~1.4 ms a layer a pass) and the figure comes out ~1.6x"
    ),
    "qwen-ft-72b-lora-256": (
        "the only DeepSpeed ZeRO-3 run at short micro-batches (Qwen-72B LoRA on 4 A100, 256 tokens): it sets "
        "the ZeRO-3 hooks' host time per layer; left out, it falls back to its 1 ms prior against the fitted "
        "~6.5 ms and the figure comes out ~1.7x"
    ),
    "qwen-ft-72b-lora-512": "as qwen-ft-72b-lora-256 at 512 tokens: ~1.36x left out",
    "trt-l40s-7b-b64-128-2048": (
        "TensorRT-LLM's L40S batch-64 decode: left out, the AD10x family's bandwidth comes from llama.cpp's "
        "batch-1 runs alone"
    ),
}


def _fitted() -> list[PreparedFigure]:
    return [f for f in prepared_figures() if f.figure.status == "fit"]


def test_the_table_is_large_sourced_and_complete() -> None:
    figures = load_published()
    sources = load_sources()
    assert len([f for f in figures if f.status == "fit"]) >= 50
    kinds = {f.kind for f in figures}
    assert {"generate", "serve", "static_batch", "ttft", "train", "pretrain_hours"} <= kinds
    runtimes = {f.runtime for f in figures if not f.is_training}
    assert {"vllm", "sglang", "tensorrt-llm", "transformers", "llama.cpp"} <= runtimes
    for figure in figures:
        assert figure.source in sources, figure.id
        assert figure.published > 0
        if figure.status == "excluded":
            assert len(figure.note) > 40, f"{figure.id}: an excluded figure says why"
    for source in sources.values():
        assert source.url.startswith("http") and source.date and source.setup


def test_every_fitted_figure_is_within_25_percent() -> None:
    pairs = ratios(load_raw(), _fitted())
    outside = [(f.figure.id, round(r, 2)) for f, r in pairs if not 1 / FIT_BOUND <= r <= FIT_BOUND]
    assert not outside
    assert abs(math.log(summary(pairs)["median"])) < 0.05


def test_the_written_constants_are_the_fit() -> None:
    """Refitting from data/speed.toml finds nothing materially better: the file holds the fit."""
    raw = load_raw()
    before = sum(math.log(r) ** 2 for _, r in ratios(raw, _fitted()))
    after = sum(math.log(r) ** 2 for _, r in ratios(fit(raw, prepared_figures(), sweeps=3), _fitted()))
    assert after >= before * 0.9


def test_each_source_is_predicted_by_the_others() -> None:
    held = leave_one_source_out(load_raw(), prepared_figures())
    assert len(held) == len(_fitted())
    checked = [
        (f, r) for f, r in held if f.figure.source not in ONLY_SOURCE and f.figure.id not in ONLY_FIGURE
    ]
    outside = [
        (f.figure.id, round(r, 2)) for f, r in checked if not 1 / HELD_OUT_BOUND <= r <= HELD_OUT_BOUND
    ]
    assert not outside
    assert len(checked) >= 0.55 * len(held)
    within = sum(1 for _, r in held if 1 / HELD_OUT_BOUND <= r <= HELD_OUT_BOUND)
    assert within >= LEFT_OUT_WITHIN_35 * len(held), (within, len(held))


@pytest.mark.parametrize("figure_id", sorted(ONLY_FIGURE))
def test_listed_exceptions_exist(figure_id: str) -> None:
    assert figure_id in {f.id for f in load_published() if f.status == "fit"}
