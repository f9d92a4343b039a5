"""The model registry (data/models.toml): exact architectures, parameter counts from them, and names.

Parameter counting follows each layer's real matrices (SwiGLU has three, GQA shrinks k/v, an explicit
head_dim wins over hidden/heads, MLA has its low-rank projections) — the mistakes peers make are listed in
shared research (estimators.md §0.5).
"""

from __future__ import annotations

import math
import re
import tomllib
from functools import cache, cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.paths import DATA_DIR
from core.suggest import closest_ids


class ModelArch(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str
    name: str
    family: str = ""
    hf_repo: str = ""
    hf_model_type: str = ""
    params_b: float = 0.0
    active_params_b: float | None = None
    layers: int
    hidden: int
    intermediate: int = 0
    heads: int
    kv_heads: int | None = None
    head_dim: int | None = None
    vocab: int
    tied_embeddings: bool = False
    mlp: Literal["gated", "plain"] = "gated"
    norm: Literal["rms", "layer"] = "rms"
    post_norms: int = 0  # norms per block beyond the two pre-norms (Gemma 2/3: after attention and MLP)
    # How those norms compute: Gemma's RMSNorm (fp32 throughout, (1 + weight)) or a Llama-style RMSNorm
    # (GLM-4-0414's post_self_attn / post_mlp norms: the variance in fp32, the weight on the 16-bit result)
    post_norm_style: Literal["gemma", "llama"] = "gemma"
    attention_bias: bool = False
    mlp_bias: bool = False
    max_context: int = 4096
    # the context length the chat GGUF that llama.cpp / Ollama run declares (its n_ctx_train, which caps
    # Ollama's num_ctx), where it differs from max_context: Qwen2.5 7B–72B Instruct configs say 32,768
    gguf_context: int | None = None
    sliding_window: int = 0
    # Share of layers that slide when only some do (Gemma 2: 0.5, Gemma 3: 5/6); 0 with a window = all slide.
    sliding_layers_fraction: float = 0.0
    # Llama 4: chunked local attention (attention_chunk_size) on a share of layers, the rest global.
    attention_chunk: int = 0
    chunked_layers_fraction: float = 0.0
    # Linear-attention layers (Qwen3-Next Gated DeltaNet, MiniMax lightning): a fixed-size state per layer.
    linear_attention: Literal["", "gated_deltanet", "lightning"] = ""
    linear_attention_layers: int = 0
    linear_key_heads: int = 0
    linear_value_heads: int = 0
    linear_key_head_dim: int = 0
    linear_value_head_dim: int = 0
    linear_conv_kernel: int = 0
    attention_output_gate: bool = False  # Qwen3-Next: q_proj also emits a per-head output gate
    position: str = "rope"
    attention: Literal["sdpa", "eager"] = "sdpa"
    native_precision: str | None = None
    experts: int = 0
    experts_active: int = 0
    shared_experts: int = 0
    moe_intermediate: int = 0
    shared_expert_intermediate: int = 0
    dense_layers: int = 0
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0
    encoder_layers: int = 0
    decoder_layers: int = 0
    d_kv: int = 0
    # Vision tower of a vision-language model (a ViT; its projector maps into the text model's width).
    vision_layers: int = 0
    vision_hidden: int = 0
    vision_intermediate: int = 0
    vision_mlp: Literal["gated", "plain"] = "plain"
    vision_patch: int = 14
    vision_in_patch: int = 0  # extra input factor (Qwen-VL's temporal patch of 2 frames); 0 = 1
    vision_projector_in: int = 0
    vision_projector_hidden: int = 0
    vision_params_extra: int = 0  # learned position tables, deepstack mergers, class tokens
    image_tokens: int = 0  # context tokens one 1024×1024 image takes
    # Quantised checkpoint: its method and the weights' real bytes at rest (0 = computed from the format).
    quant_method: str = ""
    checkpoint_bytes: int = 0
    # The maker's FP8 checkpoint keeps these linear layers in 16-bit (served as released): every block's
    # attention projections, and the MLPs of the first and last blocks (Llama-3.1-405B-Instruct-FP8: "we do
    # not perform quantization in the self-attention layers ... in the first and last Transformer layers",
    # Llama 3 paper §6.2; its config's modules_to_not_convert)
    fp8_16bit_modules: tuple[Literal["attention", "end_mlps"], ...] = ()
    fp8_release: str = ""  # that checkpoint's Hub repo (a published run names it when it ran that one)
    # Where the description came from and which memory terms could not be computed from it.
    origin: Literal["registry", "hub", "cache", "name"] = "registry"
    fetched_on: str = ""  # ISO date a looked-up description was fetched
    unknown_terms: list[str] = []
    aliases: list[str] = []
    verified: bool = True
    source: str = ""
    representative: bool = False

    # -- shape helpers -------------------------------------------------------------------------------
    @property
    def n_kv_heads(self) -> int:
        return self.kv_heads or self.heads

    def tensor_parallel_ok(self, size: int) -> bool:
        """vLLM's and SGLang's rule for a tensor-parallel size: it divides the attention heads, and divides
        the KV heads or is a multiple of them (MLA's one latent KV head only needs the attention heads
        divided). An engine refuses to start on any other size."""
        if size == 1:
            return True
        if self.heads % size:
            return False
        kv = self.n_kv_heads
        return self.is_mla or kv % size == 0 or size % kv == 0

    @property
    def dim_head(self) -> int:
        if self.d_kv:
            return self.d_kv
        return self.head_dim or self.hidden // self.heads

    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def is_encoder_decoder(self) -> bool:
        return self.encoder_layers > 0 and self.decoder_layers > 0

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.is_moe else 0

    # -- parameter counts -----------------------------------------------------------------------------
    @cached_property
    def attention_params(self) -> int:
        """One layer's attention projections (self-attention only)."""
        h, d = self.hidden, self.dim_head
        if self.is_mla:
            q_dim = self.heads * (self.qk_nope_head_dim + self.qk_rope_head_dim)
            q = (
                h * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * q_dim
                if self.q_lora_rank
                else h * q_dim
            )
            kv_a = h * (self.kv_lora_rank + self.qk_rope_head_dim) + self.kv_lora_rank
            kv_b = self.kv_lora_rank * self.heads * (self.qk_nope_head_dim + self.v_head_dim)
            o = self.heads * self.v_head_dim * h
            return q + kv_a + kv_b + o
        q_out, kv_out = self.heads * d, self.n_kv_heads * d
        gate = h * q_out if self.attention_output_gate else 0
        weights = h * q_out + 2 * h * kv_out + q_out * h + gate
        bias = (q_out + 2 * kv_out) if self.attention_bias else 0
        return weights + bias

    @property
    def full_attention_layers(self) -> int:
        """Layers with softmax attention over the whole context (no window, no chunk, not linear)."""
        layers = self.decoder_layers or self.layers
        return layers - self.sliding_layers - self.chunked_layers - self.linear_attention_layers

    @property
    def sliding_layers(self) -> int:
        if not self.sliding_window:
            return 0
        softmax = (self.decoder_layers or self.layers) - self.linear_attention_layers
        return round(softmax * self.sliding_layers_fraction) if self.sliding_layers_fraction else softmax

    @property
    def chunked_layers(self) -> int:
        return round(self.layers * self.chunked_layers_fraction) if self.attention_chunk else 0

    @cached_property
    def linear_attention_params(self) -> int:
        """One linear-attention layer's parameters (0 when the model has none).

        Gated DeltaNet (Qwen3-Next, transformers' Qwen3NextGatedDeltaNet): in_proj_qkvz, in_proj_ba, a
        depthwise conv over q/k/v, out_proj, per-head A and dt, a gated RMSNorm. Lightning attention
        (MiniMax-M1): qkv, an output gate and out_proj of the softmax layer's width, plus a norm.
        """
        h = self.hidden
        if self.linear_attention == "gated_deltanet":
            key, value = (
                self.linear_key_heads * self.linear_key_head_dim,
                self.linear_value_heads * self.linear_value_head_dim,
            )
            qkvz = h * (2 * key + 2 * value)
            ba = h * 2 * self.linear_value_heads
            conv = (2 * key + value) * self.linear_conv_kernel
            return qkvz + ba + conv + value * h + 2 * self.linear_value_heads + self.linear_value_head_dim
        if self.linear_attention == "lightning":
            inner = self.heads * self.dim_head
            return h * 3 * inner + h * inner + inner * h + inner
        return 0

    @cached_property
    def mixer_params(self) -> int:
        """Every block's token mixer: softmax attention on most layers, linear attention on the rest."""
        softmax = (self.decoder_layers or self.layers) - self.linear_attention_layers
        return softmax * self.attention_params + self.linear_attention_layers * self.linear_attention_params

    def linear_state_values(self) -> int:
        """Values in one sequence's linear-attention state, all layers (it does not grow with context)."""
        if self.linear_attention == "gated_deltanet":
            key = self.linear_key_heads * self.linear_key_head_dim
            recurrent = self.linear_value_heads * self.linear_key_head_dim * self.linear_value_head_dim
            conv = (2 * key + self.linear_value_heads * self.linear_value_head_dim) * max(
                0, self.linear_conv_kernel - 1
            )
            return self.linear_attention_layers * (recurrent + conv)
        if self.linear_attention == "lightning":
            return self.linear_attention_layers * self.heads * self.dim_head * self.dim_head
        return 0

    def _mlp(self, intermediate: int) -> int:
        matrices = 3 if self.mlp == "gated" else 2
        bias = (intermediate + self.hidden) if self.mlp_bias else 0
        return matrices * self.hidden * intermediate + bias

    @cached_property
    def expert_params(self) -> int:
        return self._mlp(self.moe_intermediate)

    @cached_property
    def moe_block_params(self) -> tuple[int, int]:
        """(all, active) parameters of one MoE layer's feed-forward block, router included."""
        router = self.hidden * self.experts
        if self.shared_expert_intermediate:
            shared = self._mlp(self.shared_expert_intermediate) + self.hidden  # Qwen's shared-expert gate
        else:
            shared = self.shared_experts * self.expert_params
        total = self.experts * self.expert_params + shared + router
        active = self.experts_active * self.expert_params + shared + router
        return total, active

    @cached_property
    def norm_params_per_layer(self) -> int:
        return 2 * self.hidden * (2 if self.norm == "layer" else 1)

    @cached_property
    def embedding_params(self) -> int:
        positions = self.max_context * self.hidden if self.position == "learned" else 0
        return self.vocab * self.hidden + positions

    @cached_property
    def lm_head_params(self) -> int:
        return 0 if self.tied_embeddings else self.vocab * self.hidden

    @cached_property
    def layer_params(self) -> int:
        """All transformer-block parameters (every expert of every layer)."""
        if self.is_encoder_decoder:
            enc = self.attention_params + self._mlp(self.intermediate) + self.norm_params_per_layer
            dec = 2 * self.attention_params + self._mlp(self.intermediate) + 3 * self.hidden
            return self.encoder_layers * enc + self.decoder_layers * dec
        per_dense = self._mlp(self.intermediate) + self.norm_params_per_layer
        if not self.is_moe:
            return self.mixer_params + self.layers * per_dense
        per_moe = self.moe_block_params[0] + self.norm_params_per_layer
        return self.mixer_params + self.dense_layers * per_dense + self.moe_layers * per_moe

    @cached_property
    def vision_params(self) -> int:
        """The vision tower (a ViT: patch embedding, blocks, final norm) and its projector."""
        if not self.vision_layers:
            return 0
        vh, vi = self.vision_hidden, self.vision_intermediate
        patch = 3 * max(1, self.vision_in_patch) * self.vision_patch**2 * vh + vh
        attention = 4 * vh * vh + 4 * vh  # qkv and proj with biases
        mlp = (3 if self.vision_mlp == "gated" else 2) * vh * vi + vi + vh
        block = attention + mlp + 4 * vh  # two LayerNorms
        projector = 0
        if self.vision_projector_in:
            inner = self.vision_projector_hidden
            if inner:
                projector = self.vision_projector_in * inner + inner + inner * self.hidden + self.hidden
            else:
                projector = self.vision_projector_in * self.hidden
        return patch + self.vision_layers * block + 2 * vh + projector + self.vision_params_extra

    @cached_property
    def total_params(self) -> int:
        return (
            self.embedding_params + self.lm_head_params + self.layer_params + self.hidden + self.vision_params
        )

    @cached_property
    def active_params(self) -> int:
        """Parameters one token passes through (what compute and decode bandwidth scale with)."""
        if not self.is_moe:
            return self.total_params
        total, active = self.moe_block_params
        return self.total_params - self.moe_layers * (total - active)

    @cached_property
    def fp8_16bit_params(self) -> int:
        """Linear-layer parameters the maker's FP8 checkpoint keeps in 16-bit (fp8_16bit_modules)."""
        kept = 0
        if "attention" in self.fp8_16bit_modules:
            kept += self.mixer_params
        if "end_mlps" in self.fp8_16bit_modules and self.layers >= 2:
            kept += 2 * self._mlp(self.intermediate)
        return kept

    @cached_property
    def linear_params(self) -> int:
        """Parameters inside nn.Linear layers of the blocks (what bitsandbytes and GPTQ quantize)."""
        norms = (self.layers or self.encoder_layers + self.decoder_layers) * self.norm_params_per_layer
        return self.layer_params - norms

    @cached_property
    def layer_linear_shapes(self) -> list[tuple[int, int]]:
        """(in, out) of each linear layer in one block (every expert included), for LoRA sizing."""
        h, d = self.hidden, self.dim_head
        if self.is_mla:
            q_dim = self.heads * (self.qk_nope_head_dim + self.qk_rope_head_dim)
            attn = [(h, self.kv_lora_rank + self.qk_rope_head_dim)]
            attn += [(self.kv_lora_rank, self.heads * (self.qk_nope_head_dim + self.v_head_dim))]
            attn += [(h, self.q_lora_rank), (self.q_lora_rank, q_dim)] if self.q_lora_rank else [(h, q_dim)]
            attn += [(self.heads * self.v_head_dim, h)]
        else:
            attn = [
                (h, self.heads * d),
                (h, self.n_kv_heads * d),
                (h, self.n_kv_heads * d),
                (self.heads * d, h),
            ]
        return attn

    def mlp_linear_shapes(self, intermediate: int) -> list[tuple[int, int]]:
        up = [(self.hidden, intermediate)] * (2 if self.mlp == "gated" else 1)
        return [*up, (intermediate, self.hidden)]


class ModelMatch(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: ModelArch
    matched: str


def normalize_model_name(text: str) -> str:
    """'Llama-3-70B-Instruct' ~ 'llama 3 70b instruct'; '千问' ~ 'qwen'."""
    text = text.lower()
    for zh, en in (("通义千问", "qwen"), ("千问", "qwen"), ("深度求索", "deepseek"), ("书生", "internlm")):
        text = text.replace(zh, en)
    text = re.sub(r"[\s_\-/:]+", " ", text)
    text = re.sub(r"(?<=[a-z])(?=\d)", " ", text)  # llama2 -> llama 2, qwen2.5 -> qwen 2.5
    text = re.sub(r"\s+", " ", text)
    return text.strip()


class Registry:
    """All models with name lookup, plus representative shapes for bare sizes."""

    def __init__(self, models: list[ModelArch]) -> None:
        self.models = models
        self.by_id = {m.id: m for m in models}
        self._by_alias: dict[str, ModelArch] = {}
        self._representatives: dict[float, ModelArch] = {}
        for model in models:
            for alias in (model.id, model.name, *model.aliases, model.hf_repo, model.hf_repo.split("/")[-1]):
                if alias:
                    self._by_alias.setdefault(normalize_model_name(alias), model)

    @property
    def alias_keys(self) -> list[str]:
        return sorted(self._by_alias, key=len, reverse=True)

    def get(self, model_id: str) -> ModelArch:
        return self.by_id[model_id]

    def learn(self, model: ModelArch) -> ModelArch:
        """A model described outside the shipped list (a Hub lookup, read by core.model_config): known by
        its id and repo name from now on. The caller does the I/O; the registry only holds the description.
        A model already shipped keeps its registry entry."""
        shipped = self.by_id.get(model.id)
        if shipped is not None and shipped.origin == "registry":
            return shipped
        self.by_id[model.id] = model
        for alias in (model.id, model.hf_repo, model.hf_repo.split("/")[-1]):
            if alias:
                key = normalize_model_name(alias)
                known = self._by_alias.get(key)
                if known is None or known.origin != "registry":
                    self._by_alias[key] = model
        return model

    def resolve(self, name: str) -> ModelMatch | None:
        key = normalize_model_name(name)
        for suffix in ("", " instruct", " chat", " base", " it", " hf"):
            stripped = key.removesuffix(suffix).strip() if suffix else key
            model = self._by_alias.get(stripped)
            if model:
                return ModelMatch(model=model, matched=name)
        return None

    def closest(self, name: str, limit: int = 3) -> list[str]:
        return closest_ids(normalize_model_name(name), {k: m.id for k, m in self._by_alias.items()}, limit)

    def representative(self, params_b: float) -> ModelArch:
        """A dense Llama-style shape of about `params_b` billion parameters, for a bare size ('13B')."""
        if params_b not in self._representatives:
            self._representatives[params_b] = self._build_representative(params_b)
        return self._representatives[params_b]

    def _build_representative(self, params_b: float) -> ModelArch:
        ladder = [m for m in self.models if m.id in _REPRESENTATIVE_LADDER]
        base = min(ladder, key=lambda m: abs(math.log(m.total_params / 1e9) - math.log(params_b)))
        per_layer = (base.layer_params) / base.layers
        fixed = base.total_params - base.layer_params
        layers = max(1, round((params_b * 1e9 - fixed) / per_layer))
        shape = base.model_copy(
            update={
                "id": f"dense-{_size_label(params_b)}",
                "name": f"{_size_label(params_b).upper()} dense model (shape of {base.name})",
                "layers": layers,
                "params_b": params_b,
                "aliases": [],
                "representative": True,
            }
        )
        return ModelArch.model_validate(shape.model_dump())


# Modern dense GQA models whose shapes stand in for a bare size.
_REPRESENTATIVE_LADDER = (
    "qwen2.5-0.5b",
    "qwen2.5-1.5b",
    "llama-3.2-3b",
    "llama-3.1-8b",
    "llama-2-13b",
    "qwen2.5-14b",
    "qwen2.5-32b",
    "llama-3.1-70b",
    "llama-3.1-405b",
)


def _size_label(params_b: float) -> str:
    return f"{params_b:g}b"


@cache
def load_registry() -> Registry:
    with open(DATA_DIR / "models.toml", "rb") as handle:
        raw = tomllib.load(handle)
    return Registry([ModelArch.model_validate(entry) for entry in raw["model"]])
