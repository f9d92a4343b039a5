"""Each memory and compute term of a non-LLM job as a small named formula, with where it comes from.

Sources:
- Latent sizes: a diffusers VAE halves the image side per down block (2^(len(block_out_channels)-1) = 8);
  video VAEs (Wan, HunyuanVideo, CogVideoX) also compress time by 4, keeping the first frame:
  latent_frames = (frames - 1) // 4 + 1 (diffusers WanPipeline.prepare_latents).
- DiT tokens: latent pixels / patch² (FLUX packs 2×2 latent pixels into one token, SD3 and Wan patchify 2×2).
- Classifier-free guidance runs the denoiser on the conditional and unconditional batch together (diffusers
  pipelines concatenate them), so the denoiser sees twice the images; FLUX.1 is guidance-distilled (no CFG).
- Activation bytes per token × width: measured with tools/measure_vision.py (data/measured/vision.csv) and
  kept per component in data/vision_models.toml.
- Mixed-precision training holds fp32 weights, fp32 gradients and fp32 AdamW moments (16 B per trained
  parameter; ZeRO paper §3.1); LoRA adds r·(d_in + d_out) per adapted matrix (LoRA paper), kept in fp32.
- FLOPs: 2 per parameter per token forward (Kaplan et al. 2020) plus 4·L·n²·d for self-attention; backward
  twice the forward; activation recompute one forward more.
"""

from __future__ import annotations

from core.estimator.terms import BYTES_PER_WEIGHT, GGUF
from core.query import Precision
from core.vision.registry import Coefficients, Component

# 16-bit activations in every job here (fp8 / nf4 / GGUF weights are dequantised to bf16 to compute).
ACT_BYTES = 2


def weight_bytes(component: Component, precision: Precision) -> int:
    """A component's parameters at rest in `precision` (quantised formats store every linear that way), and
    its resident buffers (position tables built at load time, kept in the load dtype)."""
    return int(component.params * BYTES_PER_WEIGHT[precision]) + component.buffer_bytes


def latent_side(pixels: int, component: Component) -> int:
    return max(1, pixels // component.spatial_scale)


def latent_frames(frames: int, temporal_scale: int) -> int:
    """Frames a causal video VAE keeps: the first one, then one per `temporal_scale`."""
    if temporal_scale <= 1 or frames <= 1:
        return max(frames, 1)
    return (frames - 1) // temporal_scale + 1


def image_tokens(denoiser: Component, vae: Component, width: int, height: int, frames: int) -> int:
    """Tokens (DiT) or latent pixels (UNet) of one image or video in the denoiser."""
    lat_w = latent_side(width, vae) // denoiser.patch
    lat_h = latent_side(height, vae) // denoiser.patch
    return max(1, lat_w * lat_h * latent_frames(frames, vae.temporal_scale))


def denoiser_tokens(denoiser: Component, vae: Component, width: int, height: int, frames: int) -> int:
    """The tokens one image's denoiser pass runs over (MM-DiTs add their text tokens)."""
    tokens = image_tokens(denoiser, vae, width, height, frames)
    return tokens + (denoiser.tokens if denoiser.joint_text else 0)


def coefficient(coeff: Coefficients, job: str, grad_checkpointing: bool) -> float:
    if job == "infer":
        return coeff.infer
    if job == "lora":
        return coeff.lora_gc if grad_checkpointing else coeff.lora
    return coeff.train_gc if grad_checkpointing else coeff.train


def depth(component: Component, job: str) -> int:
    """Training keeps every layer's activations (transformers: per layer; a UNet's coefficient holds its
    depth)."""
    if job == "infer" or component.kind in ("unet", "vae", "cnn") or not component.layers:
        return 1
    return component.layers


def activation_bytes(component: Component, coeff: float, tokens: int, job: str) -> int:
    """Transient (inference) or saved (training) activations: coefficient × tokens × width [× layers]."""
    width = component.width or 1
    return int(coeff * tokens * width * depth(component, job))


def lora_params(component: Component, rank: int) -> int:
    """r · Σ(d_in + d_out) over the adapted attention projections (to_q, to_k, to_v, to_out)."""
    return rank * component.lora_io_sum


def training_state_bytes(trainable: int, *, adam_8bit: bool = False) -> tuple[int, int, int]:
    """fp32 master copy, fp32 gradient, AdamW moments (fp32: 8 B; bitsandbytes 8-bit: 2 B) per parameter."""
    return 4 * trainable, 4 * trainable, (2 if adam_8bit else 8) * trainable


def whisper_cache_bytes(component: Component, batch: int, tokens: int) -> int:
    """Decoder KV: cross-attention over the 1,500 encoder frames plus self-attention over the text so far."""
    per_token = 2 * component.decoder_layers * component.width * ACT_BYTES
    return batch * per_token * (component.tokens + tokens)


def decoder_kv_bytes(component: Component, batch: int, tokens: int) -> int:
    """Decoder-style embedders (Qwen3-Embedding) keep transformers' KV cache of the batch: 2·L·kv·d·n."""
    return 2 * component.layers * component.kv_heads_dim * ACT_BYTES * batch * tokens


def logits_bytes(component: Component, batch: int, tokens: int, *, training: bool) -> int:
    """Speech decoders' logits over the vocabulary: bf16 in inference; training adds the fp32 upcast of the
    loss and its gradient (10 B per logit)."""
    return batch * tokens * component.vocab * (10 if training else ACT_BYTES)


def forward_flops(component: Component, tokens: int, per_item_tokens: int) -> float:
    """One forward's FLOPs: counted FLOPs scaled by tokens where counted, else 2·N per token plus
    self-attention 4·L·n²·d per item of `per_item_tokens` tokens."""
    if component.forward_flops and component.reference_tokens:
        return component.forward_flops * tokens / component.reference_tokens
    items = max(1, tokens // max(per_item_tokens, 1))
    attention = 4.0 * component.layers * per_item_tokens**2 * component.width * items
    return 2.0 * component.params * tokens + attention


def is_quantized(precision: Precision) -> bool:
    return precision in GGUF or precision in (Precision.NF4, Precision.INT4, Precision.FP8, Precision.INT8)
