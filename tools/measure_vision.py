#!/usr/bin/env python3
# ruff: noqa: E501  (the CONFIGS table keeps each published config on few lines)
"""Measure what PyTorch really allocates for image, video, vision, speech and embedding jobs, without a GPU.

Each case builds the real module from its published configuration (the dicts in ``CONFIGS`` below, copied from
the model repos' ``config.json`` / diffusers component configs, or the library defaults they equal; nothing is
downloaded) under ``torch._subclasses.fake_tensor.FakeTensorMode`` and runs one job under
``torch.distributed._tools.mem_tracker.MemTracker``.  The peak is what ``torch.cuda.max_memory_allocated``
would report, minus allocator rounding, split into Parameter, Buffer, Gradient, Activation, Temp, Optstate.
Not included: CUDA context, caching-allocator slack, cuDNN/cuBLAS workspaces.

Jobs (component level: a pipeline's peak is all resident weights plus the largest of its phases' transients,
which is how core/vision composes them):

``denoise``     one denoiser forward (UNet / DiT), 16-bit weights, ``torch.no_grad()``; ``batch`` is the batch
                the module sees (classifier-free guidance doubles the images' batch).
``vae_decode``  the VAE decoder on ``batch`` latents of an ``h`` x ``w`` image.
``text_encode`` a text encoder on ``batch`` x ``tokens`` (CLIP 77, T5 512).
``infer``       a vision backbone / Whisper / embedding model forward, 16-bit weights, no_grad.
``train``       fp32 weights, bf16 autocast (AMP), loss, backward, fused AdamW, two steps (the optimizer state
                appears at the first step); ``gc`` 1 = gradient checkpointing.
``lora``        16-bit frozen base, peft LoRA rank 16 on the attention projections (to_q/k/v/out, as diffusers'
                and kohya's scripts do), fp32 adapters, bf16 autocast, fused AdamW, two steps.

Autocast is ``torch.autocast("cpu", dtype=torch.bfloat16)`` and SDPA takes the CPU flash kernel, which like the
CUDA flash kernel keeps no tokens x tokens score matrix.

Usage::

    .venv-vision/bin/python tools/measure_vision.py --out data/measured/vision.csv
    .venv-vision/bin/python tools/measure_vision.py --list
    .venv-vision/bin/python tools/measure_vision.py --only denoise/sd15-unet/512x512-b2 --out /tmp/x.csv
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

COLUMNS = [
    "case_id", "model", "job", "height", "width", "frames", "batch", "tokens", "gc", "peak_bytes",
    "parameter_bytes", "buffer_bytes", "gradient_bytes", "activation_bytes", "temp_bytes", "optstate_bytes",
    "params", "trainable_params", "seconds", "torch", "library", "date",
]  # fmt: skip

LORA_RANK = 16
TRAIN_STEPS = 2

# ------------------------------------------------------------------------------------------------ configs
# Each entry: library, class, kwargs (the published config's architecture fields), and its source.
CONFIGS: dict[str, dict[str, Any]] = {
    "sd15-unet": {
        "lib": "diffusers", "cls": "UNet2DConditionModel",
        "kw": {"cross_attention_dim": 768, "sample_size": 64, "attention_head_dim": 8,
               "block_out_channels": [320, 640, 1280, 1280], "layers_per_block": 2},
        "source": "stable-diffusion-v1-5/stable-diffusion-v1-5 unet/config.json (diffusers defaults + cross_attention_dim 768)",
    },
    "sdxl-unet": {
        "lib": "diffusers", "cls": "UNet2DConditionModel",
        "kw": {"sample_size": 128, "block_out_channels": [320, 640, 1280], "layers_per_block": 2,
               "down_block_types": ["DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"],
               "up_block_types": ["CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"],
               "transformer_layers_per_block": [1, 2, 10], "attention_head_dim": [5, 10, 20],
               "cross_attention_dim": 2048, "use_linear_projection": True, "addition_embed_type": "text_time",
               "addition_time_embed_dim": 256, "projection_class_embeddings_input_dim": 2816},
        "source": "stabilityai/stable-diffusion-xl-base-1.0 unet/config.json",
    },
    "sdxl-refiner-unet": {
        "lib": "diffusers", "cls": "UNet2DConditionModel",
        "kw": {"sample_size": 128, "block_out_channels": [384, 768, 1536, 1536], "layers_per_block": 2,
               "down_block_types": ["DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"],
               "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"],
               "transformer_layers_per_block": 4, "attention_head_dim": [6, 12, 24, 24],
               "cross_attention_dim": 1280, "use_linear_projection": True, "addition_embed_type": "text_time",
               "addition_time_embed_dim": 256, "projection_class_embeddings_input_dim": 2560},
        "source": "stabilityai/stable-diffusion-xl-refiner-1.0 unet/config.json",
    },
    "sd-vae": {
        "lib": "diffusers", "cls": "AutoencoderKL",
        "kw": {"block_out_channels": [128, 256, 512, 512], "latent_channels": 4, "layers_per_block": 2,
               "down_block_types": ["DownEncoderBlock2D"] * 4, "up_block_types": ["UpDecoderBlock2D"] * 4},
        "source": "stable-diffusion-v1-5 vae/config.json (the SDXL VAE has the same shape)",
    },
    "flux-vae": {
        "lib": "diffusers", "cls": "AutoencoderKL",
        "kw": {"block_out_channels": [128, 256, 512, 512], "latent_channels": 16, "layers_per_block": 2,
               "down_block_types": ["DownEncoderBlock2D"] * 4, "up_block_types": ["UpDecoderBlock2D"] * 4,
               "use_quant_conv": False, "use_post_quant_conv": False},
        "source": "black-forest-labs/FLUX.1-dev vae/config.json (SD3's VAE has the same shape)",
    },
    "flux-transformer": {
        "lib": "diffusers", "cls": "FluxTransformer2DModel",
        "kw": {"patch_size": 1, "in_channels": 64, "num_layers": 19, "num_single_layers": 38,
               "attention_head_dim": 128, "num_attention_heads": 24, "joint_attention_dim": 4096,
               "pooled_projection_dim": 768, "guidance_embeds": True, "axes_dims_rope": [16, 56, 56]},
        "source": "black-forest-labs/FLUX.1-dev transformer/config.json",
    },
    "sd35-large-transformer": {
        "lib": "diffusers", "cls": "SD3Transformer2DModel",
        "kw": {"sample_size": 128, "patch_size": 2, "in_channels": 16, "num_layers": 38, "attention_head_dim": 64,
               "num_attention_heads": 38, "joint_attention_dim": 4096, "caption_projection_dim": 2432,
               "pooled_projection_dim": 2048, "out_channels": 16, "pos_embed_max_size": 192,
               "qk_norm": "rms_norm"},
        "source": "stabilityai/stable-diffusion-3.5-large transformer/config.json",
    },
    "sd35-medium-transformer": {
        "lib": "diffusers", "cls": "SD3Transformer2DModel",
        "kw": {"sample_size": 128, "patch_size": 2, "in_channels": 16, "num_layers": 24, "attention_head_dim": 64,
               "num_attention_heads": 24, "joint_attention_dim": 4096, "caption_projection_dim": 1536,
               "pooled_projection_dim": 2048, "out_channels": 16, "pos_embed_max_size": 384,
               "qk_norm": "rms_norm", "dual_attention_layers": list(range(13))},
        "source": "stabilityai/stable-diffusion-3.5-medium transformer/config.json",
    },
    "wan2.1-1.3b-transformer": {
        "lib": "diffusers", "cls": "WanTransformer3DModel",
        "kw": {"patch_size": [1, 2, 2], "num_attention_heads": 12, "attention_head_dim": 128, "in_channels": 16,
               "out_channels": 16, "text_dim": 4096, "freq_dim": 256, "ffn_dim": 8960, "num_layers": 30,
               "cross_attn_norm": True, "qk_norm": "rms_norm_across_heads", "eps": 1e-6},
        "source": "Wan-AI/Wan2.1-T2V-1.3B-Diffusers transformer/config.json",
    },
    "wan2.1-14b-transformer": {
        "lib": "diffusers", "cls": "WanTransformer3DModel",
        "kw": {"patch_size": [1, 2, 2], "num_attention_heads": 40, "attention_head_dim": 128, "in_channels": 16,
               "out_channels": 16, "text_dim": 4096, "freq_dim": 256, "ffn_dim": 13824, "num_layers": 40,
               "cross_attn_norm": True, "qk_norm": "rms_norm_across_heads", "eps": 1e-6},
        "source": "Wan-AI/Wan2.1-T2V-14B-Diffusers transformer/config.json",
    },
    "cogvideox-2b-transformer": {
        "lib": "diffusers", "cls": "CogVideoXTransformer3DModel",
        "kw": {"num_attention_heads": 30, "attention_head_dim": 64, "in_channels": 16, "out_channels": 16,
               "time_embed_dim": 512, "text_embed_dim": 4096, "num_layers": 30, "sample_width": 90,
               "sample_height": 60, "sample_frames": 49, "patch_size": 2, "temporal_compression_ratio": 4,
               "max_text_seq_length": 226, "use_rotary_positional_embeddings": False},
        "source": "THUDM/CogVideoX-2b transformer/config.json (the diffusers defaults)",
    },
    "wan-vae": {
        "lib": "diffusers", "cls": "AutoencoderKLWan",
        "kw": {"base_dim": 96, "z_dim": 16, "dim_mult": [1, 2, 4, 4], "num_res_blocks": 2, "attn_scales": [],
               "temperal_downsample": [False, True, True], "dropout": 0.0},
        "source": "Wan-AI/Wan2.1-T2V-1.3B-Diffusers vae/config.json (AutoencoderKLWan)",
    },
    "clip-l": {
        "lib": "transformers", "cls": "CLIPTextModel", "cfg": "CLIPTextConfig",
        "kw": {"vocab_size": 49408, "hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12,
               "num_attention_heads": 12, "max_position_embeddings": 77, "hidden_act": "quick_gelu"},
        "source": "openai/clip-vit-large-patch14 config.json text_config (SD 1.5 text_encoder)",
    },
    "clip-bigg": {
        "lib": "transformers", "cls": "CLIPTextModelWithProjection", "cfg": "CLIPTextConfig",
        "kw": {"vocab_size": 49408, "hidden_size": 1280, "intermediate_size": 5120, "num_hidden_layers": 32,
               "num_attention_heads": 20, "max_position_embeddings": 77, "hidden_act": "gelu",
               "projection_dim": 1280},
        "source": "stabilityai/stable-diffusion-xl-base-1.0 text_encoder_2/config.json",
    },
    "t5-xxl": {
        "lib": "transformers", "cls": "T5EncoderModel", "cfg": "T5Config",
        "kw": {"vocab_size": 32128, "d_model": 4096, "d_ff": 10240, "d_kv": 64, "num_heads": 64,
               "num_layers": 24, "feed_forward_proj": "gated-gelu", "is_encoder_decoder": False},
        "source": "black-forest-labs/FLUX.1-dev text_encoder_2/config.json (google/t5-v1_1-xxl)",
    },
    "vit-b16": {
        "lib": "transformers", "cls": "ViTForImageClassification", "cfg": "ViTConfig",
        "kw": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
               "patch_size": 16, "image_size": 224, "num_labels": 1000},
        "source": "google/vit-base-patch16-224 config.json",
    },
    "vit-l16": {
        "lib": "transformers", "cls": "ViTForImageClassification", "cfg": "ViTConfig",
        "kw": {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
               "intermediate_size": 4096, "patch_size": 16, "image_size": 224, "num_labels": 1000},
        "source": "google/vit-large-patch16-224 config.json",
    },
    "vit-h14": {
        "lib": "transformers", "cls": "ViTForImageClassification", "cfg": "ViTConfig",
        "kw": {"hidden_size": 1280, "num_hidden_layers": 32, "num_attention_heads": 16,
               "intermediate_size": 5120, "patch_size": 14, "image_size": 224, "num_labels": 1000},
        "source": "google/vit-huge-patch14-224-in21k config.json (1000-class head)",
    },
    "resnet-50": {
        "lib": "transformers", "cls": "ResNetForImageClassification", "cfg": "ResNetConfig",
        "kw": {"embedding_size": 64, "hidden_sizes": [256, 512, 1024, 2048], "depths": [3, 4, 6, 3],
               "layer_type": "bottleneck", "num_labels": 1000},
        "source": "microsoft/resnet-50 config.json",
    },
    "sam-vit-h-encoder": {
        "lib": "transformers", "cls": "SamVisionModel", "cfg": "SamVisionConfig",
        "kw": {"hidden_size": 1280, "num_hidden_layers": 32, "num_attention_heads": 16,
               "global_attn_indexes": [7, 15, 23, 31], "image_size": 1024, "patch_size": 16,
               "output_channels": 256, "window_size": 14, "mlp_dim": 5120},
        "source": "facebook/sam-vit-huge config.json vision_config",
    },
    "whisper-large-v3": {
        "lib": "transformers", "cls": "WhisperForConditionalGeneration", "cfg": "WhisperConfig",
        "kw": {"d_model": 1280, "encoder_layers": 32, "decoder_layers": 32, "encoder_attention_heads": 20,
               "decoder_attention_heads": 20, "encoder_ffn_dim": 5120, "decoder_ffn_dim": 5120,
               "num_mel_bins": 128, "vocab_size": 51866, "max_source_positions": 1500,
               "max_target_positions": 448},
        "source": "openai/whisper-large-v3 config.json",
    },
    "whisper-small": {
        "lib": "transformers", "cls": "WhisperForConditionalGeneration", "cfg": "WhisperConfig",
        "kw": {"d_model": 768, "encoder_layers": 12, "decoder_layers": 12, "encoder_attention_heads": 12,
               "decoder_attention_heads": 12, "encoder_ffn_dim": 3072, "decoder_ffn_dim": 3072,
               "num_mel_bins": 80, "vocab_size": 51865, "max_source_positions": 1500,
               "max_target_positions": 448},
        "source": "openai/whisper-small config.json",
    },
    "bge-large-en-v1.5": {
        "lib": "transformers", "cls": "BertModel", "cfg": "BertConfig",
        "kw": {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
               "intermediate_size": 4096, "vocab_size": 30522, "max_position_embeddings": 512},
        "source": "BAAI/bge-large-en-v1.5 config.json",
    },
    "qwen3-embedding-0.6b": {
        "lib": "transformers", "cls": "Qwen3Model", "cfg": "Qwen3Config",
        "kw": {"hidden_size": 1024, "num_hidden_layers": 28, "num_attention_heads": 16,
               "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 3072, "vocab_size": 151669,
               "max_position_embeddings": 32768, "tie_word_embeddings": True},
        "source": "Qwen/Qwen3-Embedding-0.6B config.json",
    },
}  # fmt: skip


# ----------------------------------------------------------------------------------------------------- cases
@dataclass(frozen=True)
class Case:
    model: str
    job: str
    height: int = 0
    width: int = 0
    frames: int = 0
    batch: int = 1
    tokens: int = 0
    gc: int = 0

    @property
    def case_id(self) -> str:
        shape = f"{self.height}x{self.width}" if self.height else f"t{self.tokens}"
        if self.frames:
            shape += f"x{self.frames}f"
        tail = f"-gc{self.gc}" if self.job in ("train", "lora") else ""
        return f"{self.job}/{self.model}/{shape}-b{self.batch}{tail}"


def _cases() -> list[Case]:
    c: list[Case] = []
    # denoisers (batch = what the module sees; classifier-free guidance doubles the images)
    for h, b in ((512, 2), (768, 2), (512, 8)):
        c.append(Case("sd15-unet", "denoise", h, h, batch=b))
    for h, b in ((1024, 2), (1024, 8), (768, 2)):
        c.append(Case("sdxl-unet", "denoise", h, h, batch=b))
    c.append(Case("sdxl-refiner-unet", "denoise", 1024, 1024, batch=2))
    for h, b in ((1024, 1), (1024, 4), (768, 1), (1536, 1)):
        c.append(Case("flux-transformer", "denoise", h, h, batch=b))
    c.append(Case("sd35-large-transformer", "denoise", 1024, 1024, batch=2))
    c.append(Case("sd35-medium-transformer", "denoise", 1024, 1024, batch=2))
    c.append(Case("wan2.1-1.3b-transformer", "denoise", 480, 832, frames=81, batch=1))
    c.append(Case("wan2.1-14b-transformer", "denoise", 720, 1280, frames=81, batch=1))
    c.append(Case("wan2.1-14b-transformer", "denoise", 480, 832, frames=81, batch=2))
    c.append(Case("cogvideox-2b-transformer", "denoise", 480, 720, frames=49, batch=2))
    c.append(Case("cogvideox-2b-transformer", "denoise", 480, 720, frames=25, batch=1))
    # VAE decoders
    for h, b in ((512, 1), (512, 4), (1024, 1), (1024, 4), (768, 2)):
        c.append(Case("sd-vae", "vae_decode", h, h, batch=b))
    c.append(Case("flux-vae", "vae_decode", 1024, 1024, batch=1))
    c.append(Case("flux-vae", "vae_decode", 1024, 1024, batch=2))
    c.append(Case("wan-vae", "vae_decode", 480, 832, frames=81, batch=1))
    c.append(Case("wan-vae", "vae_decode", 720, 1280, frames=33, batch=1))
    # text encoders
    c.append(Case("clip-l", "text_encode", batch=2, tokens=77))
    c.append(Case("clip-bigg", "text_encode", batch=2, tokens=77))
    c.append(Case("t5-xxl", "text_encode", batch=1, tokens=512))
    c.append(Case("t5-xxl", "text_encode", batch=4, tokens=512))
    # diffusion training
    c.append(Case("sd15-unet", "train", 512, 512, batch=4, gc=1))
    c.append(Case("sd15-unet", "train", 512, 512, batch=2, gc=0))
    c.append(Case("sd15-unet", "train", 512, 512, batch=8, gc=0))
    c.append(Case("sd15-unet", "train", 512, 512, batch=4, gc=0))
    c.append(Case("sd15-unet", "train", 512, 512, batch=16, gc=0))
    c.append(Case("sd15-unet", "train", 768, 768, batch=4, gc=1))
    c.append(Case("sdxl-unet", "train", 1024, 1024, batch=1, gc=1))
    c.append(Case("sd15-unet", "lora", 512, 512, batch=4, gc=0))
    c.append(Case("sdxl-unet", "lora", 1024, 1024, batch=2, gc=1))
    c.append(Case("sdxl-unet", "lora", 1024, 1024, batch=1, gc=0))
    c.append(Case("flux-transformer", "lora", 1024, 1024, batch=1, gc=1))
    c.append(Case("flux-transformer", "lora", 512, 512, batch=2, gc=1))
    # vision backbones
    for m, h, b in (
        ("vit-b16", 224, 64),
        ("vit-l16", 224, 32),
        ("vit-h14", 224, 16),
        ("resnet-50", 224, 64),
        ("resnet-50", 384, 32),
    ):
        c.append(Case(m, "train", h, h, batch=b))
    c.append(Case("vit-b16", "train", 384, 384, batch=32))
    c.append(Case("vit-l16", "train", 224, 224, batch=64, gc=1))
    c.append(Case("vit-b16", "train", 224, 224, batch=256))
    for m, h, b in (("vit-b16", 224, 256), ("resnet-50", 224, 256), ("vit-h14", 224, 64)):
        c.append(Case(m, "infer", h, h, batch=b))
    c.append(Case("sam-vit-h-encoder", "infer", 1024, 1024, batch=1))
    c.append(Case("sam-vit-h-encoder", "infer", 1024, 1024, batch=4))
    # speech: tokens = decoder tokens; the encoder always sees 30 s (3000 mel frames)
    c.append(Case("whisper-large-v3", "infer", batch=1, tokens=128))
    c.append(Case("whisper-large-v3", "infer", batch=16, tokens=128))
    c.append(Case("whisper-small", "infer", batch=32, tokens=128))
    c.append(Case("whisper-small", "train", batch=16, tokens=128))
    c.append(Case("whisper-large-v3", "train", batch=4, tokens=128, gc=1))
    # embeddings
    c.append(Case("bge-large-en-v1.5", "infer", batch=64, tokens=512))
    c.append(Case("bge-large-en-v1.5", "infer", batch=256, tokens=128))
    c.append(Case("qwen3-embedding-0.6b", "infer", batch=32, tokens=1024))
    c.append(Case("qwen3-embedding-0.6b", "infer", batch=8, tokens=8192))
    return c


CASES = _cases()


# ------------------------------------------------------------------------------------------------- building
def _build(name: str, dtype: Any) -> Any:
    import torch

    spec = CONFIGS[name]
    prev = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        if spec["lib"] == "diffusers":
            import diffusers

            return getattr(diffusers, spec["cls"])(**spec["kw"])
        import transformers
        from transformers.initialization import no_init_weights

        cfg = getattr(transformers, spec["cfg"])(**spec["kw"])
        kwargs: dict[str, Any] = {}
        if spec["cls"] != "ResNetForImageClassification":
            kwargs["attn_implementation"] = "sdpa"
        cfg._attn_implementation = kwargs.get("attn_implementation")
        model_cls = getattr(transformers, spec["cls"])
        # Weight initialisation (trunc_normal_ and friends) reads values, which fake tensors do not have.
        # (ConvNeXt is not measured: its constructor reads its drop-path schedule with .tolist().)
        with no_init_weights():
            return model_cls._from_config(cfg, **kwargs) if kwargs else model_cls(cfg)
    finally:
        torch.set_default_dtype(prev)


def _inputs(case: Case, model: Any, dtype: Any) -> tuple[tuple[Any, ...], dict[str, Any], str]:
    """Positional args, keyword args and the name of the output to take a loss from."""
    import torch

    spec = CONFIGS[case.model]
    cls = spec["cls"]
    kw = spec["kw"]
    b = case.batch
    if cls == "UNet2DConditionModel":
        x = torch.randn(b, 4, case.height // 8, case.width // 8, dtype=dtype)
        ctx = torch.randn(b, 77, kw["cross_attention_dim"], dtype=dtype)
        extra: dict[str, Any] = {"encoder_hidden_states": ctx}
        if kw.get("addition_embed_type") == "text_time":
            pooled = kw["projection_class_embeddings_input_dim"] - 6 * kw["addition_time_embed_dim"]
            if pooled < 0:  # the refiner adds 5 time ids
                pooled = kw["projection_class_embeddings_input_dim"] - 5 * kw["addition_time_embed_dim"]
            ids = (kw["projection_class_embeddings_input_dim"] - pooled) // kw["addition_time_embed_dim"]
            extra["added_cond_kwargs"] = {
                "text_embeds": torch.randn(b, pooled, dtype=dtype),
                "time_ids": torch.randn(b, ids, dtype=dtype),
            }
        return (x, torch.tensor([500] * b)), extra, "sample"
    if cls == "FluxTransformer2DModel":
        hh, ww = case.height // 16, case.width // 16
        txt = 512
        return (
            (),
            {
                "hidden_states": torch.randn(b, hh * ww, 64, dtype=dtype),
                "encoder_hidden_states": torch.randn(b, txt, 4096, dtype=dtype),
                "pooled_projections": torch.randn(b, 768, dtype=dtype),
                "timestep": torch.full((b,), 0.5, dtype=dtype),
                "img_ids": torch.zeros(hh * ww, 3, dtype=dtype),
                "txt_ids": torch.zeros(txt, 3, dtype=dtype),
                "guidance": torch.full((b,), 3.5, dtype=dtype),
            },
            "sample",
        )
    if cls == "SD3Transformer2DModel":
        return (
            (),
            {
                "hidden_states": torch.randn(b, 16, case.height // 8, case.width // 8, dtype=dtype),
                "encoder_hidden_states": torch.randn(b, 333, 4096, dtype=dtype),
                "pooled_projections": torch.randn(b, 2048, dtype=dtype),
                "timestep": torch.full((b,), 500, dtype=dtype),
            },
            "sample",
        )
    if cls == "WanTransformer3DModel":
        f = (case.frames - 1) // 4 + 1
        return (
            (),
            {
                "hidden_states": torch.randn(b, 16, f, case.height // 8, case.width // 8, dtype=dtype),
                "timestep": torch.full((b,), 500, dtype=torch.long),
                "encoder_hidden_states": torch.randn(b, 512, 4096, dtype=dtype),
            },
            "sample",
        )
    if cls == "CogVideoXTransformer3DModel":
        f = (case.frames - 1) // 4 + 1
        return (
            (),
            {
                "hidden_states": torch.randn(b, f, 16, case.height // 8, case.width // 8, dtype=dtype),
                "encoder_hidden_states": torch.randn(b, 226, 4096, dtype=dtype),
                "timestep": torch.full((b,), 500, dtype=torch.long),
            },
            "sample",
        )
    if cls == "AutoencoderKLWan":
        f = (case.frames - 1) // 4 + 1
        return (torch.randn(b, 16, f, case.height // 8, case.width // 8, dtype=dtype),), {}, ""
    if cls == "AutoencoderKL":
        return (
            (torch.randn(b, kw["latent_channels"], case.height // 8, case.width // 8, dtype=dtype),),
            {},
            "",
        )
    if cls.startswith("CLIPText") or cls == "T5EncoderModel" or cls in ("BertModel", "Qwen3Model"):
        return (), {"input_ids": torch.randint(0, 1000, (b, case.tokens))}, "last_hidden_state"
    if cls.startswith("ViT"):
        # fine-tuning at another resolution interpolates the position embeddings (timm and transformers)
        pixels = torch.randn(b, 3, case.height, case.width, dtype=dtype)
        return (
            (),
            {"pixel_values": pixels, "interpolate_pos_encoding": case.height != kw["image_size"]},
            "logits",
        )
    if cls.startswith("ResNet"):
        return (), {"pixel_values": torch.randn(b, 3, case.height, case.width, dtype=dtype)}, "logits"
    if cls == "SamVisionModel":
        return (
            (),
            {"pixel_values": torch.randn(b, 3, case.height, case.width, dtype=dtype)},
            "last_hidden_state",
        )
    if cls == "WhisperForConditionalGeneration":
        return (
            (),
            {
                "input_features": torch.randn(b, kw["num_mel_bins"], 3000, dtype=dtype),
                "decoder_input_ids": torch.randint(0, 1000, (b, case.tokens)),
            },
            "logits",
        )
    raise ValueError(cls)


# ----------------------------------------------------------------------------------------- one measurement
def _measure(case: Case) -> dict[str, Any]:
    import torch
    from torch import nn
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.distributed._tools.mem_tracker import MemTracker

    class _NoopHandle:
        def remove(self) -> None:
            pass

    class Tracker(MemTracker):
        """MemTracker that tolerates frozen parameters and keeps only the global peak."""

        def _track_module_params_and_buffers(self, module: nn.Module, install_grad_hooks: bool = True):  # type: ignore[no-untyped-def]
            for p in module.parameters():
                if not p.requires_grad and self._param_to_grad_hook_handles.get(p, None) is None:
                    self._param_to_grad_hook_handles[p] = (_NoopHandle(), _NoopHandle())
            return super()._track_module_params_and_buffers(module, install_grad_hooks)

        def _pre_fw_hook(self, module: nn.Module, inputs: Any) -> None:
            # Wan's causal video VAE calls its decoder once per latent frame (from a method, not a
            # forward): start a new iteration of module stats each time; the global peak is kept.
            try:
                super()._pre_fw_hook(module, inputs)
            except NotImplementedError:
                self.reset_mod_stats()
                super()._pre_fw_hook(module, inputs)

        def _update_peak_stats(self, peak_state: Any) -> None:
            for dev, dev_snap in self._curr_mem_snap.items():
                if self._peak_mem.get(dev, 0) < dev_snap["Total"]:
                    self._peak_mem[dev] = dev_snap["Total"]
                    self._peak_mem_snap[dev] = dict(dev_snap)

    spec = CONFIGS[case.model]
    train = case.job in ("train", "lora")
    param_dtype = torch.float32 if case.job == "train" else torch.bfloat16
    t0 = time.time()
    with FakeTensorMode():
        model = _build(case.model, param_dtype)
        n_params = sum(p.numel() for p in model.parameters())
        if case.job == "lora":
            import peft
            from peft.tuners.tuners_utils import BaseTunerLayer

            model.requires_grad_(False)
            orig_move = BaseTunerLayer._move_adapter_to_device_of_base_layer
            orig_to = nn.Module.to
            BaseTunerLayer._move_adapter_to_device_of_base_layer = lambda self, *a, **k: None  # type: ignore[method-assign]
            nn.Module.to = lambda self, *a, **k: self  # type: ignore[method-assign]
            try:
                lcfg = peft.LoraConfig(
                    r=LORA_RANK, lora_alpha=LORA_RANK, init_lora_weights="gaussian",
                    target_modules=["to_k", "to_q", "to_v", "to_out.0"],
                )  # fmt: skip
                model = peft.get_peft_model(model, lcfg, autocast_adapter_dtype=False)
            finally:
                BaseTunerLayer._move_adapter_to_device_of_base_layer = orig_move  # type: ignore[method-assign]
                nn.Module.to = orig_to  # type: ignore[method-assign]
            for mod in list(model.modules()):
                for name, p in list(mod.named_parameters(recurse=False)):
                    if p.requires_grad and p.dtype != torch.float32:
                        setattr(mod, name, nn.Parameter(torch.empty(p.shape, dtype=torch.float32)))
        trainable = [p for p in model.parameters() if p.requires_grad] if train else []
        n_trainable = sum(p.numel() for p in trainable)
        if train:
            model.train()
            if case.gc:
                inner = model.get_base_model() if hasattr(model, "get_base_model") else model
                if spec["lib"] == "diffusers":
                    inner.enable_gradient_checkpointing()
                else:
                    inner.gradient_checkpointing_enable(
                        gradient_checkpointing_kwargs={"use_reentrant": False}
                    )
        else:
            model.eval()

        tracker = Tracker()
        tracker.track_external(model)
        opt = torch.optim.AdamW(trainable, lr=1e-5, fused=True) if train else None
        in_dtype = torch.float32 if case.job == "train" else torch.bfloat16
        with tracker:
            args, kwargs, out_name = _inputs(case, model, in_dtype)
            target = model.get_base_model() if hasattr(model, "get_base_model") else model
            if not train:
                with torch.no_grad():
                    out = target.decode(*args).sample if case.job == "vae_decode" else target(*args, **kwargs)
                del out
            else:
                for _ in range(TRAIN_STEPS):
                    with torch.autocast("cpu", dtype=torch.bfloat16):
                        out = target(*args, **kwargs)
                        y = getattr(out, out_name) if not isinstance(out, tuple) else out[0]
                        loss = y.float().pow(2).mean()
                    del out, y
                    loss.backward()
                    del loss
                    assert opt is not None
                    opt.step()
                    opt.zero_grad(set_to_none=True)
                    tracker.reset_mod_stats()
        seconds = time.time() - t0
        snap = next(iter(tracker.get_tracker_snapshot("peak").values()))

    cats = {str(getattr(k, "value", k)): v for k, v in snap.items()}
    if spec["lib"] == "diffusers":
        import diffusers

        library = f"diffusers {diffusers.__version__}"
    else:
        import transformers

        library = f"transformers {transformers.__version__}"
    if case.job == "lora":
        import peft

        library += f" peft {peft.__version__}"
    return {
        "case_id": case.case_id, "model": case.model, "job": case.job, "height": case.height,
        "width": case.width, "frames": case.frames, "batch": case.batch, "tokens": case.tokens, "gc": case.gc,
        "peak_bytes": cats.get("Total", 0), "parameter_bytes": cats.get("Parameter", 0),
        "buffer_bytes": cats.get("Buffer", 0), "gradient_bytes": cats.get("Gradient", 0),
        "activation_bytes": cats.get("Activation", 0), "temp_bytes": cats.get("Temp", 0),
        "optstate_bytes": cats.get("Optstate", 0), "params": n_params, "trainable_params": n_trainable,
        "seconds": round(seconds, 1), "torch": torch.__version__, "library": library,
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
    }  # fmt: skip


# ------------------------------------------------------------------------------------------------- driver
def _read_csv(path: Path) -> dict[str, dict[str, str]]:
    if not path.exists():
        return {}
    with path.open(newline="") as f:
        return {r["case_id"]: r for r in csv.DictReader(f)}


def _write_csv(path: Path, rows: dict[str, dict[str, Any]]) -> None:
    order = {c.case_id: i for i, c in enumerate(CASES)}
    ids = sorted(rows, key=lambda k: (order.get(k, len(order)), k))
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for k in ids:
            w.writerow(rows[k])
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "data" / "measured" / "vision.csv"))
    ap.add_argument("--only", nargs="+", metavar="CASE_ID")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--resume", action="store_true", help="skip cases already in --out")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--_child", nargs=2, metavar=("CASE_ID", "RESULT_JSON"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args._child:
        case = next(c for c in CASES if c.case_id == args._child[0])
        Path(args._child[1]).write_text(json.dumps(_measure(case)))
        return 0
    if args.list:
        for c in CASES:
            print(c.case_id)
        return 0
    out = Path(args.out)
    rows: dict[str, dict[str, Any]] = dict(_read_csv(out))
    todo = [c for c in CASES if not args.only or c.case_id in args.only]
    if args.resume:
        todo = [c for c in todo if c.case_id not in rows]
    for case in todo:
        result = out.with_suffix(".child.json")
        started = time.time()
        try:
            proc = subprocess.run(
                [sys.executable, __file__, "--_child", case.case_id, str(result)],
                capture_output=True, text=True, timeout=args.timeout, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            print(f"TIMEOUT {case.case_id}", flush=True)
            continue
        if proc.returncode != 0 or not result.exists():
            print(f"FAIL {case.case_id}: {proc.stderr.strip().splitlines()[-1:]}", flush=True)
            continue
        rows[case.case_id] = json.loads(result.read_text())
        result.unlink()
        _write_csv(out, rows)
        peak = rows[case.case_id]["peak_bytes"] / 2**30
        print(f"ok {case.case_id}: {peak:.2f} GiB in {time.time() - started:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
