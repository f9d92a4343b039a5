#!/usr/bin/env python3
"""Measure what PyTorch really allocates for LLM jobs, without a GPU.

Each case builds the real Hugging Face architecture (from ``data/models.toml``, via
``transformers.AutoConfig.for_model``; no weights are downloaded) under
``torch._subclasses.fake_tensor.FakeTensorMode`` -- tensors carry shapes and dtypes but no storage -- and runs
the job under ``torch.distributed._tools.mem_tracker.MemTracker``.  The result is the peak of the bytes held
by live tensors (what ``torch.cuda.max_memory_allocated`` would report, minus allocator rounding), split into
MemTracker's categories at the moment of the peak: Parameter, Buffer, Gradient, Activation, Temp, Optstate.
Not included: CUDA context, caching-allocator slack/fragmentation, cuBLAS/NCCL workspaces.

Recipes (every case uses ``attn_implementation="sdpa"``; MoE experts use transformers'
``experts_implementation="grouped_mm"``):

``inference``
    Weights bf16 (built with ``torch.set_default_dtype(torch.bfloat16)``), ``model.eval()``,
    ``torch.no_grad()``, one prefill forward of ``input_ids`` [batch, seq] with ``use_cache=True``
    (a ``DynamicCache``) and ``logits_to_keep=1`` (only the last position's logits, as ``generate()`` does).
    Peak over the forward.  ``gc`` is not applicable (0).
``full``
    Reference mixed precision: fp32 parameters (master weights), bf16 autocast for forward and loss,
    ``labels=input_ids`` (transformers' own causal-LM loss, which upcasts the logits to fp32), backward,
    ``torch.optim.AdamW(fused=True)``, ``optimizer.step()``, ``zero_grad(set_to_none=True)``.  Two steps; peak
    over both (the optimizer state is created at the first step).
``full-bf16``
    Pure bf16: bf16 parameters, no autocast, fused AdamW whose states are bf16 too.  Two steps.
``lora``
    Base weights bf16 and frozen; ``peft.LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0,
    target_modules="all-linear")``; adapter weights fp32 (peft's default for a bf16 base); bf16 autocast;
    fused AdamW on the trainable parameters only.  Two steps.
``gc``
    1: ``model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})``
    (plus ``model.enable_input_require_grads()`` for LoRA); 0: off.

Autocast is ``torch.autocast("cpu", dtype=torch.bfloat16)``: a CPU-only torch build cannot fake a "cuda"
device far enough to run SDPA (``_fused_sdp_choice`` has no CUDA kernel).  The CPU SDPA path dispatches
``aten._scaled_dot_product_flash_attention_for_cpu`` (and its backward), a flash-style kernel that keeps only
the output and a [batch, heads, seq] fp32 log-sum-exp, like the CUDA flash kernel; the script checks that no
4-D tensor with two trailing ``seq`` dimensions (a batch x heads x seq x seq score matrix or mask) is ever
allocated and records the SDPA kernels it saw in ``memory_notes.csv``.

Each case runs in a fresh subprocess (hooks and caches of transformers/peft/MemTracker would leak otherwise),
with a time limit (default 360 s).  Results are written to the CSV as soon as each case finishes.

Usage::

    python tools/measure_memory.py --out data/measured/memory.csv            # all cases, in order
    python tools/measure_memory.py --out data/measured/memory.csv --only inference/qwen2.5-0.5b/b1-s512
    python tools/measure_memory.py --list
    python tools/measure_memory.py --out data/measured/memory.csv --resume   # skip cases already in the CSV
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime as dt
import json
import math
import os
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MODELS_TOML = ROOT / "data" / "models.toml"

COLUMNS = [
    "case_id", "model", "recipe", "batch", "seq", "gc", "lora_rank", "peak_bytes",
    "parameter_bytes", "buffer_bytes", "gradient_bytes", "activation_bytes", "temp_bytes", "optstate_bytes",
    "seconds", "torch", "transformers", "peft", "date", "completion",
]  # fmt: skip
NOTE_COLUMNS = ["case_id", "status", "sdpa_kernels", "s2_tensors", "param_count", "trainable_params", "note"]

LORA_RANK = 16
LORA_ALPHA = 32
TRAIN_STEPS = 2
# Recipes whose trained policy is a LoRA adapter on a frozen bf16 base, and those with fp32 master weights
# under bf16 autocast (the reference mixed precision).
LORA_RECIPES = frozenset({"lora", "dpo-lora", "grpo-lora"})
FP32_MASTER_RECIPES = frozenset({"full", "full-chunked", "dpo-full", "grpo-full"})
DPO_BETA = 0.1  # TRL DPOConfig.beta
GRPO_BETA = 0.04  # KL weight with a reference (TRL's old default; verl's kl_loss_coef 0.001: same shapes)
GRPO_EPSILON = 0.2  # TRL GRPOConfig.epsilon


# ----------------------------------------------------------------------------------------------------- cases
@dataclass(frozen=True)
class Case:
    # inference | full | full-bf16 | lora | full-chunked | dpo-full | dpo-lora | grpo-full | grpo-lora
    recipe: str
    model: str  # id in data/models.toml
    batch: int  # sequences; DPO: chosen/rejected pairs; GRPO: completions of the one prompt (num_generations)
    seq: int  # tokens per sequence; GRPO: the prompt's tokens
    gc: int = 0
    completion: int = 0  # GRPO: completion tokens per generation

    @property
    def case_id(self) -> str:
        if self.recipe.startswith("grpo"):
            return f"{self.recipe}/{self.model}/g{self.batch}-p{self.seq}-c{self.completion}-gc{self.gc}"
        base = f"{self.recipe}/{self.model}/b{self.batch}-s{self.seq}"
        return base if self.recipe == "inference" else f"{base}-gc{self.gc}"


def _cases() -> list[Case]:
    inf = [
        ("qwen2.5-0.5b", 1, 512), ("qwen2.5-0.5b", 8, 4096), ("qwen2.5-0.5b", 32, 2048),
        ("qwen2.5-1.5b", 1, 32768), ("llama-3.2-1b", 4, 8192),
        ("llama-3.1-8b", 1, 2048), ("llama-3.1-8b", 1, 32768), ("llama-3.1-8b", 16, 4096),
        ("llama-2-7b", 4, 4096), ("llama-2-13b", 1, 4096), ("qwen2.5-7b", 8, 8192),
        ("mistral-7b-v0.3", 2, 16384), ("qwen2.5-14b", 1, 8192), ("qwen2.5-32b", 4, 4096),
        ("qwen2.5-72b", 1, 32768), ("llama-3.1-70b", 8, 2048), ("mixtral-8x7b", 1, 4096),
        ("qwen3-30b-a3b", 4, 8192), ("qwen1.5-moe-a2.7b", 8, 2048), ("qwen3-8b", 2, 16384),
        ("phi-3-mini", 1, 4096),
        # measured after the calibration was fitted (held out): MLA + DeepSeek MoE, explicit head_dim
        ("deepseek-v2-lite", 2, 4096), ("mistral-nemo-12b", 1, 8192), ("gemma-2-2b", 1, 4096),
        # issue 11: contexts past the sliding window (Mistral v0.1, Gemma 2 eager, Gemma 3's 512), MLA at
        # long context, hybrid linear attention (Qwen3-Next), a 152k vocabulary at batch 8
        ("mistral-7b-v0.1", 1, 16384), ("gemma-2-2b", 1, 16384), ("gemma-3-1b", 1, 16384),
        ("deepseek-v2-lite", 1, 32768), ("qwen3-next-80b-a3b", 1, 8192), ("qwen3-0.6b", 8, 4096),
        # a vision-language model (a text prompt: the vision tower's weights are resident)
        ("qwen2.5-vl-3b", 2, 4096),
    ]  # fmt: skip
    full = [
        ("qwen2.5-0.5b", 1, 512, 0), ("qwen2.5-0.5b", 4, 2048, 0), ("qwen2.5-0.5b", 8, 4096, 1),
        ("qwen2.5-0.5b", 1, 32768, 1), ("llama-3.2-1b", 4, 1024, 0), ("llama-3.2-1b", 2, 8192, 1),
        ("qwen2.5-1.5b", 2, 2048, 0), ("qwen2.5-1.5b", 16, 1024, 1), ("llama-3.2-3b", 4, 768, 0),
        ("llama-3.2-3b", 2, 4096, 1), ("qwen2.5-3b", 1, 16384, 1), ("llama-3.1-8b", 2, 2048, 1),
        ("llama-3.1-8b", 1, 4096, 0), ("qwen2.5-7b", 4, 4096, 1), ("qwen2.5-14b", 1, 2048, 1),
        ("qwen1.5-moe-a2.7b", 2, 2048, 0), ("qwen3-30b-a3b", 1, 4096, 1), ("qwen2.5-72b", 1, 2048, 1),
        # issue 11: small models with 152k-262k vocabularies, no checkpointing, batch >= 4
        ("qwen3-0.6b", 4, 2048, 0), ("gemma-3-1b", 4, 2048, 0),
    ]  # fmt: skip
    full_bf16 = [("llama-3.2-3b", 4, 768, 0)]
    # issue 18: pure bf16 at 0.5B-1.5B with 152k vocabularies, batch 8 without checkpointing
    full_bf16 += [("qwen3-0.6b", 8, 2048, 0), ("qwen2.5-0.5b", 8, 1024, 0), ("qwen2.5-1.5b", 8, 1024, 0)]
    lora = [
        ("qwen2.5-0.5b", 4, 2048, 0), ("qwen2.5-0.5b", 16, 4096, 1), ("llama-3.2-1b", 8, 1024, 0),
        ("llama-3.2-3b", 4, 768, 0), ("llama-3.2-3b", 2, 4096, 1), ("llama-3.1-8b", 2, 2048, 1),
        ("llama-3.1-8b", 1, 8192, 0), ("qwen2.5-7b", 1, 32768, 1), ("llama-2-13b", 4, 2048, 1),
        ("qwen2.5-14b", 2, 4096, 1), ("qwen2.5-32b", 1, 4096, 1), ("llama-3.1-70b", 1, 2048, 1),
        ("mixtral-8x7b", 1, 2048, 1), ("qwen1.5-moe-a2.7b", 4, 2048, 1), ("qwen2.5-72b", 1, 8192, 1),
        # issue 11: big vocabularies without checkpointing at batch >= 4; with checkpointing at
        # batch x seq >= 32k tokens, where the logits of a 128k+ vocabulary outweigh the weights
        ("qwen3-0.6b", 8, 2048, 0), ("gemma-3-1b", 4, 2048, 0), ("llama-3.2-1b", 8, 4096, 1),
        ("qwen3-1.7b", 16, 2048, 1), ("qwen3-8b", 4, 8192, 1),
        # eager attention trained at long context (Gemma 2: the seq² probabilities are saved per layer)
        ("gemma-2-2b", 1, 8192, 1), ("gemma-2-2b", 2, 4096, 0),
        # MLA + DeepSeek MoE trained at long context
        ("deepseek-v2-lite", 1, 16384, 1),
    ]  # fmt: skip
    # issue 18: GLM-4-0414 (model_type glm4: post-attention and post-MLP norms besides the pre-norms)
    inf += [("glm-4-9b-0414", 1, 8192), ("glm-4-32b-0414", 1, 4096)]
    full += [("glm-4-9b-0414", 1, 2048, 1)]
    lora += [("glm-4-9b-0414", 2, 4096, 1), ("glm-4-9b-0414", 1, 2048, 0), ("glm-4-32b-0414", 1, 4096, 1)]
    # issue 18: 0.5B-1.5B models fully fine-tuned at batch 1-16 without checkpointing (a 0.6B at batch 8 was
    # 5.8% under on a held-out case)
    full += [
        ("qwen3-0.6b", 1, 2048, 0), ("qwen3-0.6b", 8, 2048, 0), ("qwen3-0.6b", 16, 1024, 0),
        ("qwen2.5-0.5b", 8, 1024, 0), ("qwen2.5-0.5b", 16, 512, 0), ("qwen2.5-1.5b", 1, 1024, 0),
        ("qwen2.5-1.5b", 8, 1024, 0), ("llama-3.2-1b", 8, 512, 0),
    ]  # fmt: skip
    # issue 18: full fine-tuning with a fused linear cross-entropy (Liger): the logits are never whole
    chunked = [
        ("qwen2.5-0.5b", 8, 4096, 1), ("qwen3-0.6b", 4, 2048, 0), ("llama-3.2-1b", 2, 8192, 1),
        ("qwen2.5-1.5b", 4, 8192, 1), ("qwen2.5-7b", 2, 16384, 1), ("llama-3.1-8b", 1, 32768, 1),
    ]  # fmt: skip
    # issue 18: DPO (chosen + rejected through the policy, the frozen reference's forward without grad)
    dpo_full = [
        ("qwen2.5-0.5b", 2, 1024, 0), ("llama-3.2-1b", 2, 2048, 1), ("qwen2.5-1.5b", 4, 2048, 1),
        ("llama-3.1-8b", 1, 2048, 1), ("qwen2.5-7b", 2, 4096, 1),
    ]  # fmt: skip
    dpo_lora = [
        ("qwen2.5-0.5b", 4, 2048, 1), ("llama-3.1-8b", 2, 2048, 1), ("qwen2.5-7b", 1, 4096, 0),
        ("qwen2.5-14b", 2, 2048, 1),
    ]  # fmt: skip
    # issue 18: GRPO's update step (num_generations completions of one prompt; the reference's forward)
    grpo_full = [
        ("qwen2.5-0.5b", 8, 256, 1024, 1), ("llama-3.2-1b", 4, 256, 768, 0),
        ("qwen2.5-1.5b", 8, 512, 1536, 1), ("qwen2.5-7b", 8, 512, 2048, 1),
        ("llama-3.1-8b", 16, 256, 1024, 1),
    ]  # fmt: skip
    grpo_lora = [
        ("qwen2.5-3b", 16, 256, 1024, 1), ("qwen2.5-7b", 8, 512, 2048, 1), ("llama-3.1-8b", 8, 1024, 4096, 1),
    ]  # fmt: skip
    out = [Case("inference", m, b, s) for m, b, s in inf]
    out += [Case("full", m, b, s, g) for m, b, s, g in full]
    out += [Case("full-bf16", m, b, s, g) for m, b, s, g in full_bf16]
    out += [Case("lora", m, b, s, g) for m, b, s, g in lora]
    out += [Case("full-chunked", m, b, s, g) for m, b, s, g in chunked]
    out += [Case("dpo-full", m, b, s, g) for m, b, s, g in dpo_full]
    out += [Case("dpo-lora", m, b, s, g) for m, b, s, g in dpo_lora]
    out += [Case("grpo-full", m, g, p, gc, c) for m, g, p, c, gc in grpo_full]
    out += [Case("grpo-lora", m, g, p, gc, c) for m, g, p, c, gc in grpo_lora]
    return out


CASES = _cases()


# ------------------------------------------------------------------------------------ architecture -> config
def load_models() -> dict[str, dict[str, Any]]:
    with MODELS_TOML.open("rb") as f:
        data = tomllib.load(f)
    return {m["id"]: m for m in data["model"]}


def config_kwargs(m: dict[str, Any]) -> dict[str, Any]:
    """Map our models.toml field names to the kwargs of the model type's transformers config."""
    mt = m["hf_model_type"]
    kw: dict[str, Any] = {
        "num_hidden_layers": m["layers"],
        "hidden_size": m["hidden"],
        "intermediate_size": m["intermediate"],
        "num_attention_heads": m["heads"],
        "num_key_value_heads": m.get("kv_heads", m["heads"]),
        "vocab_size": m["vocab"],
        "tie_word_embeddings": bool(m.get("tied_embeddings", False)),
        "max_position_embeddings": m.get("max_context", 4096),
    }
    if m.get("head_dim"):
        kw["head_dim"] = m["head_dim"]
    if mt in ("llama", "mistral", "mixtral", "qwen3", "qwen3_moe", "gemma2", "olmo2", "granite", "glm4"):
        kw["attention_bias"] = bool(m.get("attention_bias", False))
    if mt == "llama":
        kw["mlp_bias"] = bool(m.get("mlp_bias", False))
    # Sliding windows: only Mistral/Mixtral/Phi-3 configs carry an unconditional `sliding_window`; Qwen keep
    # it off (use_sliding_window=False) as their shipped configs do.
    if mt in ("mistral", "mixtral", "phi3"):
        kw["sliding_window"] = m.get("sliding_window") or None
    layers = m["layers"]
    if mt in ("gemma2", "gemma3_text") and m.get("sliding_window"):
        # Local layers: Gemma 2 alternates (even layers local), Gemma 3 has 5 local : 1 global.
        period = 2 if mt == "gemma2" else 6
        kw["sliding_window"] = m["sliding_window"]
        kw["layer_types"] = [
            "full_attention" if (i + 1) % period == 0 else "sliding_attention" for i in range(layers)
        ]
    if mt == "qwen3_next":
        # Gated DeltaNet layers with one gated-attention layer every four.
        kw.update(
            linear_num_key_heads=m["linear_key_heads"],
            linear_num_value_heads=m["linear_value_heads"],
            linear_key_head_dim=m["linear_key_head_dim"],
            linear_value_head_dim=m["linear_value_head_dim"],
            linear_conv_kernel_dim=m.get("linear_conv_kernel", 4),
            layer_types=["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(layers)],
            shared_expert_intermediate_size=m["shared_expert_intermediate"],
        )
    if mt == "qwen2_5_vl":
        # Nested text and vision configs (Qwen2_5_VLConfig); the vision tower as models.toml gives it.
        vision = {
            "depth": m["vision_layers"],
            "hidden_size": m["vision_hidden"],
            "intermediate_size": m["vision_intermediate"],
            "out_hidden_size": m["hidden"],
            "patch_size": m.get("vision_patch", 14),
        }
        text = dict(kw, attention_bias=True)
        tied = text["tie_word_embeddings"]
        return {"text_config": text, "vision_config": vision, "tie_word_embeddings": tied}
    if mt in ("deepseek_v2", "deepseek_v3"):
        # MLA and DeepSeek's MoE (routed + shared experts, the first k layers dense).
        kw.update(
            kv_lora_rank=m["kv_lora_rank"],
            q_lora_rank=m.get("q_lora_rank") or None,
            qk_rope_head_dim=m["qk_rope_head_dim"],
            qk_nope_head_dim=m["qk_nope_head_dim"],
            v_head_dim=m["v_head_dim"],
            n_routed_experts=m["experts"],
            n_shared_experts=m["shared_experts"],
            moe_intermediate_size=m["moe_intermediate"],
            first_k_dense_replace=m.get("dense_layers", 0),
            num_experts_per_tok=m["experts_active"],
        )
        kw.pop("head_dim", None)
    elif m.get("experts"):
        kw["num_experts_per_tok"] = m["experts_active"]
        if mt == "mixtral":
            kw["num_local_experts"] = m["experts"]
            kw["intermediate_size"] = m.get("moe_intermediate", m["intermediate"])
        else:  # qwen2_moe, qwen3_moe
            kw["num_experts"] = m["experts"]
            kw["moe_intermediate_size"] = m["moe_intermediate"]
            kw["decoder_sparse_step"] = 1
            kw["mlp_only_layers"] = []
        if mt == "qwen2_moe":
            kw["shared_expert_intermediate_size"] = m.get("shared_expert_intermediate", m["intermediate"])
        if mt in ("qwen3_moe", "qwen3_next"):
            kw["norm_topk_prob"] = True
    return kw


# ----------------------------------------------------------------------------------------- one measurement
def _measure(case: Case, model_cfg: dict[str, Any]) -> dict[str, Any]:
    import torch
    import transformers
    from torch import nn
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.distributed._tools.mem_tracker import MemTracker
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForImageTextToText

    try:
        import peft

        peft_version = peft.__version__
    except ImportError:
        peft = None
        peft_version = ""

    class _NoopHandle:
        def remove(self) -> None:
            pass

    class Tracker(MemTracker):
        """MemTracker that (1) tolerates frozen parameters, (2) keeps only the global peak (module-wise peaks
        cost O(modules) per op and are not used), (3) records SDPA kernels and any [.., seq, seq] tensor."""

        def __init__(self, seq: int) -> None:
            super().__init__()
            self.seq = seq
            self.funcs: set[Any] = set()
            self.s2: dict[str, int] = {}

        def _track_module_params_and_buffers(self, module: nn.Module, install_grad_hooks: bool = True):  # type: ignore[no-untyped-def]
            for p in module.parameters():
                if not p.requires_grad and self._param_to_grad_hook_handles.get(p, None) is None:
                    self._param_to_grad_hook_handles[p] = (_NoopHandle(), _NoopHandle())
            return super()._track_module_params_and_buffers(module, install_grad_hooks)

        def _update_peak_stats(self, peak_state: Any) -> None:
            for dev, dev_snap in self._curr_mem_snap.items():
                if self._peak_mem.get(dev, 0) < dev_snap["Total"]:
                    self._peak_mem[dev] = dev_snap["Total"]
                    self._peak_mem_snap[dev] = dict(dev_snap)

        def _track(self, reftype: Any, t: torch.Tensor) -> None:
            if t.dim() == 4 and t.shape[-1] == self.seq and t.shape[-2] == self.seq and self.seq > 1:
                key = f"{tuple(t.shape)}:{str(t.dtype).removeprefix('torch.')}"
                self.s2[key] = self.s2.get(key, 0) + 1
            super()._track(reftype, t)

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            self.funcs.add(func)
            return super().__torch_dispatch__(func, types, args, kwargs)

    # Fake tensors make transformers give up on detecting packed sequences from position_ids (it cannot read
    # their values), so it would build a [batch, 1, seq, seq] mask for every training forward. With real
    # inputs (one unpadded sequence per row) it finds none and passes is_causal=True to SDPA; do the same.
    from transformers import masking_utils

    masking_utils.find_packed_sequence_indices = lambda position_ids: None

    # torch's fake/meta kernel for grouped_mm accepts bf16 only (the CUDA kernel falls back to a per-expert mm
    # loop for other dtypes), so fp32 experts (the `full` recipe's master weights) would fail here; route them
    # through transformers' own `grouped_mm_fallback` op instead: same output shapes and dtypes.
    import transformers.integrations.moe as tf_moe

    _orig_can = tf_moe._can_use_grouped_mm
    tf_moe._can_use_grouped_mm = lambda i, w, o: w.dtype == torch.bfloat16 and _orig_can(i, w, o)

    mt_name = model_cfg["hf_model_type"]
    cfg = AutoConfig.for_model(mt_name, **config_kwargs(model_cfg))
    is_moe = bool(model_cfg.get("experts"))
    # models.toml marks the models whose transformers code has no SDPA path (Gemma 2, T5, BLOOM, MLA).
    attention = "eager" if model_cfg.get("attention") == "eager" else "sdpa"
    build_kwargs: dict[str, Any] = {"attn_implementation": attention}
    if is_moe:
        build_kwargs["experts_implementation"] = "grouped_mm"

    train = case.recipe != "inference"
    lora_policy = case.recipe in LORA_RECIPES
    fp32_master = case.recipe in FP32_MASTER_RECIPES
    param_dtype = torch.float32 if fp32_master else torch.bfloat16
    autocast = fp32_master or lora_policy
    algorithm = case.recipe.split("-")[0] if case.recipe.startswith(("dpo-", "grpo-")) else ""
    # tokens per sequence (GRPO: prompt + completion)
    length = case.seq + case.completion
    t0 = time.time()
    fake = FakeTensorMode()
    with fake:
        prev = torch.get_default_dtype()
        torch.set_default_dtype(param_dtype)
        try:
            auto = AutoModelForImageTextToText if model_cfg.get("vision_layers") else AutoModelForCausalLM
            model = auto.from_config(cfg, **build_kwargs)
        finally:
            torch.set_default_dtype(prev)
        n_params = sum(p.numel() for p in model.parameters())

        # DPO / GRPO with a fully trained policy: a frozen 16-bit reference copy (TRL's ref_model); a LoRA
        # policy's reference is its base with the adapter disabled (peft's disable_adapter, as TRL does).
        ref = None
        if algorithm and not lora_policy:
            prev = torch.get_default_dtype()
            torch.set_default_dtype(torch.bfloat16)
            try:
                ref = AutoModelForCausalLM.from_config(cfg, **build_kwargs)
            finally:
                torch.set_default_dtype(prev)
            ref.requires_grad_(False)
            ref.eval()

        if lora_policy:
            assert peft is not None, "peft is required for the lora recipe"
            from peft.tuners.tuners_utils import BaseTunerLayer

            model.requires_grad_(False)
            # peft moves every new adapter (and the wrapped layer) with .to(device[, dtype]); swapping fake
            # parameters fails, and everything here already sits on the one (fake) cpu device, so make those
            # moves no-ops while the adapters are injected.
            orig_move = BaseTunerLayer._move_adapter_to_device_of_base_layer
            orig_to = nn.Module.to
            BaseTunerLayer._move_adapter_to_device_of_base_layer = lambda self, *a, **k: None  # type: ignore[method-assign]
            nn.Module.to = lambda self, *a, **k: self  # type: ignore[method-assign]
            try:
                lcfg = peft.LoraConfig(
                    r=LORA_RANK, lora_alpha=LORA_ALPHA, lora_dropout=0.0, target_modules="all-linear",
                    task_type="CAUSAL_LM",
                )  # fmt: skip
                model = peft.get_peft_model(model, lcfg, autocast_adapter_dtype=False)
            finally:
                BaseTunerLayer._move_adapter_to_device_of_base_layer = orig_move  # type: ignore[method-assign]
                nn.Module.to = orig_to  # type: ignore[method-assign]
            # fp32 adapters: new fp32 Parameters instead of .to() (fake parameters cannot be swapped).
            for mod in list(model.modules()):
                for name, p in list(mod.named_parameters(recurse=False)):
                    if p.requires_grad and p.dtype != torch.float32:
                        setattr(mod, name, nn.Parameter(torch.empty(p.shape, dtype=torch.float32)))
        trainable = [p for p in model.parameters() if p.requires_grad] if train else []
        n_trainable = sum(p.numel() for p in trainable)

        if train:
            model.train()
            if case.gc:
                model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
                if lora_policy:
                    model.enable_input_require_grads()
        else:
            model.eval()

        tracker = Tracker(length)
        tracker.track_external(model, *([ref] if ref is not None else []))
        opt = torch.optim.AdamW(trainable, lr=1e-5, fused=True) if train else None
        with tracker:
            # DPO: chosen and rejected concatenated along the batch (TRL concatenated_forward)
            rows = 2 * case.batch if algorithm == "dpo" else case.batch
            ids = torch.randint(0, model_cfg["vocab"], (rows, length))
            if not train:
                with torch.no_grad():
                    out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
                cache_type = type(out.past_key_values).__name__
                del out
            else:
                cache_type = ""
                for _ in range(TRAIN_STEPS):
                    bf16 = torch.autocast("cpu", dtype=torch.bfloat16)
                    with bf16 if autocast else contextlib.nullcontext():
                        if algorithm == "dpo":
                            loss = _dpo_loss(model, ref, ids, case.batch, tracker.reset_mod_stats)
                        elif algorithm == "grpo":
                            loss = _grpo_loss(model, ref, ids, case.completion, tracker.reset_mod_stats)
                        elif case.recipe == "full-chunked":
                            loss = _fused_linear_ce_loss(model, ids)
                        else:
                            out = model(input_ids=ids, labels=ids, use_cache=False)
                            loss = out.loss
                            del out
                    loss.backward()
                    del loss
                    assert opt is not None
                    opt.step()
                    opt.zero_grad(set_to_none=True)
                    tracker.reset_mod_stats()
        seconds = time.time() - t0
        snap = next(iter(tracker.get_tracker_snapshot("peak").values()))

    cats = {str(getattr(k, "value", k)): v for k, v in snap.items()}
    sdpa = sorted({str(f) for f in tracker.funcs if "scaled_dot_product" in str(f)})
    row = {
        "case_id": case.case_id, "model": case.model, "recipe": case.recipe, "batch": case.batch,
        "seq": case.seq, "gc": case.gc, "lora_rank": LORA_RANK if lora_policy else 0,
        "peak_bytes": cats.get("Total", 0), "parameter_bytes": cats.get("Parameter", 0),
        "buffer_bytes": cats.get("Buffer", 0), "gradient_bytes": cats.get("Gradient", 0),
        "activation_bytes": cats.get("Activation", 0), "temp_bytes": cats.get("Temp", 0),
        "optstate_bytes": cats.get("Optstate", 0), "seconds": round(seconds, 1),
        "torch": torch.__version__, "transformers": transformers.__version__, "peft": peft_version,
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"), "completion": case.completion or "",
    }  # fmt: skip
    other = cats.get("Other", 0)
    note = {
        "case_id": case.case_id, "status": "ok", "sdpa_kernels": " ".join(sdpa),
        "s2_tensors": " ".join(f"{k}x{v}" for k, v in sorted(tracker.s2.items())),
        "param_count": n_params, "trainable_params": n_trainable,
        "note": (f"cache={cache_type} " if cache_type else "") + (f"other_bytes={other}" if other else ""),
    }  # fmt: skip
    return {"row": row, "note": note}


# --------------------------------------------------------------------------- preference / RL / fused losses
# What TRL and Liger compute, written out here (installing them would pull accelerate, datasets, triton);
# each follows its source and allocates the same tensors.
def _selective_log_softmax(logits: Any, index: Any) -> Any:
    """TRL trainer/utils.py `selective_log_softmax` for 16-bit logits: a log-softmax per row (one sequence at
    a time, to bound the peak), gathered at the labels. CUDA autocast runs log_softmax in fp32 (torch.amp's
    "ops that can autocast to float32"); CPU autocast is not relied on for that: the fp32 cast is explicit."""
    import torch

    out = []
    for row, row_labels in zip(logits, index, strict=True):
        row_logits = row.float() if torch.is_autocast_enabled("cpu") and row.dtype == torch.bfloat16 else row
        row_logps = torch.log_softmax(row_logits, dim=-1)
        out.append(row_logps.gather(dim=-1, index=row_labels.unsqueeze(-1)).squeeze(-1))
    return torch.stack(out)


def _reference_logits(model: Any, ref: Any, reset: Any, **kwargs: Any) -> Any:
    """The frozen reference's logits without grad: its own copy, or the policy with its LoRA adapter off (the
    same modules run twice in the step, so MemTracker's module stats are reset in between; `reset`)."""
    import torch

    with torch.no_grad():
        if ref is not None:
            return ref(use_cache=False, **kwargs).logits
        with model.disable_adapter():
            logits = model(use_cache=False, **kwargs).logits
        reset()
        return logits


def _dpo_loss(model: Any, ref: Any, ids: Any, pairs: int, reset: Any) -> Any:
    """TRL DPOTrainer (loss_type "sigmoid", precompute_ref_log_probs False): the reference's sequence
    log-probs under no_grad, then the policy's on the same concatenated chosen + rejected batch."""
    import torch

    labels = torch.roll(ids, shifts=-1, dims=1)
    ref_logits = _reference_logits(model, ref, reset, input_ids=ids)
    with torch.no_grad():
        ref_logps = _selective_log_softmax(ref_logits, labels).sum(-1)
    del ref_logits
    logits = model(input_ids=ids, use_cache=False).logits
    logps = _selective_log_softmax(logits, labels).sum(-1)
    del logits
    chosen, rejected = logps[:pairs] - ref_logps[:pairs], logps[pairs:] - ref_logps[pairs:]
    return -torch.nn.functional.logsigmoid(DPO_BETA * (chosen - rejected)).mean()


def _completion_logps(forward: Any, ids: Any, keep: int) -> Any:
    """TRL GRPOTrainer `_get_per_token_logps`: the model runs with logits_to_keep = keep + 1 (only completion
    positions get logits), which are shifted, divided by the temperature (a new tensor; the model's output is
    dropped then, as TRL's reassignment of `logits` drops it) and log-softmaxed per row."""
    logits = forward()
    logits = logits[:, :-1, :][:, -keep:] / 1.0  # temperature 1.0: TRL still divides
    return _selective_log_softmax(logits, ids[:, -keep:])


def _grpo_loss(model: Any, ref: Any, ids: Any, keep: int, reset: Any) -> Any:
    """TRL GRPOTrainer `_compute_loss` with a reference (beta > 0, verl's use_kl_loss): the reference's
    per-token log-probs under no_grad (computed with the generations), then the policy's, the clipped ratio
    against the advantages and the k3 KL term, averaged over completion tokens."""
    import torch

    with torch.no_grad():
        ref_logps = _completion_logps(
            lambda: _reference_logits(model, ref, reset, input_ids=ids, logits_to_keep=keep + 1), ids, keep
        )
    logps = _completion_logps(
        lambda: model(input_ids=ids, use_cache=False, logits_to_keep=keep + 1).logits, ids, keep
    )
    advantages = torch.randn(ids.shape[0], 1)
    kl = torch.exp(ref_logps - logps) - (ref_logps - logps) - 1
    ratio = torch.exp(logps - logps.detach())
    clipped = torch.clamp(ratio, 1 - GRPO_EPSILON, 1 + GRPO_EPSILON)
    per_token = -torch.min(ratio * advantages, clipped * advantages) + GRPO_BETA * kl
    return per_token.mean(-1).mean()


def _fused_linear_ce_loss(model: Any, ids: Any) -> Any:
    """Liger's fused linear cross-entropy as its transformers patch uses it: the final hidden states, shifted,
    go to LigerFusedLinearCrossEntropyFunction with lm_head's weight, so the logits never exist whole."""
    hidden = model.model(input_ids=ids, use_cache=False).last_hidden_state
    shifted = hidden[:, :-1, :].contiguous().view(-1, hidden.shape[-1])
    del hidden
    labels = ids[:, 1:].contiguous().view(-1)
    return _FusedLinearCrossEntropy.apply(shifted, model.lm_head.weight, labels)


def _liger_chunk_tokens(tokens: int, vocab: int, hidden: int) -> int:
    """liger_kernel/ops/fused_linear_cross_entropy.py: chunk_size = next_power_of_2(cdiv(BT, cdiv(V, H)))."""
    per = -(-tokens // -(-vocab // hidden))
    return 1 << max(0, math.ceil(math.log2(max(1, per))))


def _fused_linear_ce_function() -> Any:
    import torch

    class FusedLinearCrossEntropy(torch.autograd.Function):
        """Liger's algorithm: in the forward, chunk by chunk, the chunk's logits, their softmax (the gradient,
        written in place over the logits by Liger's kernel; here an fp32 copy of one chunk), the chunk's input
        gradient and the weight gradient accumulated; the backward hands the saved gradients on."""

        @staticmethod
        def forward(ctx: Any, h: Any, weight: Any, target: Any) -> Any:
            tokens = h.shape[0]
            chunk = _liger_chunk_tokens(tokens, weight.shape[0], weight.shape[1])
            grad_h = torch.zeros_like(h)
            grad_w = torch.zeros_like(weight)
            loss = torch.zeros((), dtype=torch.float32)
            for start in range(0, tokens, chunk):
                h_chunk, t_chunk = h[start : start + chunk], target[start : start + chunk]
                logits = (h_chunk @ weight.t()).float()  # bf16 under autocast, softmax in fp32
                lse = torch.logsumexp(logits, dim=-1)
                loss = loss + (lse - logits.gather(-1, t_chunk.unsqueeze(-1)).squeeze(-1)).sum()
                grad = torch.softmax(logits, dim=-1)
                del logits
                grad[torch.arange(grad.shape[0]), t_chunk] -= 1
                grad = (grad / tokens).to(torch.bfloat16)
                grad_h[start : start + chunk] = grad @ weight
                grad_w.addmm_(grad.t().to(grad_w.dtype), h_chunk.to(grad_w.dtype))
                del grad
            ctx.save_for_backward(grad_h, grad_w)
            return loss / tokens

        @staticmethod
        def backward(ctx: Any, grad_output: Any) -> Any:
            grad_h, grad_w = ctx.saved_tensors
            return grad_h, grad_w, None  # grad_output is 1 (Liger skips the multiply then)

    return FusedLinearCrossEntropy


class _LazyFunction:
    """Builds the autograd.Function on first use, so the driver process never imports torch."""

    fn: Any = None

    def apply(self, *args: Any) -> Any:
        if self.fn is None:
            self.fn = _fused_linear_ce_function()
        return self.fn.apply(*args)


_FusedLinearCrossEntropy = _LazyFunction()


# ------------------------------------------------------------------------------------------------- driver
def _read_csv(path: Path) -> dict[str, dict[str, str]]:
    if not path.exists():
        return {}
    with path.open(newline="") as f:
        return {r["case_id"]: r for r in csv.DictReader(f)}


def _write_csv(path: Path, columns: list[str], rows: dict[str, dict[str, Any]]) -> None:
    order = {c.case_id: i for i, c in enumerate(CASES)}
    ids = sorted(rows, key=lambda k: (order.get(k, len(order)), k))
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        for k in ids:
            w.writerow(rows[k])
    os.replace(tmp, path)


def _child(case_id: str, result_path: str) -> int:
    case = next(c for c in CASES if c.case_id == case_id)
    models = load_models()
    res = _measure(case, models[case.model])
    Path(result_path).write_text(json.dumps(res))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "data" / "measured" / "memory.csv"))
    ap.add_argument("--only", nargs="+", metavar="CASE_ID", help="measure only these cases")
    ap.add_argument("--list", action="store_true", help="list the case ids and exit")
    ap.add_argument("--resume", action="store_true", help="skip cases already in --out")
    ap.add_argument("--timeout", type=int, default=360, help="seconds per case (default 360)")
    ap.add_argument("--_child", nargs=2, metavar=("CASE_ID", "RESULT_JSON"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args._child:
        return _child(*args._child)
    if args.list:
        for c in CASES:
            print(c.case_id)
        return 0

    known = {c.case_id for c in CASES}
    if args.only:
        unknown = [c for c in args.only if c not in known]
        if unknown:
            ap.error(f"unknown case ids: {unknown} (see --list)")
    todo = [c for c in CASES if not args.only or c.case_id in args.only]
    models = load_models()

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    notes_path = out.with_name(out.stem + "_notes.csv")
    rows: dict[str, dict[str, Any]] = dict(_read_csv(out))
    notes: dict[str, dict[str, Any]] = dict(_read_csv(notes_path))
    if args.resume:
        todo = [c for c in todo if c.case_id not in rows]

    failed = 0
    for i, case in enumerate(todo, 1):
        tag = f"[{i}/{len(todo)}] {case.case_id}"
        if case.model not in models:
            print(f"{tag}: SKIP (model not in {MODELS_TOML.name})", flush=True)
            notes[case.case_id] = {
                "case_id": case.case_id,
                "status": "skipped",
                "note": "model not in models.toml",
            }
            _write_csv(notes_path, NOTE_COLUMNS, notes)
            failed += 1
            continue
        result_json = out.with_name(f".measure-{os.getpid()}.json")
        t0 = time.time()
        cmd = [sys.executable, str(Path(__file__).resolve()), "--_child", case.case_id, str(result_json)]
        try:
            proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=args.timeout)
            rc, err = proc.returncode, proc.stderr
        except subprocess.TimeoutExpired:
            rc, err = -1, f"timeout after {args.timeout}s"
        if rc == 0 and result_json.exists():
            res = json.loads(result_json.read_text())
            result_json.unlink()
            rows[case.case_id] = res["row"]
            notes[case.case_id] = res["note"]
            _write_csv(out, COLUMNS, rows)
            _write_csv(notes_path, NOTE_COLUMNS, notes)
            r = res["row"]
            print(
                f"{tag}: peak {r['peak_bytes'] / 2**30:.2f} GiB (param {r['parameter_bytes'] / 2**30:.2f}, "
                f"grad {r['gradient_bytes'] / 2**30:.2f}, act {r['activation_bytes'] / 2**30:.2f}, "
                f"temp {r['temp_bytes'] / 2**30:.2f}, opt {r['optstate_bytes'] / 2**30:.2f}) "
                f"{r['seconds']}s [{time.time() - t0:.0f}s wall] {res['note']['sdpa_kernels']} "
                f"s2={res['note']['s2_tensors'] or 'none'}",
                flush=True,
            )
        else:
            failed += 1
            last = (err or "").strip().splitlines()[-1:] or ["?"]
            status = "timeout" if rc == -1 else "failed"
            print(f"{tag}: {status.upper()} rc={rc}: {last[0][:300]}", flush=True)
            notes[case.case_id] = {"case_id": case.case_id, "status": status, "note": last[0][:300]}
            _write_csv(notes_path, NOTE_COLUMNS, notes)
            result_json.unlink(missing_ok=True)
    print(f"done: {len(todo) - failed} measured, {failed} failed/skipped -> {out}", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
