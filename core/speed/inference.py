"""How fast a model generates on a card: decode steps, prefill, a whole generation, a served concurrency.

`Generation` holds what a job is (bytes, layers, FLOPs, the card, the runtime) and nothing fitted; the
functions below turn it into seconds with the constants of data/speed.toml, composing the named terms of
core/speed/terms.py. The same functions answer users (`inference_speed`) and reproduce the published figures
the constants were fitted to (core/speed/published.py), so what is tested is what is answered.

A decode step that reads some of its layers from host memory (an offloaded split) is two `Generation`s' reads
over two bandwidths: `decode_step_s(..., host_bytes=..., host_bytes_s=...)` adds the host part.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from core.catalog import Card
from core.estimator import Estimate, resolve_model, terms
from core.query import Precision
from core.registry import ModelArch, load_registry
from core.runtimes import load_runtimes, runtime_profile
from core.speed import terms as speed_terms
from core.speed.constants import RuntimeSpeed, SpeedConstants, load_speed_constants
from core.speed.memo import IdentityMemo

# The answer's generation when the user gives only a context: its last DEFAULT_OUTPUT_TOKENS tokens are
# generated after a prompt that fills the rest (ASSUMPTION, stated in the answer: chat replies run a few
# hundred tokens; NIM's benchmark uses 500 or 1,000 output tokens, ShareGPT replies average ~250).
DEFAULT_OUTPUT_TOKENS = 512


@dataclass(frozen=True)
class Generation:
    """One generation job's shape on its cards; everything the speed terms need except the constants."""

    runtime: str
    precision: Precision
    card: Card
    ranks: int  # cards that split every layer (tensor parallelism)
    layers: int
    moe_layers: int
    hidden: int
    active_params: float
    kv_bytes_per_token: float  # all layers, all cards, at the KV dtype
    kv_bytes_per_element: float  # the KV dtype's bytes (2: 16-bit, 1: FP8 / q8_0)
    kv_group_expansion: float  # query heads per KV head (what reading the KV per query head costs)
    attention_flops_per_token2: float  # prefill attention FLOPs per (prompt token)²: 2·L·h·d (causal)
    weight_bytes: dict[int, float] = field(default_factory=dict)  # batch -> weight bytes one step reads
    legacy_gqa: bool = False  # a release before the runtime's GQA-aware decode kernel (RuntimeSpeed)
    legacy_launch: bool = False  # a release before the runtime captured decode in CUDA graphs (graphs_before)
    # a release whose decode steps run eager past this context (vLLM V0's max_seq_len_to_capture); 0: none
    graph_max_context: int = 0
    # every decode step eager (vLLM's --enforce-eager: no CUDA / HIP graphs), at the runtime's
    # eager_s_per_layer
    eager: bool = False
    # MoE: the bytes every step reads whatever its tokens (attention, shared experts, the router) and those of
    # one routed expert over all MoE layers, so that a step's read follows the tokens it routes (prompt
    # tokens prefilled in it included: a 128-token prompt touches nearly every expert of Mixtral)
    dense_weight_bytes: float = 0.0
    expert_weight_bytes: float = 0.0
    experts: int = 0
    experts_active: int = 0
    linear_layers: int = 0  # linear-attention layers (Gated DeltaNet), each with its own fixed cost a step
    # MoE layers at the runtime's fitted fixed cost per layer (RuntimeSpeed.moe_s_per_layer): DeepSeek-V3's
    # layers (MLA with DeepSeekMoE) in every release, any other MoE in releases before the runtime's
    # moe_kernels_from; False: at its current_moe_s_per_layer (runtime_for)
    fitted_moe: bool = True
    # MoE tokens at the runtime's fitted cost per token (RuntimeSpeed.moe_token_s): releases before the
    # runtime's moe_kernels_from, whatever the architecture; False: at its current_moe_token_s
    fitted_moe_tokens: bool = True
    # layers whose attention stops at a window (sliding window) or a chunk (Llama 4): (share of the KV bytes
    # per token and of the attention FLOPs, the window in tokens); the rest attend to the whole context
    windows: tuple[tuple[float, int], ...] = ()
    # the engine's own 4-bit GEMV kernels (data/runtimes.toml int4_kernels, data/speed.toml
    # [formats.int4_kernels]): int4 weights read at their share by the step's rows; "": the shared int4 factor
    int4_kernels: str = ""
    # share of the active parameters in linear layers an FP8 checkpoint keeps in 16-bit (ModelArch
    # fp8_16bit_modules: Llama 3.1 405B FP8's attention and end MLPs), whose GEMMs run at the 16-bit peak
    fp8_16bit_share: float = 0.0
    # the engine captures its decode step in CUDA graphs of its own (data/runtimes.toml own_cuda_graphs:
    # ExLlamaV2), on every card architecture, not as the engine whose terms it borrows does
    own_graphs: bool = False

    def attended_tokens(self, kv_tokens: float) -> float:
        """Cached tokens a decoded token attends to, in whole-context layers' units: a sliding-window layer
        reads at most its window of the cache (vLLM's and SGLang's sliding-window attention read only the
        blocks inside it, and their managers free the rest; gpt-oss alternates 128-token windows with full
        layers, Mistral 7B v0.1 slides 4,096)."""
        if not self.windows:
            return kv_tokens
        capped = sum(share for share, _ in self.windows)
        return (1.0 - capped) * kv_tokens + sum(
            share * min(kv_tokens, window) for share, window in self.windows
        )

    def attended_pairs_share(self, prompt: float) -> float:
        """Share of a causal prefill's query-key pairs (prompt²/2 in whole-context layers) that the layers
        compute: a window of w keeps w·P − w²/2 pairs of P²/2 once the prompt is longer than it."""
        if not self.windows or prompt <= 0:
            return 1.0
        capped = sum(share for share, _ in self.windows)
        kept = 1.0 - capped
        for share, window in self.windows:
            if prompt > window:
                kept += share * (2.0 * window * prompt - window * window) / (prompt * prompt)
            else:
                kept += share
        return kept

    def weights_read(self, tokens: float) -> float:
        """Weight bytes a forward pass over `tokens` tokens reads: for MoE the experts they route to."""
        if not self.experts:
            return self.weight_bytes[1]
        touched = speed_terms.moe_experts_touched(self.experts, self.experts_active, max(1, round(tokens)))
        return self.dense_weight_bytes + touched * self.expert_weight_bytes


def runtime_name(runtime: str | None, precision: Precision, card: Card | None = None) -> str:
    """Which runtime's speed terms apply (data/speed.toml [runtimes.*]): the runtime profile's
    (data/runtimes.toml `speed_terms`, its Apple-silicon backend's on Apple cards); a GGUF file runs in the
    GGUF engine (llama.cpp) whatever else was said."""
    profile = load_runtimes().gguf_default if precision in terms.GGUF else runtime_profile(runtime)
    if card is not None and card.vendor == "Apple" and profile.speed_terms_apple:
        return profile.speed_terms_apple
    return profile.speed_terms


def decode_weight_bytes(model: ModelArch, precision: Precision, batch: int) -> float:
    """Weight bytes one decode step reads: all but the embedding table (one row is read); for MoE the
    dense part plus the experts that `batch` tokens route to (speed_terms.moe_experts_touched)."""
    total = terms.weight_bytes(model, precision)
    per_param = total / max(model.total_params, 1)
    embed_per = 2.0 if precision in terms.LINEAR_ONLY else per_param
    skipped = model.embedding_params * embed_per if not model.tied_embeddings else 0.0
    if not model.is_moe:
        return max(total - skipped, 0.0)
    expert_all = model.moe_layers * model.experts * model.expert_params
    touched = speed_terms.moe_experts_touched(model.experts, model.experts_active, batch)
    expert_read = model.moe_layers * touched * model.expert_params
    dense = model.total_params - expert_all
    return max((dense + expert_read) * per_param - skipped, 0.0)


def attention_flops_per_token2(model: ModelArch, layers: int) -> float:
    """Prefill attention FLOPs per (prompt token)², causal: per layer and head, the scores (2·d_qk per pair)
    and the weighted values (2·d_v per pair) over half the pairs, L·h·(d_qk + d_v); 2·L·h·d where keys and
    values share the head width. Multi-head latent attention (DeepSeek-V2/V3) prefills as multi-head attention
    over up-projected keys of qk_nope + qk_rope = 192 and values of v_head_dim = 128 per head (DeepSeek-V2
    report §2.1; config.json), not hidden / heads = 56."""
    if model.is_mla and model.v_head_dim:
        d_qk = model.qk_nope_head_dim + model.qk_rope_head_dim
        return float(layers * model.heads * (d_qk + model.v_head_dim))
    return 2.0 * layers * model.heads * model.dim_head


def generation(
    model: ModelArch,
    card: Card,
    *,
    runtime: str,
    precision: Precision,
    kv_dtype_bytes: float,
    ranks: int,
    batches: tuple[int, ...],
    legacy_gqa: bool = False,
    legacy_launch: bool = False,
    graph_max_context: int = 0,
    legacy_moe: bool = False,
    eager: bool = False,
) -> Generation:
    layers = model.decoder_layers or model.layers
    compressed_mla = runtime != "transformers"
    kv_token = terms.kv_bytes_per_token(model, kv_dtype_bytes, compressed_mla=compressed_mla)
    expansion = model.heads / max(model.n_kv_heads, 1) if not model.is_mla else 1.0
    dense, expert = 0.0, 0.0
    if model.is_moe:
        one = decode_weight_bytes(model, precision, 1)
        touched_one = speed_terms.moe_experts_touched(model.experts, model.experts_active, 1)
        all_experts = decode_weight_bytes(model, precision, 10**9)
        expert = (all_experts - one) / max(model.experts - touched_one, 1e-9)
        dense = one - touched_one * expert
    return Generation(
        runtime=runtime,
        precision=precision,
        card=card,
        ranks=max(ranks, 1),
        layers=layers,
        moe_layers=model.moe_layers if model.is_moe else 0,
        # the fixed cost is fitted to Gated DeltaNet's kernels (data/speed.toml); lightning attention has none
        linear_layers=model.linear_attention_layers if model.linear_attention == "gated_deltanet" else 0,
        hidden=model.hidden,
        active_params=float(model.active_params),
        kv_bytes_per_token=float(kv_token),
        kv_bytes_per_element=kv_dtype_bytes,
        kv_group_expansion=expansion,
        attention_flops_per_token2=attention_flops_per_token2(model, layers),
        weight_bytes={b: decode_weight_bytes(model, precision, b) for b in set(batches) | {1}},
        legacy_gqa=legacy_gqa,
        legacy_launch=legacy_launch,
        graph_max_context=graph_max_context,
        eager=eager,
        dense_weight_bytes=dense,
        expert_weight_bytes=expert,
        experts=model.experts if model.is_moe else 0,
        experts_active=model.experts_active if model.is_moe else 0,
        fitted_moe=model.is_mla or legacy_moe,
        fitted_moe_tokens=legacy_moe,
        windows=attention_windows(model, layers),
        fp8_16bit_share=(
            model.fp8_16bit_params / max(model.active_params, 1) if precision is Precision.FP8 else 0.0
        ),
    )


def with_own_kernels(g: Generation, runtime_id: str | None) -> Generation:
    """The generation with the named engine's own 4-bit kernels (data/runtimes.toml int4_kernels), where its
    profile has them: the speed terms it borrows (`runtime`) are another engine's, its kernels are not."""
    profiles = load_runtimes().by_id
    profile = profiles.get(runtime_id) if runtime_id else None
    if profile is None:
        return g
    if profile.own_cuda_graphs:
        g = replace(g, own_graphs=True)
    return replace(g, int4_kernels=profile.int4_kernels) if profile.int4_kernels else g


def attention_windows(model: ModelArch, layers: int) -> tuple[tuple[float, int], ...]:
    """The layers whose attention is capped, as (share of the layers, tokens): sliding-window layers at the
    window, chunked-attention layers (Llama 4) at the chunk; the same layer kinds the KV pool counts
    (core/estimator/terms.py kv_bytes_per_sequence). MLA and linear-attention models list none here (a
    linear layer's fixed state is not read per cached token; Gated DeltaNet has its own per-layer cost)."""
    if model.is_mla or not layers:
        return ()
    found: list[tuple[float, int]] = []
    if model.sliding_window and model.sliding_layers:
        found.append((model.sliding_layers / layers, model.sliding_window))
    if model.attention_chunk and model.chunked_layers:
        found.append((model.chunked_layers / layers, model.attention_chunk))
    return tuple(found)


def runtime_for(c: SpeedConstants, g: Generation) -> RuntimeSpeed:
    """The runtime's terms for this generation: its MoE layers at the fitted costs where those measure
    them, else at the runtime's current_moe_* costs.

    The fixed cost per MoE layer (g.fitted_moe): vLLM's fitted MoE figures are all DeepSeek-V3 / R1 (MLA with
    256 fine-grained experts, a shared expert and grouped top-k routing), and the fixed cost they measure is
    that architecture's more than vLLM's: dstack's SGLang runs of DeepSeek-R1 (excluded in speed.csv, 2.3-3.1x
    too fast with SGLang's Qwen3-MoE costs) come within 0.84-1.21x with vLLM's in their place. Applied to
    every MoE model, they made gpt-oss-20b on vLLM 0.19 2.2-2.5x too slow (speed_heldout6).

    The cost per token (g.fitted_moe_tokens) is the expert GEMMs' kernels, a release's: every fitted vLLM MoE
    figure ran the V0 engine (0.7.3, 0.7.4.dev: speed_sources.toml), which sends DeepSeek's block-FP8 experts
    through Triton's fused_moe kernel (vllm fused_moe.py get_default_config: "fp8_w8a8 and block_shape" ->
    BLOCK_SIZE_M 64, one expert's 256 columns per card at tensor parallelism 8); the fitted 2.7 us per token
    and MoE layer is ~88 MFLOP a card for the token's 8 experts at ~33 TFLOP/s, a thirtieth of the FP8 peak,
    and it is paid by prompt tokens as much as decoded ones (SGLang 0.4.3, the same Triton kernel, is what the
    vLLM costs fit above). From moe_kernels_from on every architecture's tokens take the current cost (the
    held-out DeepSeek-R1 runs of vLLM 0.8.4 and 0.11 were 1.2-3.4x slower than the V0 cost says, more the
    longer the prompts)."""
    runtime = c.runtime(g.runtime)
    if not g.experts or not runtime.moe_kernels_from or (g.fitted_moe and g.fitted_moe_tokens):
        return runtime
    key = (g.runtime, g.fitted_moe, g.fitted_moe_tokens)
    found = c.derived_runtimes.get(key)
    if found is None:
        update: dict[str, float] = {}
        if not g.fitted_moe and runtime.current_moe_s_per_layer is not None:
            update["moe_s_per_layer"] = runtime.current_moe_s_per_layer
        if not g.fitted_moe_tokens and runtime.current_moe_token_s is not None:
            update["moe_token_s"] = runtime.current_moe_token_s
        found = runtime.model_copy(update=update)
        c.derived_runtimes[key] = found
    return found


def _own_int4_kernel(c: SpeedConstants, g: Generation) -> tuple[tuple[int, float], ...] | None:
    """The engine's own 4-bit kernel's points (share of 16-bit GEMV bandwidth by rows), where it reads this
    generation's weights; None: the shared int4 factor (or another format) applies."""
    if g.precision is not Precision.INT4 or not g.int4_kernels:
        return None
    return c.formats.int4_kernels.get(g.int4_kernels)


def _bandwidth(c: SpeedConstants, g: Generation) -> float:
    """Decode reads' achieved bytes/s on one card. With the engine's own 4-bit kernel the weight format's
    factor is left out here (the KV cache is 16-bit; _weight_bandwidth applies the kernel's share to the
    weights)."""
    key = ("bandwidth", g.runtime, g.precision, g.card.id, g.card.bandwidth_gb_s, g.int4_kernels)
    found = c.derived.get(key)
    if found is None:
        own = _own_int4_kernel(c, g) is not None
        precision = Precision.BF16 if own else g.precision
        found = speed_terms.achieved_bandwidth(c, g.card, c.runtime(g.runtime), precision)
        c.derived[key] = found
    return found


def _weight_bandwidth(c: SpeedConstants, g: Generation, rows: float) -> float:
    """Bytes/s of a step's weight reads over `rows` tokens: the engine's own 4-bit kernel at its share for
    those rows (terms.own_kernel_share), else the achieved bandwidth with the format's factor."""
    points = _own_int4_kernel(c, g)
    bandwidth = _bandwidth(c, g)
    return bandwidth * speed_terms.own_kernel_share(points, rows) if points else bandwidth


def _peak(c: SpeedConstants, g: Generation) -> float:
    return _prefill_peak(c, g, g.precision)


def _prefill_peak(c: SpeedConstants, g: Generation, precision: Precision) -> float:
    """The prefill GEMMs' FLOP/s at `precision` on the generation's card and runtime (kept per card)."""
    key = ("peak", g.runtime, precision, g.card.id, g.card.tensor_tflops, g.card.fp8_tflops)
    found = c.derived.get(key)
    if found is None:
        peak = speed_terms.tensor_peak_flops(g.card, precision, c.training.fp8_gain)
        runtime = c.runtime(g.runtime)
        peak *= speed_terms.fp16_accumulate_factor(c, g.card, runtime, precision)
        found = peak * runtime.prefill_mfu * speed_terms.tensor_share(c, g.card)
        c.derived[key] = found
    return found


def _linear_compute_s(c: SpeedConstants, g: Generation, tokens: float) -> float:
    """The linear layers' GEMMs over `tokens` tokens on the generation's ranks: 2·N FLOPs a token at the
    precision's peak, the share an FP8 checkpoint keeps in 16-bit (g.fp8_16bit_share) at the BF16 peak."""
    flops = 2.0 * g.active_params * tokens / g.ranks
    if not g.fp8_16bit_share:
        return flops / _peak(c, g)
    kept = g.fp8_16bit_share
    return flops * ((1.0 - kept) / _peak(c, g) + kept / _prefill_peak(c, g, Precision.BF16))


def _attention_peak(c: SpeedConstants, g: Generation) -> float:
    """The prefill attention kernel's FLOP/s: FP8 only where the KV cache is FP8 too (an FP8 context FMHA);
    with FP8 weights over a 16-bit cache the scores and values run in BF16 (FlashAttention-3, FlashInfer),
    as training's FP8 recipes keep attention in BF16 (core/speed/training.py)."""
    if g.precision is not Precision.FP8 or g.kv_bytes_per_element <= 1:
        return _peak(c, g)
    return _prefill_peak(c, g, Precision.BF16)


def kv_read_bytes(c: SpeedConstants, g: Generation, sequences: int, kv_tokens: float) -> float:
    """KV bytes a step touches for `sequences` sequences of `kv_tokens` cached tokens each."""
    runtime = runtime_for(c, g)
    passes = speed_terms.kv_passes(runtime, g.kv_group_expansion)
    factor = runtime.kv_read_factor
    if g.legacy_gqa and g.kv_group_expansion > 1:
        factor *= speed_terms.legacy_gqa_read_factor(runtime, g.kv_group_expansion)
    return sequences * g.attended_tokens(kv_tokens) * g.kv_bytes_per_token * factor * passes


def _replays_graphs(runtime: RuntimeSpeed, g: Generation) -> bool:
    """Whether a step replays captured CUDA graphs: not in releases before the runtime's graphs, and not on
    the card architectures its graphs skip (terms.captures_graphs) unless the engine graphs its own step."""
    if g.legacy_launch:
        return False
    return g.own_graphs or speed_terms.captures_graphs(runtime, g.card)


def decode_step_s(
    c: SpeedConstants,
    g: Generation,
    batch: int,
    kv_tokens: float,
    *,
    prefill_tokens: float = 0.0,
    prefill_prompt: int = 0,
    host_bytes: float = 0.0,
    host_bytes_s: float = 0.0,
) -> float:
    """One decode step of `batch` sequences: the slower of reading (weights + KV over the achieved bandwidth,
    split over tensor-parallel ranks) and computing (the decoded tokens plus `prefill_tokens` prompt tokens
    sharing the step), plus the all-reduces and the runtime's fixed costs. `host_bytes` are weights read from
    host memory at `host_bytes_s` (layers offloaded to the CPU), sequentially after the card's part."""
    runtime = runtime_for(c, g)
    weights = g.weight_bytes[1]
    if g.experts:
        # A prompt is prefilled in one step (chunked prefill's budget, 2k-8k tokens, holds a chat prompt), so
        # a share prefill_tokens / prompt of the steps carries one and reads the experts its tokens route to;
        # the other steps read those of the decoded tokens only.
        chunk = max(prefill_prompt, 1)
        share = min(1.0, prefill_tokens / chunk) if prefill_tokens else 0.0
        weights = (1.0 - share) * g.weights_read(batch) + share * g.weights_read(batch + chunk)
    bandwidth = g.ranks * _bandwidth(c, g)
    attention_peak = g.ranks * _attention_peak(c, g)
    tokens = batch + prefill_tokens
    # Each kernel meets its own roofline: the linear layers' GEMMs read the weights and compute 2·N FLOPs per
    # token, attention reads the KV and computes the prompt tokens' causal scores; they run one after the
    # other, so a step is the sum of the two, not the larger of the step's total reads and FLOPs.
    linear_s = max(weights / (g.ranks * _weight_bandwidth(c, g, tokens)), _linear_compute_s(c, g, tokens))
    attention_s = max(
        kv_read_bytes(c, g, batch, kv_tokens) / bandwidth,
        g.attention_flops_per_token2 * g.attended_tokens(kv_tokens) * prefill_tokens / attention_peak,
    )
    comm_s = 0.0
    if g.ranks > 1:
        comm_s = speed_terms.tensor_parallel_comm_s(
            g.card, c.link, g.layers, g.hidden, int(tokens), ranks=g.ranks
        )
    host_s = host_bytes / host_bytes_s if host_bytes and host_bytes_s else 0.0
    routing_s = speed_terms.moe_routing_s(runtime, g.moe_layers, tokens)
    recurrent_s = g.linear_layers * runtime.linear_attention_s_per_layer
    gpu_s = linear_s + attention_s + comm_s + host_s + routing_s + recurrent_s
    factor = speed_terms.per_layer_factor(c, g.card)
    dense = speed_terms.dense_layer_factor(c, g.card)
    if g.eager or (g.graph_max_context and kv_tokens > g.graph_max_context):
        # eager launches from the host: at the stack's fitted launch factor (HIP's host launch on ROCm)
        gpu_s += speed_terms.eager_fallback_s(runtime, g.layers, factor)
    return speed_terms.step_s(
        runtime,
        gpu_s,
        g.layers,
        g.moe_layers,
        batch,
        factor=factor,
        graphs=_replays_graphs(runtime, g),
        dense_factor=dense,
    )


def prefill_s(c: SpeedConstants, g: Generation, prompt: int, prompts: int = 1) -> float:
    """Time to prefill `prompts` prompts of `prompt` tokens at once: their FLOPs (linear layers and causal
    attention) over the peak × the runtime's prefill utilisation, or the one weight read, whichever is
    longer."""
    linear = _linear_compute_s(c, g, prompts * prompt)
    pairs = prompt * prompt * g.attended_pairs_share(prompt)
    attention = prompts * g.attention_flops_per_token2 * pairs / (g.ranks * _attention_peak(c, g))
    compute = linear + attention
    read = g.weights_read(prompts * prompt) / g.ranks / _weight_bandwidth(c, g, prompts * prompt)
    comm = 0.0
    if g.ranks > 1:
        comm = speed_terms.tensor_parallel_comm_s(
            g.card, c.link, g.layers, g.hidden, prompts * prompt, ranks=g.ranks
        )
    runtime = runtime_for(c, g)
    comm += speed_terms.moe_routing_s(runtime, g.moe_layers, prompts * prompt)
    factor = speed_terms.per_layer_factor(c, g.card)
    gpu_s = max(compute, read) + comm
    step = speed_terms.step_s(
        runtime,
        gpu_s,
        g.layers,
        g.moe_layers,
        prompts,
        factor=factor,
        graphs=_replays_graphs(runtime, g),
        dense_factor=speed_terms.dense_layer_factor(c, g.card),
    )
    return step + runtime.prefill_fixed_s


def generation_s(c: SpeedConstants, g: Generation, batch: int, prompt: int, output: int) -> float:
    """A static batch of `batch` prompts generating `output` tokens each: one prefill, then `output` steps,
    each reading the KV at its average length over the generation."""
    kv = speed_terms.average_kv_tokens(prompt, output)
    return prefill_s(c, g, prompt, batch) + output * decode_step_s(c, g, batch, kv)


def serving_step_s(c: SpeedConstants, g: Generation, concurrency: int, prompt: int, output: int) -> float:
    """A continuous-batching step at `concurrency` running requests: each step decodes them and prefills the
    prompts of the requests that replace the finished ones (concurrency·prompt/output tokens on average)."""
    kv = speed_terms.average_kv_tokens(prompt, output)
    prefill_tokens = concurrency * prompt / max(output, 1)
    runtime = runtime_for(c, g)
    if runtime.mixes_prefill:
        return decode_step_s(c, g, concurrency, kv, prefill_tokens=prefill_tokens, prefill_prompt=prompt)
    # Prefill batches of their own: the decode step reads the weights for the running requests alone, and the
    # prompts arriving per step are prefilled apart, as many whole prompts per batch as the chunk holds (a
    # longer prompt in chunks of it), each batch its own weight read, FLOPs and fixed costs.
    prompts_per_batch = max(1, speed_terms.prefill_chunk_tokens(runtime, g.card) // max(prompt, 1))
    batch_s = prefill_s(c, g, prompt, prompts_per_batch)
    return decode_step_s(c, g, concurrency, kv) + prefill_tokens / (prompts_per_batch * prompt) * batch_s


def loaded_ttft_s(
    c: SpeedConstants, g: Generation, prompt: int, running: int, scheduler_steps: int = 1
) -> float:
    """Time to the first token of a request that arrives while `running` requests decode (a served load).

    Alone (running <= 1, or a runtime without continuous batching) it is the prompt's prefill. Under load the
    request first waits for the step in progress: arriving at a random moment, half a decode step on average,
    and with vLLM's multi-step scheduling (--num-scheduler-steps n) half of the n-step run, since "new
    prefill requests will only start at every n steps" (vLLM RFC #6854, the multi-step design). Then its
    prompt runs in the next step beside the running decodes (vLLM's chunked prefill, TensorRT-LLM's in-flight
    batching), or in a prefill batch of its own while they wait (SGLang), whose end emits the first token."""
    runtime = runtime_for(c, g)
    if running <= 1 or not runtime.continuous_batching:
        return prefill_s(c, g, prompt, 1)
    kv = float(prompt)
    wait = max(scheduler_steps, 1) * decode_step_s(c, g, running, kv) / 2
    if runtime.mixes_prefill:
        first = decode_step_s(c, g, running, kv, prefill_tokens=prompt, prefill_prompt=prompt)
        return wait + max(first, prefill_s(c, g, prompt, 1))
    return wait + prefill_s(c, g, prompt, 1)


def _band(c: SpeedConstants, g: Generation, runtime: str, card: Card) -> float:
    """The answer's ± band: the runtime's and card family's (calibration.band_for), and the uncalibrated one
    where the MoE layers run at costs no fitted figure of this runtime measures (runtime_for: on a release
    past the runtime's moe_kernels_from the tokens of every MoE, and the layers of any MoE but DeepSeek-V3's,
    take another runtime's fitted costs)."""
    from core.speed.calibration import band_for

    band = band_for(c, runtime, card, training=False)
    fitted = g.fitted_moe and g.fitted_moe_tokens
    if g.experts and not fitted and c.runtime(g.runtime).moe_kernels_from:
        band = max(band, c.band.uncalibrated)
    return band


class InferenceSpeed(BaseModel):
    """Generation speed of one job: per sequence, for the batch, and the wait for the first token."""

    model_config = ConfigDict(frozen=True)
    kind: ClassVar[Literal["inference"]] = "inference"  # the answers' `speed.kind`

    decode_tokens_per_s: float
    aggregate_tokens_per_s: float
    batch: int
    ttft_s: float
    efficiency: float
    bound_fraction: float
    mfu: float
    parallelism: str
    bytes_per_step: int
    runtime: str = "transformers"
    kv_cache_dtype: str = "auto"
    average_kv_tokens: int = 0
    output_tokens: int = DEFAULT_OUTPUT_TOKENS
    band: float = 0.25
    calibrated_on: list[str] = []
    notes: list[str] = []


_SPEEDS: IdentityMemo[InferenceSpeed] = IdentityMemo()


def inference_speed(estimate: Estimate, card: Card, gpus: int) -> InferenceSpeed:
    """Decode tokens/s per sequence and for the batch, and time to first token, for a generation of
    DEFAULT_OUTPUT_TOKENS tokens at the end of the asked context. Remembered per (model, card, constants)
    and the query's fields the speed reads (core/speed/memo.py); each call gets its own lists."""
    c = load_speed_constants()
    query = estimate.query
    model = resolve_model(query, load_registry())
    anchors = (model, card, c)
    fields = (
        gpus,
        query.precision,
        query.seq,
        query.batch,
        query.runtime,
        query.kv_cache_dtype,
        estimate.vllm.concurrent_sequences if estimate.vllm is not None else None,
    )
    speed = _SPEEDS.get(anchors, fields)
    if speed is None:
        speed = _SPEEDS.put(anchors, fields, _inference_speed(estimate, card, gpus, c, model))
    return speed.model_copy(update={"notes": list(speed.notes), "calibrated_on": list(speed.calibrated_on)})


def _inference_speed(
    estimate: Estimate, card: Card, gpus: int, c: SpeedConstants, model: ModelArch
) -> InferenceSpeed:
    from core.speed.calibration import calibrated_on

    query = estimate.query
    precision = query.precision or Precision.BF16
    seq = query.seq or 2048
    gpus = max(gpus, 1)
    name = runtime_name(query.runtime, precision, card)
    runtime = c.runtime(name)
    batch = query.batch or 1
    notes: list[str] = []
    if runtime.continuous_batching and estimate.vllm is not None:
        # A serving engine decodes the sequences its KV pool holds at once (the rest queue), at most its
        # max_num_seqs (vLLM's default 256).
        pool_batch = max(1, estimate.vllm.concurrent_sequences)
        if pool_batch != batch:
            notes.append("batch_from_vllm_pool")
        if runtime.max_num_seqs and batch > runtime.max_num_seqs and pool_batch == runtime.max_num_seqs:
            notes.append("max_num_seqs")
        batch = pool_batch
    tensor_parallel = gpus > 1 and runtime.tensor_parallel
    parallelism = "single" if gpus == 1 else ("tensor" if tensor_parallel else "pipeline")
    if gpus > 1 and not tensor_parallel:
        notes.append("layers_split_sequential")
    if gpus > 1 and not card.has_nvlink:
        notes.append("no_nvlink")
    kv_bytes = terms.kv_dtype_bytes(precision, query.kv_cache_dtype)
    g = generation(
        model,
        card,
        runtime=name,
        precision=precision,
        kv_dtype_bytes=kv_bytes,
        ranks=gpus if tensor_parallel else 1,
        batches=(batch,),
    )
    g = with_own_kernels(g, query.runtime)
    output = min(DEFAULT_OUTPUT_TOKENS, max(seq // 2, 1))
    prompt = max(seq - output, 1)
    kv = speed_terms.average_kv_tokens(prompt, output)
    one_s = decode_step_s(c, g, 1, kv)
    if runtime.continuous_batching and batch > 1:
        batch_s = serving_step_s(c, g, batch, prompt, output)
        notes.append("prefill_shares_steps")
    else:
        batch_s = decode_step_s(c, g, batch, kv)
    read = g.weight_bytes[batch] + kv_read_bytes(c, g, batch, kv)
    bound_s = (g.weight_bytes[1] + kv * g.kv_bytes_per_token) / g.ranks / (card.bandwidth_gb_s * 1e9)
    if query.precision in (Precision.INT8,) and runtime_profile(query.runtime).int8_kernels == "bitsandbytes":
        notes.append("bnb_int8_slow")
    # transformers prefills the whole batch of prompts in one call; a serving engine prefills each request as
    # it arrives, so its concurrency does not delay one prompt's first token.
    prompts = 1 if runtime.continuous_batching else batch
    return InferenceSpeed(
        decode_tokens_per_s=1.0 / one_s,
        aggregate_tokens_per_s=batch / batch_s,
        batch=batch,
        ttft_s=prefill_s(c, g, prompt, prompts),
        efficiency=_weight_bandwidth(c, g, 1) / (card.bandwidth_gb_s * 1e9),
        bound_fraction=min(1.0, bound_s / one_s),
        mfu=runtime.prefill_mfu,
        parallelism=parallelism,
        bytes_per_step=int(read / g.ranks),
        runtime=name,
        kv_cache_dtype=(query.kv_cache_dtype.value if query.kv_cache_dtype else "auto"),
        average_kv_tokens=int(kv),
        output_tokens=output,
        band=_band(c, g, name, card),
        calibrated_on=calibrated_on(name, card, training=False),
        notes=notes,
    )
