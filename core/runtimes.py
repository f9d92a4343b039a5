"""Runtime profiles: what an engine (transformers, vLLM, SGLang, llama.cpp, Ollama, …) does with memory and
time, as data (data/runtimes.toml), so that the estimator, the speed model, the advisor and the parser read a
profile's fields instead of testing which engine it is.

Adding a runtime is one table in data/runtimes.toml (its words, memory layout, defaults and speed terms),
at most one new memory term where its layout is new, and the sentences that name it.
"""

from __future__ import annotations

import re
import tomllib
from functools import cached_property, lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from core.paths import DATA_DIR
from core.regex_screen import screened

RUNTIMES_FILE = DATA_DIR / "runtimes.toml"

Job = Literal["inference", "training", "vision"]


class RuntimeMemory(BaseModel):
    """How inference memory is laid out on this engine (data/runtimes.toml explains each field)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    layout: Literal["prefill", "kv_pool"]
    memory_share: float | None = Field(default=None, gt=0, le=1)
    # what `memory_share` is a share of: "card", the whole card (vLLM gpu_memory_utilization, SGLang
    # mem_fraction_static), or "free", the memory left once the weights and the engine's buffers are loaded,
    # all of which goes to the KV cache (LMDeploy's cache_max_entry_count)
    memory_share_of: Literal["card", "free"] = "card"
    memory_share_flag: str | None = None  # the engine's name for that share, as answers quote it
    # the larger share a short card can be given by the flag that sets `memory_share` (a fix: no quality or
    # speed cost, only less headroom for the engine's own estimate)
    memory_share_raised: float | None = Field(default=None, gt=0, le=1)
    kv_compressed_mla: bool
    kv_windowed: bool
    prefill_chunk_tokens: int | None = Field(default=None, ge=1)
    overhead: Literal["allocator", "engine"]
    extra_uncertainty: float = Field(default=0.0, ge=0, le=1)


class RuntimeDefaults(BaseModel):
    """What a question that does not say gets on this engine (stated as assumptions)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    context: int | None = Field(default=None, ge=1)
    precision: str | None = None  # a core.query.Precision value (tests/test_runtimes.py holds it)
    # issue 18: Ollama's num_ctx by total VRAM (data/jobs.toml [ollama]) instead of `context`
    context_by_vram: bool = False
    # training frameworks' own recipe (Unsloth: 4-bit QLoRA, chunked loss, offloaded checkpoints; torchtune:
    # no fp32 master weights)
    method: str | None = None  # a core.query.Method value
    chunked_loss: bool | None = None
    offload_activations: bool | None = None
    master_weights: bool | None = None


class RuntimeSlots(BaseModel):
    """An engine that answers a fixed number of requests at once, each slot with the whole context (its KV
    cache allocated for all slots when the model loads), and queues the rest (Ollama's OLLAMA_NUM_PARALLEL and
    OLLAMA_MAX_QUEUE; data/runtimes.toml cites the source). A question's concurrency beyond the slots waits;
    the memory is the slots'."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    parallel: int = Field(ge=1)  # slots when not set
    parallel_setting: str  # the engine's own name for it, as answers quote it
    parallel_since: str | None = None  # the release whose default `parallel` is (None: not said)
    parallel_before: int | None = Field(default=None, ge=1)  # the default before that release (when it fit)
    # the slots share one context's KV cache (llama-server: -c is the whole cache, split or unified between
    # the slots) instead of each holding the whole context (Ollama: -c num_ctx × parallel)
    kv_shared: bool = False
    max_queue: int | None = Field(default=None, ge=0)  # requests that may wait; past them the engine refuses
    max_queue_setting: str | None = None


class RuntimeRl(BaseModel):
    """How an RL trainer lays out GRPO / PPO (core/jobs/rl.py reads these; data/runtimes.toml cites each)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    grpo_reference: bool = True  # the KL term's reference model is loaded for GRPO (TRL's beta 0: no)
    completion_tokens: int | None = Field(default=None, ge=1)  # max completion length when not said
    rollout_tensor_parallel: int | None = Field(default=None, ge=1)  # None: over all the training cards
    # the engine's tensor parallelism grows from that default up to the cards of one node (larger models)
    rollout_tensor_parallel_grows: bool = False
    rollout_share: float | None = Field(default=None, gt=0, le=1)  # the rollout engine's share of a card
    rollout_shares_weights: bool = False  # generation reads the training weights (no second copy)
    # the colocated engine sleeps during the update (vLLM sleep level 1: weights to host RAM, KV cache freed),
    # so the rollout and the update step are two phases, not one sum
    rollout_sleeps: bool = False
    # the update's micro-batch holds at most this many tokens a card (verl: use_dynamic_bsz packs
    # ppo_max_token_len_per_gpu); the rest of a step's generations are accumulated, not held at once
    update_tokens_per_card: int | None = Field(default=None, ge=1)


class RuntimeProfile(BaseModel):
    """One engine."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    words: tuple[str, ...]
    jobs: tuple[Job, ...]
    serving_default: bool = False
    training_default: bool = False
    source: str
    memory: RuntimeMemory
    defaults: RuntimeDefaults = RuntimeDefaults()
    speed_terms: str  # data/speed.toml [runtimes.<speed_terms>] (core/speed; fitted by tools/fit_speed.py)
    speed_terms_apple: str | None = None  # the engine's Apple-silicon backend, when it has other terms
    gguf_default: bool = False  # the engine a GGUF file runs in
    int8_kernels: Literal["fast", "bitsandbytes"]
    # the engine's own 4-bit GEMV kernels: a table of data/speed.toml [formats.int4_kernels] (None: the shared
    # int4 format factor)
    int4_kernels: str | None = None
    # captures its decode step in CUDA graphs of its own on every card architecture (ExLlamaV2's
    # exllamav2_ext/cuda/graph.cu checks none), where the engine whose speed terms it borrows skips some
    # (llama.cpp below Ampere: core/speed/terms.py captures_graphs)
    own_cuda_graphs: bool = False
    # issue 18: keeps what does not fit in system RAM by itself: repeating layers (llama.cpp's -ngl / --fit),
    # or every routed MoE expert (KTransformers) — core/jobs/offload.py splits the job
    host_offload: Literal["layers", "experts"] | None = None
    host_server: bool = False  # its published setups are servers (8-channel DDR5): the host assumed
    # the release before which the engine split a model that does not fit by whole layers of its own choosing
    # (Ollama's scheduler before v0.30), where its current one keeps MoE experts in RAM first (--fit)
    layer_split_before: str | None = None
    metal: bool = (
        False  # runs on Apple silicon's GPU (Metal); CUDA-only engines do not (data/apple.toml devices)
    )
    metal_default: Literal["inference", "training"] | None = None  # the engine a Mac gets for that job
    rl: RuntimeRl | None = None
    slots: RuntimeSlots | None = None  # requests answered at once, the rest queued (Ollama)
    # the launch line, a template over core/jobs/launch.py's fields ({repo}, {gguf}, {tag}, {gpus}, {seq},
    # {share}, {ngl}, {gpu_fraction}) and the optional flags below (each with its own placeholders)
    launch: str | None = None
    launch_kv: str | None = None  # with a KV cache dtype asked: {kv}
    launch_expert_parallel: str | None = None
    launch_dp_attention: str | None = None  # MLA models on several cards: {gpus}
    launch_experts_on_cpu: str | None = None  # MoE experts in system RAM: {cpu_moe_layers}
    # weights kept in host memory and read over PCIe in every forward pass (vLLM --cpu-offload-gb): the flag,
    # as answers quote it, and its launch fragment ({cpu_offload_gb})
    weight_offload_flag: str | None = None
    launch_weight_offload: str | None = None
    # the engine's own setting for the layers on the card, as answers quote it ({ngl}, {gpu_fraction}):
    # llama.cpp's -ngl, Ollama's num_gpu, LM Studio's --gpu share
    gpu_layers_knob: str | None = None

    @property
    def kv_pool(self) -> bool:
        """A serving engine that takes a share of the card and pages a KV pool into it (vLLM, SGLang)."""
        return self.memory.layout == "kv_pool"


class RuntimeTable(BaseModel):
    """Every profile, in file order (which is also the order their words are tried in)."""

    model_config = ConfigDict(frozen=True, ignored_types=(cached_property,))

    profiles: tuple[RuntimeProfile, ...]

    @cached_property
    def by_id(self) -> dict[str, RuntimeProfile]:
        return {p.id: p for p in self.profiles}

    @cached_property
    def serving_default(self) -> RuntimeProfile:
        return next(p for p in self.profiles if p.serving_default)

    @cached_property
    def training_default(self) -> RuntimeProfile:
        return next(p for p in self.profiles if p.training_default)

    @cached_property
    def gguf_default(self) -> RuntimeProfile:
        return next(p for p in self.profiles if p.gguf_default)

    def metal_default(self, training: bool) -> RuntimeProfile:
        """The engine an Apple silicon Mac runs the job in when the question names none that runs there."""
        job = "training" if training else "inference"
        return next(p for p in self.profiles if p.metal_default == job)

    @cached_property
    def _pattern(self) -> re.Pattern[str]:
        groups = [f"(?P<r{i}>{'|'.join(p.words)})" for i, p in enumerate(self.profiles) if p.words]
        return screened("|".join(groups), re.IGNORECASE)  # searched ~3 times per question (regex_screen)

    def get(self, runtime_id: str | None) -> RuntimeProfile:
        """The profile of a runtime id; None is the engine for training and single sequences."""
        if runtime_id is None:
            return self.training_default
        return self.by_id[runtime_id]

    def blanked(self, text: str) -> str:
        """`text` with every runtime name replaced by spaces of the same length (LLaMA-Factory is no Llama
        model for the model reader; offsets stay where they were)."""
        return self._pattern.sub(lambda m: " " * len(m.group(0)), text)

    def named_in(self, text: str) -> RuntimeProfile | None:
        """The runtime a question names (the first profile, in file order, whose words appear), not one it
        rules out ('不用 vllm，就用 transformers', 'llama.cpp instead of Ollama')."""
        found = None
        for match in self._pattern.finditer(text):
            if _RULED_OUT_BEFORE.search(text, max(0, match.start() - 14), match.start()):
                continue
            index = min(int(name[1:]) for name, value in match.groupdict().items() if value is not None)
            if found is None or index < found:
                found = index
        return self.profiles[found] if found is not None else None


# Words just before a runtime's name that rule it out rather than name it.
_RULED_OUT_BEFORE = re.compile(
    r"(?:不用|不想用|不要用|不使用|别用|没用|而不是|不是|without|instead\s+of|rather\s+than|not\s+using|not|no)\s*$"
)


class VisionRuntimeProfile(BaseModel):
    """An image / video pipeline engine (ComfyUI, diffusers): whether it offloads by itself and how
    (data/runtimes.toml [vision_runtimes.*] explains each field)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    words: tuple[str, ...]
    auto_offload: bool
    offload_modes: tuple[Literal["model", "partial", "sequential", "group"], ...]
    inference_reserve_gib: float = Field(ge=0)
    stream_factor: float | None = Field(default=None, gt=0)
    # model offload: every component moved to the card and back once per item, at this share of the PCIe
    # link (pageable host memory, per-tensor copies); absent: one pinned copy in, at pcie_efficiency
    model_offload_efficiency: float | None = Field(default=None, gt=0, le=1)
    # sequential offload: every leaf module crosses PCIe on every step at this share of the link, not
    # overlapped with compute (absent: pcie_efficiency × stream_factor)
    leaf_offload_efficiency: float | None = Field(default=None, gt=0, le=1)
    vae_tiled_fallback: bool
    # a job naming no engine runs in this one (vision_runtime_of(None)); when it does not fit as asked it runs
    # with the first of these offloads that fits, as the models' own READMEs and diffusers' memory guide run
    # pipelines on cards too small for them (the answer says which and what it costs), before a "no"
    unnamed_offload_modes: tuple[Literal["model", "group", "sequential"], ...] = ()
    # the whole pipeline is loaded into system RAM before offload hooks move a component to the card
    loads_pipeline_to_host: bool = False
    source: str


@lru_cache(maxsize=1)
def load_vision_runtimes() -> tuple[VisionRuntimeProfile, ...]:
    """The image / video pipeline engines, in file order."""
    with RUNTIMES_FILE.open("rb") as handle:
        raw = tomllib.load(handle)
    return tuple(VisionRuntimeProfile(id=key, **row) for key, row in raw.get("vision_runtimes", {}).items())


def vision_runtime(runtime_id: str) -> VisionRuntimeProfile:
    """The profile of a vision runtime id (`VisionJob.runtime`)."""
    return next(p for p in load_vision_runtimes() if p.id == runtime_id)


def vision_runtime_of(runtime_id: str | None) -> VisionRuntimeProfile:
    """The engine a vision job runs in: the one named, else the first that offloads only when asked (a job
    naming no engine and asking for offload asks for enable_*_offload(); ComfyUI is named when used)."""
    if runtime_id:
        return vision_runtime(runtime_id)
    return next(p for p in load_vision_runtimes() if not p.auto_offload)


def vision_runtime_named_in(text: str) -> VisionRuntimeProfile | None:
    """The image / video engine a question names (the first in file order whose words appear)."""
    for profile in load_vision_runtimes():
        if any(re.search(word, text, re.IGNORECASE) for word in profile.words):
            return profile
    return None


@lru_cache(maxsize=1)
def load_runtimes() -> RuntimeTable:
    with RUNTIMES_FILE.open("rb") as handle:
        raw = tomllib.load(handle)
    table = RuntimeTable(
        profiles=tuple(RuntimeProfile(id=key, **row) for key, row in raw["runtimes"].items())
    )
    if (
        sum(p.serving_default for p in table.profiles) != 1
        or sum(p.training_default for p in table.profiles) != 1
    ):
        raise ValueError(f"{RUNTIMES_FILE}: exactly one serving_default and one training_default runtime")
    return table


def runtime_profile(runtime_id: str | None) -> RuntimeProfile:
    """The profile of a query's runtime (None: the training / single-sequence default)."""
    return load_runtimes().get(runtime_id)


def known_runtime(value: str) -> str:
    """A runtime id as the data names it (validation of `Query.runtime`)."""
    key = value.strip().lower()
    if key not in load_runtimes().by_id:
        raise ValueError(f"unknown runtime {value!r}; known: {', '.join(load_runtimes().by_id)}")
    return key


__all__ = [
    "RuntimeDefaults",
    "RuntimeMemory",
    "RuntimeProfile",
    "RuntimeTable",
    "VisionRuntimeProfile",
    "known_runtime",
    "load_runtimes",
    "load_vision_runtimes",
    "runtime_profile",
    "vision_runtime",
    "vision_runtime_named_in",
]
