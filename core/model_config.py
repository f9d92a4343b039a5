"""A Hugging Face config.json (plus the checkpoint's parameter counts by dtype) read into a model description.

Pure: the caller (bot/hub) fetches the JSON; this module only reads it. The readings follow transformers'
configuration classes: the keys each family uses for the same thing (hidden_size / d_model / n_embd), the
class defaults a config.json may omit (Llama's untied head, Qwen2's q/k/v biases), the nesting of
vision-language configs (text_config / vision_config, InternVL's llm_config), per-layer attention kinds
(sliding windows, Llama 4's chunks, Qwen3-Next's and MiniMax's linear attention) and `quantization_config`.
A config whose shape cannot be read still yields a description from the parameter count, with the memory
terms that could not be computed listed in `unknown_terms`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.registry import ModelArch, Registry, load_registry

# config.json model_type values whose class default leaves the lm_head untied (PretrainedConfig's is tied).
_UNTIED_BY_DEFAULT = frozenset(
    {
        "llama", "llama4_text", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe",
        "qwen3_next", "deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "glm4", "glm4_moe",
        "phi3", "phimoe",
        "gpt_oss", "internlm2", "internlm3", "minimax", "minimax_m1", "minimax_m2", "ernie4_5",
        "ernie4_5_moe", "hunyuan_v1_dense", "hunyuan_v1_moe", "yi", "baichuan", "chatglm",
        "mllama_text_model",
        "qwen2_vl", "qwen2_5_vl", "qwen2_5_vl_text", "qwen2_vl_text", "qwen3_vl_text", "qwen3_vl_moe_text",
        "mistral3",
    }
)  # fmt: skip
# Pre-LLaMA families: two-matrix MLP with biases, LayerNorm, biased projections.
_PLAIN_MLP = frozenset(
    {"gpt2", "gpt_neox", "gptj", "opt", "bloom", "falcon", "bert", "xlm-roberta", "roberta", "phi",
     "gpt_bigcode", "starcoder2", "mpt", "t5", "mt5"}
)  # fmt: skip
_LEARNED_POSITIONS = frozenset({"gpt2", "opt", "bert", "xlm-roberta", "roberta", "gpt_bigcode"})
_ALIBI = frozenset({"bloom", "mpt"})
_QKV_BIAS = frozenset({"qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl", "qwen2_vl_text", "qwen2_5_vl_text"})
_SLIDING_IF_SET = frozenset(
    {"mistral", "mixtral", "phi3", "phimoe", "gemma2", "gemma3", "gemma3_text", "gpt_oss", "starcoder2",
     "cohere2", "mistral3", "ministral"}
)  # fmt: skip
_FAMILIES = (
    ("qwen", "qwen"), ("llama", "llama"), ("mllama", "llama"), ("mistral", "mistral"), ("mixtral", "mistral"),
    ("gemma", "gemma"), ("phi", "phi"), ("deepseek", "deepseek"), ("kimi", "kimi"), ("glm", "glm"),
    ("chatglm", "glm"), ("internlm", "internlm"), ("internvl", "internvl"), ("gpt_oss", "gpt-oss"),
    ("minimax", "minimax"), ("falcon", "falcon"), ("bloom", "bloom"), ("opt", "opt"), ("bert", "bert"),
    ("xlm-roberta", "bert"), ("t5", "t5"),
)  # fmt: skip

# Bytes per element of each safetensors dtype (packed int32 GPTQ/AWQ tensors count int32 elements).
SAFETENSORS_DTYPE_BYTES: dict[str, float] = {
    "F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "BF16": 2, "F16": 2, "I16": 2, "U16": 2,
    "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "I8": 1, "U8": 1, "BOOL": 1, "F4": 0.5, "F6_E2M3": 0.75,
    "F6_E3M2": 0.75,
}  # fmt: skip
_QUANTISED_DTYPES = frozenset({"F8_E4M3", "F8_E5M2", "I32", "U32", "I8", "U8", "F4"})

# A typical picture for "how many context tokens does an image take" on dynamic-resolution models.
_IMAGE_SIDE = 1024


class UnreadableConfigError(ValueError):
    """Neither a shape nor a parameter count: nothing to estimate from."""


def _get(d: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    for key in keys:
        value = d.get(key)
        if value is not None:
            return value
    return default


def _int(d: Mapping[str, Any], *keys: str, default: int = 0) -> int:
    value = _get(d, *keys)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return int(value)


def _family(model_type: str, repo_id: str) -> str:
    org = repo_id.split("/", maxsplit=1)[0].lower() if "/" in repo_id else ""
    if org == "moonshotai":
        return "kimi"
    for prefix, family in _FAMILIES:
        if model_type.startswith(prefix):
            return family
    return model_type.split("_", maxsplit=1)[0] or "unknown"


def _split(config: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None, str]:
    """(text config, vision config or None, outer model_type)."""
    outer = str(config.get("model_type", ""))
    if isinstance(config.get("llm_config"), Mapping):  # InternVL
        text = dict(config["llm_config"])
    elif isinstance(config.get("text_config"), Mapping):
        text = dict(config["text_config"])
        for key in ("tie_word_embeddings", "quantization_config"):
            if key in config and key not in text:
                text[key] = config[key]
    else:
        text = dict(config)
    if "quantization_config" in config and "quantization_config" not in text:
        text["quantization_config"] = config["quantization_config"]
    vision = config.get("vision_config")
    return text, dict(vision) if isinstance(vision, Mapping) else None, outer


def _layer_kinds(text: Mapping[str, Any], model_type: str, layers: int) -> dict[str, Any]:
    """Sliding windows, chunks and linear-attention layers, from layer_types or the family's own keys."""
    out: dict[str, Any] = {}
    kinds = text.get("layer_types")
    kinds = [str(k) for k in kinds] if isinstance(kinds, list) else []
    window = _int(text, "sliding_window")
    switched_off = "use_sliding_window" in text and not text.get("use_sliding_window")
    if switched_off or (model_type not in _SLIDING_IF_SET and not any("sliding" in k for k in kinds)):
        window = 0
    linear = sum(1 for k in kinds if k == "linear_attention")
    if not kinds and isinstance(text.get("attn_type_list"), list):  # MiniMax: 0 = lightning, 1 = softmax
        linear = sum(1 for k in text["attn_type_list"] if k == 0)
    if not kinds and model_type == "qwen3_next":
        interval = _int(text, "full_attention_interval", default=4)
        linear = layers - layers // interval
    if window:
        out["sliding_window"] = window
        softmax = layers - linear
        if kinds:
            sliding = sum(1 for k in kinds if "sliding" in k)
            fraction = sliding / softmax if softmax else 0.0
        elif model_type == "gemma2":
            fraction = 0.5
        elif model_type.startswith("gemma3"):
            pattern = _int(text, "sliding_window_pattern", default=6)
            fraction = (pattern - 1) / pattern
        else:
            fraction = 0.0  # every layer slides (Mistral 7B v0.1, Phi-3)
        if kinds and fraction == 0.0:
            out.pop("sliding_window")
        elif fraction < 1.0:
            out["sliding_layers_fraction"] = round(fraction, 4)
    chunk = _int(text, "attention_chunk_size")
    if chunk:
        flags = text.get("no_rope_layers")
        if isinstance(flags, list) and flags:
            chunked = sum(1 for f in flags if f) / len(flags)
        else:
            chunked = 1 - 1 / _int(text, "no_rope_layer_interval", default=4)
        out |= {"attention_chunk": chunk, "chunked_layers_fraction": round(chunked, 4)}
    if linear:
        out["linear_attention_layers"] = linear
        if model_type == "qwen3_next" or "linear_num_value_heads" in text:
            out |= {
                "linear_attention": "gated_deltanet",
                "linear_key_heads": _int(text, "linear_num_key_heads"),
                "linear_value_heads": _int(text, "linear_num_value_heads"),
                "linear_key_head_dim": _int(text, "linear_key_head_dim"),
                "linear_value_head_dim": _int(text, "linear_value_head_dim"),
                "linear_conv_kernel": _int(text, "linear_conv_kernel_dim", default=4),
            }
        else:
            out["linear_attention"] = "lightning"
    return out


def _moe(text: Mapping[str, Any], model_type: str, layers: int, intermediate: int) -> dict[str, Any]:
    experts = _int(text, "n_routed_experts", "num_local_experts", "num_experts", "moe_num_experts")
    if experts <= 1:
        return {}
    active = _int(
        text, "num_experts_per_tok", "experts_per_token", "num_experts_per_token", "moe_topk", "top_k"
    )
    moe_intermediate = _int(text, "moe_intermediate_size", "expert_intermediate_size", default=intermediate)
    out: dict[str, Any] = {
        "experts": experts,
        "experts_active": active or 2,
        "moe_intermediate": moe_intermediate,
        "shared_experts": _int(text, "n_shared_experts", "num_shared_experts"),
        "shared_expert_intermediate": _int(text, "shared_expert_intermediate_size"),
    }
    if model_type == "llama4_text":
        out["shared_experts"] = 1  # Llama 4's shared expert is always there, of the experts' width
        out["intermediate"] = _int(text, "intermediate_size_mlp", default=intermediate)
    dense = _int(text, "first_k_dense_replace")
    step = _int(text, "interleave_moe_layer_step", "decoder_sparse_step", "moe_layer_freq", default=1)
    if step > 1:
        dense = max(dense, layers - layers // step)
    only = text.get("mlp_only_layers")
    if isinstance(only, list):
        dense += len(only)
    out["dense_layers"] = min(dense, layers)
    return out


def _mla(text: Mapping[str, Any]) -> dict[str, Any]:
    if not _int(text, "kv_lora_rank"):
        return {}
    return {
        "q_lora_rank": _int(text, "q_lora_rank"),
        "kv_lora_rank": _int(text, "kv_lora_rank"),
        "qk_rope_head_dim": _int(text, "qk_rope_head_dim"),
        "qk_nope_head_dim": _int(text, "qk_nope_head_dim"),
        "v_head_dim": _int(text, "v_head_dim"),
    }


def _vision(
    vision: Mapping[str, Any], outer: str, config: Mapping[str, Any], text_hidden: int
) -> dict[str, Any]:
    """The vision tower's shape and the projector into the text model, per VL family."""
    vh = _int(vision, "embed_dim", "hidden_size", "width")
    layers = _int(vision, "depth", "num_hidden_layers", "num_layers") + _int(vision, "num_global_layers")
    if not vh or not layers:
        return {}
    vi = _int(vision, "intermediate_size", default=int(vh * float(_get(vision, "mlp_ratio", default=4))))
    patch = _int(vision, "patch_size", default=14)
    out: dict[str, Any] = {
        "vision_layers": layers,
        "vision_hidden": vh,
        "vision_intermediate": vi,
        "vision_patch": patch,
    }
    if outer.startswith(("qwen2_vl", "qwen2_5_vl", "qwen3_vl")):
        merge = _int(vision, "spatial_merge_size", default=2)
        merged = vh * merge * merge
        out |= {
            "vision_mlp": "gated" if outer.startswith("qwen2_5_vl") else "plain",
            "vision_in_patch": _int(vision, "temporal_patch_size", default=2),
            "vision_projector_in": merged,
            "vision_projector_hidden": merged,
            "image_tokens": (_IMAGE_SIDE // (patch * merge)) ** 2,
        }
        if outer.startswith("qwen3_vl"):
            deepstack = vision.get("deepstack_visual_indexes")
            mergers = len(deepstack) if isinstance(deepstack, list) else 0
            merger = merged * merged + merged + merged * text_hidden + text_hidden + 2 * merged
            out["vision_params_extra"] = _int(vision, "num_position_embeddings") * vh + mergers * merger
    elif outer == "internvl_chat" or "downsample_ratio" in config:
        ratio = float(_get(config, "downsample_ratio", default=0.5))
        image = _int(vision, "image_size", default=448)
        grid = image // patch
        merged = int(vh / (ratio * ratio))
        out |= {
            "vision_projector_in": merged,
            "vision_projector_hidden": text_hidden,
            "vision_params_extra": (grid * grid + 1) * vh + vh + 2 * merged,
            "image_tokens": int((grid * ratio) ** 2),
        }
    elif outer == "mllama":
        out |= {"vision_projector_in": _int(vision, "vision_output_dim", default=7680)}
    elif outer == "llama4":
        ratio = float(_get(vision, "pixel_shuffle_ratio", default=0.5))
        image = _int(vision, "image_size", default=336)
        out |= {
            "vision_projector_in": int(vh / (ratio * ratio)),
            "vision_projector_hidden": _int(
                vision, "projector_output_dim", "vision_output_dim", default=4096
            ),
            "image_tokens": int((image // patch * ratio) ** 2),
        }
    elif outer.startswith("gemma3"):
        image = _int(vision, "image_size", default=896)
        out |= {
            "vision_projector_in": vh,
            "vision_params_extra": (image // patch) ** 2 * vh,
            "image_tokens": _int(config, "mm_tokens_per_image", default=256),
        }
    elif outer == "mistral3":
        merge = _int(config, "spatial_merge_size", default=2)
        out |= {
            "vision_mlp": "gated",
            "vision_projector_in": vh,
            "vision_projector_hidden": text_hidden,
            "vision_params_extra": vh * merge * merge * vh,
            "image_tokens": (_IMAGE_SIDE // (patch * merge)) ** 2,
        }
    else:
        return {
            "vision_layers": layers,
            "vision_hidden": vh,
            "vision_intermediate": vi,
            "vision_patch": patch,
        }
    return out


def _quantisation(text: Mapping[str, Any]) -> tuple[str, str | None]:
    """(quant_method, the Precision value its weights are stored in) from `quantization_config`."""
    qc = text.get("quantization_config")
    if not isinstance(qc, Mapping):
        return "", None
    method = str(qc.get("quant_method", "")).lower()
    if method == "fp8":
        return method, "fp8"
    if method in ("awq", "gptq", "auto-round", "autoround"):
        bits = _int(qc, "bits", "w_bit", default=4)
        return method, "int8" if bits >= 8 else "int4"
    if method == "bitsandbytes":
        return method, "int8" if qc.get("load_in_8bit") else "nf4"
    if method == "mxfp4":
        return method, "int4"
    if method == "compressed-tensors":
        groups = qc.get("config_groups")
        weights: Mapping[str, Any] = {}
        if isinstance(groups, Mapping):
            first: Any = next(iter(groups.values()), {})
            weights = first.get("weights") or {} if isinstance(first, Mapping) else {}
        bits = _int(weights, "num_bits", default=8)
        if bits >= 8:
            return method, "fp8" if weights.get("type") == "float" else "int8"
        return method, "int4"
    return method, None


def _checkpoint_bytes(parameters_by_dtype: Mapping[str, int] | None) -> int:
    if not parameters_by_dtype:
        return 0
    return int(sum(n * SAFETENSORS_DTYPE_BYTES.get(d.upper(), 2) for d, n in parameters_by_dtype.items()))


def _is_quantised(parameters_by_dtype: Mapping[str, int] | None) -> bool:
    return bool(parameters_by_dtype) and any(
        d.upper() in _QUANTISED_DTYPES for d in parameters_by_dtype or {}
    )


def model_from_config(
    config: Mapping[str, Any],
    *,
    repo_id: str = "",
    parameters_by_dtype: Mapping[str, int] | None = None,
    source: str = "",
    origin: str = "hub",
    registry: Registry | None = None,
) -> ModelArch:
    """A registry model description for the model behind `config` (config.json of `repo_id`).

    The parameter count is the architecture's; the safetensors counts (`parameters_by_dtype`) give the
    published total of unquantised checkpoints and the real bytes of quantised ones.
    """
    text, vision, outer = _split(config)
    model_type = str(text.get("model_type") or outer)
    total_checkpoint = sum((parameters_by_dtype or {}).values())
    quantised_checkpoint = _is_quantised(parameters_by_dtype)
    name = repo_id or str(_get(config, "_name_or_path", default="")) or model_type or "unknown model"
    base: dict[str, Any] = {
        "id": repo_id.lower() or name.lower(),
        "name": name,
        "family": _family(model_type or outer, repo_id),
        "hf_repo": repo_id,
        "hf_model_type": outer or model_type,
        "source": source,
        "origin": origin,
        "verified": True,
    }
    hidden = _int(text, "hidden_size", "d_model", "n_embd", "dim", "model_dim")
    layers = _int(text, "num_hidden_layers", "n_layer", "num_layers", "n_layers")
    heads = _int(text, "num_attention_heads", "n_head", "n_heads", "num_heads")
    vocab = _int(text, "vocab_size", "padded_vocab_size")
    if not (hidden and layers and heads and vocab):
        return _from_parameter_count(base, total_checkpoint, parameters_by_dtype, registry, config)

    kv_heads = _int(text, "num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num")
    if text.get("multi_query") is True and not kv_heads:
        kv_heads = 1
    head_dim = _int(text, "head_dim", "kv_channels") or None
    if head_dim == hidden // heads:
        head_dim = None
    plain = model_type in _PLAIN_MLP
    intermediate = _int(text, "intermediate_size", "ffn_hidden_size", "n_inner", "d_ff", default=4 * hidden)
    tied = text.get("tie_word_embeddings")
    if not isinstance(tied, bool):
        tied = model_type not in _UNTIED_BY_DEFAULT
    attention_bias = text.get("attention_bias")
    if not isinstance(attention_bias, bool):
        attention_bias = (
            model_type in _QKV_BIAS or plain or bool(text.get("add_qkv_bias") or text.get("qkv_bias"))
        )
    mlp_bias = text.get("mlp_bias")
    if not isinstance(mlp_bias, bool):
        mlp_bias = plain or model_type == "gpt_oss"
    shape: dict[str, Any] = {
        "layers": layers,
        "hidden": hidden,
        "intermediate": intermediate,
        "heads": heads,
        "kv_heads": kv_heads or None,
        "head_dim": head_dim,
        "vocab": vocab,
        "tied_embeddings": tied,
        "mlp": "plain" if plain else "gated",
        "norm": "layer" if plain else "rms",
        "attention_bias": attention_bias,
        "mlp_bias": mlp_bias,
        "max_context": _int(
            text, "max_position_embeddings", "n_positions", "seq_length", "max_sequence_length", default=4096
        ),
        "position": "learned"
        if model_type in _LEARNED_POSITIONS
        else "alibi"
        if model_type in _ALIBI
        else "rope",
        "attention_output_gate": model_type == "qwen3_next",
        "post_norms": 2 if model_type.startswith(("gemma2", "gemma3")) or model_type == "glm4" else 0,
        "post_norm_style": "llama" if model_type == "glm4" else "gemma",
    }
    if model_type in ("t5", "mt5"):
        shape |= {
            "encoder_layers": layers,
            "decoder_layers": _int(text, "num_decoder_layers", default=layers),
            "d_kv": _int(text, "d_kv", default=64),
            "position": "relative",
        }
    shape |= _moe(text, model_type, layers, intermediate)
    shape |= _mla(text)
    shape |= _layer_kinds(text, model_type, layers)
    unknown: list[str] = []
    if vision is not None:
        reading = _vision(vision, outer, config, hidden)
        shape |= reading
        if not reading:
            unknown.append("vision_tower: unrecognised vision config")
        elif "vision_projector_in" not in reading:
            unknown.append("vision_projector: unrecognised vision-language architecture")
    method, stored = _quantisation(text)
    if method:
        shape["quant_method"] = method
        if stored is None:
            unknown.append(f"weights: quantisation '{method}' not modelled")
        else:
            shape["native_precision"] = stored
    model = ModelArch.model_validate(base | shape | {"params_b": 1.0})
    computed = model.total_params
    if quantised_checkpoint and stored is not None:
        model = model.model_copy(update={"checkpoint_bytes": _checkpoint_bytes(parameters_by_dtype)})
    elif method == "mxfp4":
        # Experts in MXFP4 (4 bits + an 8-bit scale per 32 weights = 4.25 bits), the rest in bf16.
        experts = model.moe_layers * model.experts * model.expert_params
        model = model.model_copy(
            update={"checkpoint_bytes": int(experts * 4.25 / 8 + (computed - experts) * 2)}
        )
    published = total_checkpoint if total_checkpoint and not quantised_checkpoint else computed
    if total_checkpoint and not quantised_checkpoint and abs(computed / total_checkpoint - 1) > 0.1:
        unknown.append(
            f"architecture: the shape read gives {computed / 1e9:.2f}B parameters, the checkpoint has "
            f"{total_checkpoint / 1e9:.2f}B"
        )
    active = model.active_params / 1e9 if model.is_moe else None
    return ModelArch.model_validate(
        model.model_dump()
        | {"params_b": round(published / 1e9, 4), "active_params_b": active, "unknown_terms": unknown}
    )


def _from_parameter_count(
    base: dict[str, Any],
    total: int,
    parameters_by_dtype: Mapping[str, int] | None,
    registry: Registry | None,
    config: Mapping[str, Any],
) -> ModelArch:
    """An unrecognised architecture: a dense shape of the checkpoint's size, the shape-based terms flagged."""
    if not total:
        raise UnreadableConfigError(base["name"])
    shape = (registry or load_registry()).representative(round(total / 1e9, 3))
    kind = str(_get(config, "model_type", default="")) or "?"
    unknown = [
        f"kv_cache: unrecognised architecture ({kind})",
        f"activations: unrecognised architecture ({kind})",
    ]
    dtype = max((parameters_by_dtype or {}).items(), key=lambda kv: kv[1], default=("BF16", 0))[0].upper()
    native = {"F32": "fp32", "F8_E4M3": "fp8", "F8_E5M2": "fp8", "I8": "int8"}.get(dtype)
    update = base | {
        "params_b": round(total / 1e9, 4),
        "unknown_terms": unknown,
        # Its own model (answers name it), not a bare size; unverified widens the uncertainty band.
        "representative": False,
        "verified": False,
        "aliases": [],
        "native_precision": native,
        "checkpoint_bytes": _checkpoint_bytes(parameters_by_dtype) if native in ("fp8", "int8") else 0,
    }
    return ModelArch.model_validate(shape.model_dump() | update)
