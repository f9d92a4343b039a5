"""Published speed figures (data/measured/speed.csv, sources in speed_sources.toml) and gpufit's prediction of
each, through the same functions the answers use.

`prepare` turns a figure's setup into the job shapes of core/speed/inference.py and training.py once (model,
bytes, layers, FLOPs, the KV pool); `predict` applies a set of constants to it, which is all the fit
(core/speed/fitting.py) repeats.
"""

from __future__ import annotations

import csv
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

from core.catalog import Card, Catalog, load_catalog
from core.estimator import estimate, terms
from core.estimator.calibration import load_calibration
from core.paths import DATA_DIR
from core.query import KvCacheDtype, Method, Precision, Query, Runtime, Task
from core.registry import ModelArch, load_registry
from core.speed import terms as speed_terms
from core.speed.constants import SpeedConstants, load_speed_constants
from core.speed.inference import (
    Generation,
    decode_step_s,
    generation,
    generation_s,
    loaded_ttft_s,
    runtime_name,
    serving_step_s,
    with_own_kernels,
)
from core.speed.terms import release_before
from core.speed.training import (
    TrainingJob,
    attention_flops_per_token,
    expert_share,
    optimizer_step_bytes,
    tokens_per_s_per_gpu,
    training_flops_per_token,
)
from core.units import GIB

Kind = Literal["generate", "serve", "static_batch", "ttft", "train", "pretrain_hours", "diffusion"]
TRAINING_KINDS = ("train", "pretrain_hours")
MEASURED = DATA_DIR / "measured"


class PublishedFigure(BaseModel):
    """One published figure and the exact setup it was measured in (speed.csv's columns)."""

    model_config = ConfigDict(frozen=True)

    id: str
    source: str
    kind: Kind
    model: str
    card: str
    gpus: int
    runtime: str
    precision: Precision
    kv_dtype: KvCacheDtype | None
    batch: int
    input_len: int
    output_len: int
    tp: int
    pp: int
    ep: int
    vp: int
    gbs: int
    mbs: int
    seq: int
    recompute: bool = False  # training with full activation recomputation (the forward runs twice)
    tokens: float
    method: Method
    width: int
    height: int
    steps: int
    metric: str
    published: float
    status: Literal["fit", "excluded", "held_out"]
    note: str

    @field_validator("kv_dtype", mode="before")
    @classmethod
    def _empty_kv(cls, value: object) -> object:
        return value or None

    @field_validator(
        "batch",
        "input_len",
        "output_len",
        "tp",
        "pp",
        "ep",
        "vp",
        "gbs",
        "mbs",
        "seq",
        "width",
        "height",
        "steps",
        mode="before",
    )
    @classmethod
    def _empty_int(cls, value: object) -> object:
        return value or 1

    @field_validator("recompute", mode="before")
    @classmethod
    def _empty_bool(cls, value: object) -> object:
        return value or False

    @field_validator("tokens", mode="before")
    @classmethod
    def _empty_float(cls, value: object) -> object:
        return value or 0.0

    @field_validator("method", mode="before")
    @classmethod
    def _empty_method(cls, value: object) -> object:
        return value or Method.FULL

    @property
    def is_training(self) -> bool:
        return self.kind in TRAINING_KINDS

    def card_spec(self, catalog: Catalog) -> Card:
        fixture = _fixture_cards().get(self.card)
        return fixture if fixture else catalog.get(self.card)


class Source(BaseModel):
    model_config = ConfigDict(frozen=True)

    citation: str
    url: str
    date: str
    setup: str
    runtime_version: str = ""  # the engine release the figures were measured with, where the source says it
    # a source that ran several engines, each at its own release (dstack's DeepSeek-R1 runs: vLLM 0.7.4.dev,
    # SGLang 0.4.3.post2): engine -> release, ahead of runtime_version
    runtime_versions: dict[str, str] = {}
    framework: str | None = None  # training sources: what ran them (data/speed.toml [training.frameworks])
    power_limit_w: int | None = None  # training sources that state their cards' power limit
    # training sources whose Megatron scripts leave --tp-comm-overlap off (Megatron-LM's default): the
    # tensor-parallel collectives only the backward's asynchronous ones hide (training.TrainingJob)
    tp_comm_overlap: bool = True
    # training sources that state the network between their nodes: Gb/s per node, all its NICs together
    # ("4 x 100Gb RoCE between machines": 400), shared by the node's cards (training.job_link)
    network_gbit_s_per_node: float | None = None
    # training sources whose code shows the attention kernel: FlashAttention-2 (the flash-attn package, as a
    # legacy Megatron model's --use-flash-attn calls it) or not; None: the framework's
    flash_attention_2: bool | None = None
    # serving sources that state TensorRT-LLM's kv_cache_free_gpu_mem_fraction (else the runtime's default)
    kv_free_memory_share: float | None = None
    # serving sources that state vLLM's --num-scheduler-steps (multi-step scheduling, vLLM 0.6-0.7): a request
    # arriving mid-run waits for the run's remaining steps before its prefill (inference.loaded_ttft_s)
    scheduler_steps: int = 1
    # serving sources that state vLLM's --enforce-eager (no CUDA / HIP graphs): every decode step launches its
    # kernels from Python, the eager step vLLM V0 falls back to past max_seq_len_to_capture
    # (inference.decode_step_s, RuntimeSpeed.eager_s_per_layer)
    enforce_eager: bool = False
    # training sources whose full fine-tunes keep no fp32 master weights (torchtune's bf16, PEFT's runs
    # without AMP): the optimizer step updates 16-bit weights and states
    pure_bf16: bool = False
    # pretraining sources whose GPU-hours are their tokens over their own steady throughput, not a run's
    # wall clock: a rate "per trillion tokens" (DeepSeek-V2 §3.4: "for training on each trillion tokens ...
    # DeepSeek-V2 needs only 172.8K GPU hours"; DeepSeek-V3 Table 1: 180K per trillion x 14.8T = 2.664M), or
    # hours the source itself equates to its throughput (fms-fsdp: 2.2T tokens in 162k GPU-hours "achieving
    # an efficiency of 3700 tokens/sec/GPU", 2.2T / 3,700 = 165k). No restart, evaluation or failure is in
    # them, so goodput (data/speed.toml, the wall clock's share of useful steps) is not applied.
    hours_from_throughput: bool = False


FITTED_TABLE = "speed"  # speed.csv + speed_sources.toml: what tools/fit_speed.py fits
HELD_OUT_TABLE = "speed_heldout"  # speed_heldout.csv + speed_heldout_sources.toml: checked, never fitted
HELD_OUT_2_TABLE = "speed_heldout2"  # a second held-out set, recorded before it was predicted
HELD_OUT_3_TABLE = "speed_heldout3"  # a third (serving): recorded and committed before it was predicted
HELD_OUT_4_TABLE = "speed_heldout4"  # a fourth (vLLM ROCm, SGLang, llama.cpp): committed before predicted
HELD_OUT_5_TABLE = "speed_heldout5"  # a fifth (SGLang and vLLM serving on A100, H100, H200): the same
# a sixth (vLLM on 8x H100 / 8x MI300X, FP8 KV on an H100, DeepSeek-R1 on 8x H20, llama.cpp on a 3090 Ti),
# from sources none of the tables above use, committed before it was predicted: issue 22's outside check
HELD_OUT_6_TABLE = "speed_heldout6"
# a seventh (vLLM 0.7.3 and 0.10.0 on 8x MI300X: Llama 3.1 70B / 405B FP8 batch latency), from sources none
# of the tables above use, committed before it was predicted: issue 22's outside check
HELD_OUT_7_TABLE = "speed_heldout7"
# an eighth (ExLlamaV2 0.1.8 batch-1 decode on an RTX 3090 Ti and an RTX 4090: GPTQ / EXL2 4-bit Llama
# 7B-33B), from a source none of the tables above use, committed before it was predicted: issue 22's
# outside check
HELD_OUT_8_TABLE = "speed_heldout8"
# a ninth (LMDeploy on A100; Oct-2023 vLLM / llama.cpp / ExLlamaV2 batch-1 decode on consumer cards,
# PCIe A100 and A10G; GPUStack's vLLM / SGLang / TensorRT-LLM burst runs of 2025 dense and MoE models
# on A100 / H100 / H200; Ollama on an RTX 4060 Ti and Tesla P40s), from sources none of the tables
# above use, committed before it was predicted: issue 22's outside check
HELD_OUT_9_TABLE = "speed_heldout9"
# a tenth (a later TensorRT-LLM perf-overview's H100 / H200 cells: DeepSeek-R1, gpt-oss, Llama 3.3 70B,
# Llama 4 Maverick, Qwen3 235B with attention DP + EP, up to 32K in or out; Ollama 0.7.0 on an RTX 5090 and
# an RTX 3090), from sources none of the tables above use, committed before it was predicted: issue 22's
# outside check
HELD_OUT_10_TABLE = "speed_heldout10"
# speed_heldout_training.csv + its sources: training figures recorded before the training terms were built
TRAINING_HELD_OUT_TABLE = "speed_heldout_training"
# speed_heldout_training3.csv + its sources: a third training set (v3), recorded before it was predicted
TRAINING_HELD_OUT_3_TABLE = "speed_heldout_training3"
# speed_heldout_training4.csv + its sources: a fourth training set (v4), committed before it was predicted
TRAINING_HELD_OUT_4_TABLE = "speed_heldout_training4"
# speed_heldout_training5.csv + its sources: a fifth training set (v5: LoRA / QLoRA on rented cards),
# committed before it was predicted
TRAINING_HELD_OUT_5_TABLE = "speed_heldout_training5"
# speed_heldout_training6.csv + its sources: a sixth training set (pretraining GPU-hours of whole runs,
# ZeRO-3 / FSDP 65B-70B runs), from sources none of the tables above use, committed before it was predicted
TRAINING_HELD_OUT_6_TABLE = "speed_heldout_training6"
# speed_heldout_training7.csv + its sources: a seventh training set (Llama 3 / 3.2 / 4 GPU-hours, BLOOM-176B
# on 384 A100s, XTuner ZeRO-3 and VectorLM FSDP fine-tunes), from sources none of the tables above use,
# committed before it was predicted
TRAINING_HELD_OUT_7_TABLE = "speed_heldout_training7"
# speed_heldout_training9.csv + its sources: a ninth training set (InternLM-7B on 8-1,024 A100s, FlagPerf's
# Megatron-Core / DeepSpeed cases, Megatron-MoE-ModelZoo's Qwen3 MoE on 256 H100s, Colossal-LLaMA-2's
# GPU-hours), from sources none of the tables above use, committed before it was predicted
TRAINING_HELD_OUT_9_TABLE = "speed_heldout_training9"
# speed_heldout_training10.csv + its sources: a tenth training set (NVIDIA dgxc-benchmarking's NeMo recipes:
# Llama 3.1 70B / 405B and GPT-3 175B pre-training on 64-2,304 H100s, Llama 3 70B SFT and LoRA), committed
# before it was predicted
TRAINING_HELD_OUT_10_TABLE = "speed_heldout_training10"
TABLES = (
    FITTED_TABLE,
    HELD_OUT_TABLE,
    HELD_OUT_2_TABLE,
    HELD_OUT_3_TABLE,
    HELD_OUT_4_TABLE,
    HELD_OUT_5_TABLE,
    HELD_OUT_6_TABLE,
    HELD_OUT_7_TABLE,
    HELD_OUT_8_TABLE,
    HELD_OUT_9_TABLE,
    HELD_OUT_10_TABLE,
    TRAINING_HELD_OUT_TABLE,
    TRAINING_HELD_OUT_3_TABLE,
    TRAINING_HELD_OUT_4_TABLE,
    TRAINING_HELD_OUT_5_TABLE,
    TRAINING_HELD_OUT_6_TABLE,
    TRAINING_HELD_OUT_7_TABLE,
    TRAINING_HELD_OUT_9_TABLE,
    TRAINING_HELD_OUT_10_TABLE,
)


@cache
def _sources_toml(table: str = FITTED_TABLE) -> dict[str, object]:
    with open(MEASURED / f"{table}_sources.toml", "rb") as handle:
        return tomllib.load(handle)


@cache
def load_sources(table: str = FITTED_TABLE) -> dict[str, Source]:
    raw = _sources_toml(table)
    return {key: Source.model_validate(value) for key, value in raw.items() if key != "fixture_cards"}


@cache
def source_of(name: str) -> Source:
    """A figure's source, from whichever table cites it (each source is in one table only)."""
    for table in TABLES:
        sources = load_sources(table)
        if name in sources:
            return sources[name]
    raise KeyError(name)


@cache
def _fixture_cards() -> dict[str, Card]:
    raw = _sources_toml().get("fixture_cards", {})
    assert isinstance(raw, dict)
    return {key: Card.model_validate({"id": key, **value}) for key, value in raw.items()}


@cache
def load_published(table: str = FITTED_TABLE) -> tuple[PublishedFigure, ...]:
    """One table's figures: the fitted one (speed.csv) by default, the held-out one by name."""
    with open(MEASURED / f"{table}.csv", newline="") as handle:
        return tuple(PublishedFigure.model_validate(row) for row in csv.DictReader(handle))


@dataclass(frozen=True)
class PreparedFigure:
    """A figure with its job shape computed once (nothing in it depends on the fitted constants)."""

    figure: PublishedFigure
    generation: Generation | None = None
    concurrency: int = 1  # serve: the requests that run at once (the KV pool's and max_num_seqs' cap)
    scheduler_steps: int = 1  # ttft: the source's decode steps per scheduler call (Source.scheduler_steps)
    training: TrainingJob | None = None
    # diffusion: seconds per batch in eager bf16 with data/speed.toml's utilisation (`at_mfu`); the prediction
    # scales it by the utilisation and FP8 factor being tried (diffusion is compute-bound)
    diffusion_bf16_s: float = 0.0
    at_mfu: float = 0.0
    # pretrain_hours: the source's GPU-hours are a run's wall clock (goodput applies), not tokens over its
    # steady throughput (Source.hours_from_throughput)
    wall_clock_hours: bool = True


@cache
def runtime_version(source: str, runtime: str = "") -> str:
    """The release of `runtime` a source's figures were measured with ('' where it does not say): the
    engine's own entry where the source ran several (Source.runtime_versions), else the source's one."""
    for table in TABLES:
        found = load_sources(table).get(source)
        if found is not None:
            return found.runtime_versions.get(runtime, found.runtime_version)
    return ""


def _stated_kv_share(source: str) -> float | None:
    """The KV pool's share of free memory a source states (None where it does not, or is no table's)."""
    for table in TABLES:
        found = load_sources(table).get(source)
        if found is not None:
            return found.kv_free_memory_share
    return None


def _stated_scheduler_steps(source: str) -> int:
    """The decode steps per scheduler call a source states (vLLM's --num-scheduler-steps), else 1."""
    for table in TABLES:
        found = load_sources(table).get(source)
        if found is not None:
            return found.scheduler_steps
    return 1


def _stated_eager(source: str) -> bool:
    """Whether a source states that its engine ran eager (vLLM's --enforce-eager)."""
    for table in TABLES:
        found = load_sources(table).get(source)
        if found is not None:
            return found.enforce_eager
    return False


def _kv_bytes(figure: PublishedFigure) -> float:
    return terms.kv_dtype_bytes(figure.precision, figure.kv_dtype)


# What each job a figure is turned into reads from the figure's columns: job field -> speed.csv column.
_SERVING_QUERY = {
    "model": "model",
    "card": "card",
    "gpus": "gpus",
    "precision": "precision",
    "kv_cache_dtype": "kv_dtype",
    "batch": "batch",
}
_TRAINING_QUERY = {
    "method": "method",
    "model": "model",
    "batch": "mbs",
    "seq": "seq",
    "grad_checkpointing": "recompute",
}
_DIFFUSION_JOB = {
    "model": "model",
    "width": "width",
    "height": "height",
    "steps": "steps",
    "batch": "batch",
    "card": "card",
}


def _read(figure: PublishedFigure, columns: dict[str, str], **fixed: object) -> dict[str, object]:
    """The fields of a job from a figure's columns (`columns`: field -> column) and the job's fixed ones: the
    one reader of a figure's setup, for each kind of job it becomes."""
    return {field: getattr(figure, column) for field, column in columns.items()} | fixed


def _serving_concurrency(
    figure: PublishedFigure,
    catalog: Catalog,
    batch_cap: int | None,
    free_share: float | None = None,
    *,
    on_demand: bool = False,
    weights_saved: float = 0.0,
) -> int:
    """Requests that run at once: the asked concurrency, at most what the KV pool holds (of I + O tokens each,
    or of their present length where the runtime allocates KV on demand: terms.resident_sequences) and the
    runtime's own batch cap (`batch_cap`: TensorRT-LLM's max_batch_size 2048; None: the pool's
    default scheduler cap, vLLM's max_num_seqs 256, as the estimator applies it).

    `free_share`: a pool sized as TensorRT-LLM sizes it, that share of the memory left free once the engine
    is loaded (`kv_cache_free_gpu_mem_fraction`), not vLLM's share of the whole card: the same card and
    weights hold several times the sequences when the weights fill most of it (70B in FP8 on one 80 GB
    card). The free memory is the card less the weights, the activations and the engine's overhead
    (what a vLLM budget of the whole card leaves) less one CUDA context per card.

    `weights_saved`: bytes a card holds fewer than the registry's release of the model (an FP8 checkpoint
    with every linear layer in FP8 where the maker's keeps some in 16-bit: _fp8_as_released), left to the
    pool."""
    seq = figure.input_len + figure.output_len
    fields = _read(figure, _SERVING_QUERY, runtime=Runtime.VLLM, seq=seq)
    if free_share is not None:
        fields["gpu_memory_utilization"] = 1.0
    pool = estimate(Query.model_validate(fields)).vllm
    if pool is None:
        return figure.batch
    pool_bytes = float(pool.kv_pool_bytes) + weights_saved
    if free_share is not None and pool.kv_bytes_per_sequence:
        context = int(load_calibration().runtime.cuda_context_gib * GIB) * max(figure.gpus, 1)
        pool_bytes = max(0.0, pool_bytes - context) * free_share
    held = speed_terms.resident_sequences(
        pool_bytes,
        pool.kv_bytes_per_sequence,
        figure.input_len,
        figure.output_len,
        on_demand=on_demand,
    )
    cap = batch_cap if batch_cap is not None else load_calibration().vllm.max_num_seqs
    return max(1, min(figure.batch, held, cap))


def _fp8_as_released(figure: PublishedFigure, model: ModelArch) -> ModelArch:
    """The model as the figure's FP8 checkpoint holds it. The registry describes the maker's FP8 release where
    it keeps layers in 16-bit (ModelArch fp8_16bit_modules: Llama 3.1 405B's attention and end MLPs), which
    answers assume; a published run is that release only where its source or note names it (its repo, with
    or without "-Instruct"). Others ran checkpoints with every linear layer in FP8 (NVIDIA's ModelOpt, AMD's
    Quark, Neural Magic's releases; TensorRT-LLM quantizes with ModelOpt)."""
    if figure.precision is not Precision.FP8 or not model.fp8_16bit_modules:
        return model
    source = source_of(figure.source)
    text = " ".join((source.citation, source.setup, figure.note)).lower()
    repo = model.fp8_release.lower()
    if repo and (repo in text or repo.replace("-instruct", "") in text):
        return model
    return ModelArch.model_validate({**model.model_dump(), "fp8_16bit_modules": ()})


def _prepare_diffusion(figure: PublishedFigure, card: Card, c: SpeedConstants) -> PreparedFigure:
    from core.vision.estimate import estimate_vision
    from core.vision.job import VisionJob, VisionTask

    job = VisionJob.model_validate(
        _read(figure, _DIFFUSION_JOB, task=VisionTask.GENERATE, precision=Precision.BF16)
    )
    speed = estimate_vision(job).speed
    assert speed is not None
    return PreparedFigure(
        figure=figure,
        diffusion_bf16_s=speed.seconds_per_item * figure.batch,
        at_mfu=c.vision_utilisation(card),
    )


# frameworks whose optimizer is sharded over the data-parallel ranks whatever the row says (Megatron-Core's
# distributed optimizer, ZeRO-1; Meta's and DeepSeek's stacks)
_OPTIMIZER_SHARDING_FRAMEWORKS = frozenset({"megatron", "meta", "deepseek"})


def _sharded(figure: PublishedFigure, framework: str) -> bool:
    """Whether a figure's data parallelism shards the weights, gradients and optimizer states: its note says
    FSDP, HSDP or ZeRO-3, or a PyTorch-native framework runs several cards (torchtune's, torchtitan's and
    fms-fsdp's recipes all shard with FSDP)."""
    note = figure.note.lower()
    return bool(re.search(r"fsdp|hsdp|zero-3", note)) or (framework == "pytorch" and figure.gpus > 1)


def _optimizer_shards(figure: PublishedFigure, framework: str, node: int) -> int:
    """Over how many cards a figure's optimizer step is split: its tensor and pipeline ranks, and its data
    parallel ones where they shard the states (FSDP / ZeRO, over one node's cards under HSDP; Megatron's
    distributed optimizer, NeMo's and Megatron-Bridge's default, and the labs' own stacks likewise). A whole
    pretraining run (its GPU-hours) shards them over its data-parallel ranks whatever stack it names or
    leaves unsaid: at hundreds of cards the unsharded states do not fit a card (Phi-3.5-MoE's 41.9B
    parameters hold 671 GB of fp32 master weights and Adam moments), and every stack that pretrains at that
    scale shards them (ZeRO-1, Megatron's --use-distributed-optimizer, FSDP)."""
    ranks = max(figure.tp * figure.pp, 1)
    data_parallel = max(figure.gpus // ranks, 1)
    if framework in _OPTIMIZER_SHARDING_FRAMEWORKS or figure.kind == "pretrain_hours":
        return ranks * data_parallel
    if not _sharded(figure, framework):
        return ranks
    return ranks * (min(data_parallel, node) if "hsdp" in figure.note.lower() else data_parallel)


def _rank_share(figure: PublishedFigure, model: ModelArch, params: int) -> float:
    """The share of the model's parameters one model-parallel rank holds: the dense ones split over its
    tensor and pipeline ranks, the routed experts over its expert and pipeline ranks (expert parallelism puts
    experts / EP of every MoE layer on a card; the rows' expert tensor parallelism is 1, as
    Megatron-MoE-ModelZoo's ETP column states), so a MoE's data-parallel gathers and reductions move that
    card's experts only, not every expert over the tensor ranks."""
    ranks = max(figure.tp * figure.pp, 1)
    if figure.ep <= 1 or not model.is_moe or not params:
        return 1.0 / ranks
    routed = min(1.0, model.moe_layers * model.experts * model.expert_params / params)
    return (1.0 - routed) / ranks + routed / (figure.ep * max(figure.pp, 1))


def _data_parallel_bytes(
    figure: PublishedFigure, framework: str, params: int, trainable: int, node: int, *, share: float
) -> tuple[float, float]:
    """The bytes each card of a figure sends per micro-batch in data parallelism's collectives (inside its
    node, across nodes; core/speed/terms.py data_parallel_traffic).

    Sharded when the row's note says FSDP, HSDP or ZeRO-3, or a PyTorch-native framework runs several cards
    (torchtune's, torchtitan's and fms-fsdp's recipes all shard with FSDP): over all the ranks unless HSDP.
    Otherwise (DDP, Megatron's distributed optimizer) the gradients are reduced once per step. A row that
    gives no batch (the pretraining GPU-hours) states no parallelism: nothing is counted."""
    ranks = max(figure.tp * figure.pp, 1)
    data_parallel = max(figure.gpus // ranks, 1)
    note = figure.note.lower()
    sharded = _sharded(figure, framework)
    if not sharded and figure.gbs <= 1:
        return 0.0, 0.0
    return speed_terms.data_parallel_traffic(
        data_parallel,
        max(1, node // min(max(figure.tp, 1), node)),
        sharded=sharded,
        flat="hsdp" not in note,
        weight_bytes=(0.5 if figure.method is Method.QLORA else 2.0) * params * share,
        grad_bytes=2.0 * trainable * share,
        micro_batches=figure.gbs / max(figure.mbs * data_parallel, 1),
    )


# torchtitan's per-op selective activation checkpointing ("selective AC", selective_ac_option = "op"): it
# saves every matmul's output but every second one's, so part of the linear layers' forward runs again in the
# backward (data/speed.toml selective_op_recompute_share)
_SELECTIVE_OP_AC = re.compile(r"selective (op )?ac\b|per-op|selective op", re.IGNORECASE)


# An optimizer kept (or paged) in host memory: "CPU offload of the optimizer", "counted as an optimizer
# offload"; not "no CPU offload" nor activation offloading, which leave the optimizer step on the card
_OPTIMIZER_OFFLOAD = re.compile(r"offload of the optimizer|optimizer offload", re.IGNORECASE)


# A pipeline schedule that fills its bubble: "zero-bubble pipeline parallelism" (DeepSeek-V2's HAI-LLM, after
# Qi et al. 2024), DeepSeek-V3's DualPipe
_ZERO_BUBBLE = re.compile(r"zero[- ]bubble|dualpipe", re.IGNORECASE)


def _global_batch(figure: PublishedFigure, c: SpeedConstants) -> float:
    """The sequences of one optimizer step: the row's, or for a whole pretraining run that states none the
    batch such runs use (data/speed.toml pretrain_batch_tokens over the row's sequence length), not one
    sequence a step."""
    if figure.gbs > 1 or figure.kind != "pretrain_hours":
        return float(figure.gbs)
    return c.training.pretrain_batch_sequences(figure.seq)


def prepare(figure: PublishedFigure) -> PreparedFigure:
    c = load_speed_constants()  # only the runtimes' structural flags (tensor parallel or not), none fitted
    catalog = load_catalog()
    card = figure.card_spec(catalog)
    if figure.kind == "diffusion":
        return _prepare_diffusion(figure, card, c)
    model = load_registry().get(figure.model)
    if figure.is_training:
        method = figure.method
        task = Task.PRETRAIN if figure.kind == "pretrain_hours" else Task.FINETUNE
        source = source_of(figure.source)
        pure = {"master_weights": False} if source.pure_bf16 and method is Method.FULL else {}
        query = Query.model_validate(_read(figure, _TRAINING_QUERY, task=task, **pure))
        result = estimate(query)
        flops = training_flops_per_token(result.query, result.active_params, result.trainable_params)
        attention = attention_flops_per_token(model, figure.seq, method, figure.recompute)
        flops += attention
        if not figure.recompute and _SELECTIVE_OP_AC.search(figure.note):
            t = c.training
            flops += t.selective_op_recompute_share * t.forward_flops_per_param * result.active_params
        framework = source.framework or c.training.default_framework
        ranks = max(figure.tp * figure.pp, 1)
        data_parallel = max(figure.gpus // ranks, 1)
        global_batch = _global_batch(figure, c)
        micro_batches = global_batch / max(figure.mbs * data_parallel, 1)
        node = c.link.gpus_per_node
        node_bytes, network_bytes = _data_parallel_bytes(
            figure,
            framework,
            result.params,
            result.trainable_params,
            node,
            share=_rank_share(figure, model, result.params),
        )
        job = TrainingJob(
            card=card,
            gpus=figure.gpus,
            precision=figure.precision,
            method=method,
            flops_per_token=flops,
            framework=framework,
            tensor_parallel=figure.tp,
            pipeline_parallel=figure.pp,
            expert_parallel=figure.ep,
            virtual_stages=figure.vp,
            zero_bubble=bool(_ZERO_BUBBLE.search(figure.note)),
            micro_batches=micro_batches,
            hidden=model.hidden,
            layers=model.decoder_layers or model.layers,
            recompute=figure.recompute,
            experts_active=model.experts_active if model.is_moe else 0,
            moe_layers=model.moe_layers if model.is_moe else 0,
            expert_width=model.moe_intermediate if model.is_moe else 0,
            expert_flops_share=expert_share(model),
            cpu_offload=bool(_OPTIMIZER_OFFLOAD.search(figure.note)),
            power_limit_w=source.power_limit_w,
            dequantised_params=result.params / ranks if method is Method.QLORA else 0.0,
            communication_bytes=node_bytes,
            network_bytes=network_bytes,
            one_ring=_sharded(figure, framework) and "hsdp" not in figure.note.lower(),
            zero3_hooks=figure.gpus > 1 and bool(re.search(r"zero-?3", figure.note, re.IGNORECASE)),
            tokens_per_card_step=figure.mbs * figure.seq,
            attention_flops_per_token=attention,
            tp_overlapped="asynctp" in figure.note.lower().replace(" ", ""),
            tp_comm_overlap=source.tp_comm_overlap,
            network_gbit_s_per_node=source.network_gbit_s_per_node,
            flash_attention_2=source.flash_attention_2,
            optimizer_bytes=optimizer_step_bytes(result) / _optimizer_shards(figure, framework, node),
            tokens_per_optimizer_step=(
                max(global_batch, figure.mbs * data_parallel) * figure.seq / data_parallel
            ),
        )
        return PreparedFigure(figure=figure, training=job, wall_clock_hours=not source.hours_from_throughput)
    # an engine with no speed terms of its own (data/runtimes.toml `speed_terms`: ExLlamaV2 -> llama.cpp) is
    # predicted as the product answers it: on the terms it borrows, at that engine's current release (the
    # source's release number is the other engine's, so no version-gated legacy path applies)
    borrowed = figure.runtime not in c.runtimes
    speed_name = runtime_name(figure.runtime, figure.precision) if borrowed else figure.runtime
    version = "" if borrowed else runtime_version(figure.source, figure.runtime)
    runtime = c.runtime(speed_name)
    ranks = figure.tp if runtime.tensor_parallel else 1
    cap = runtime.max_num_seqs
    share = _stated_kv_share(figure.source) or runtime.kv_free_memory_share
    released = _fp8_as_released(figure, model)
    saved = (
        terms.weight_bytes(model, figure.precision) - terms.weight_bytes(released, figure.precision)
    ) / max(figure.gpus, 1)
    model = released
    concurrency = (
        _serving_concurrency(figure, catalog, cap, share, on_demand=runtime.kv_on_demand, weights_saved=saved)
        if figure.kind == "serve" or (figure.kind == "generate" and runtime.continuous_batching)
        else figure.batch
    )
    g = generation(
        model,
        card,
        runtime=speed_name,
        precision=figure.precision,
        kv_dtype_bytes=_kv_bytes(figure),
        ranks=ranks,
        batches=(figure.batch, concurrency),
        legacy_gqa=speed_terms.decodes_gqa_legacy(runtime, version, model.heads // max(model.n_kv_heads, 1)),
        legacy_launch=release_before(version, runtime.graphs_before),
        graph_max_context=(
            runtime.graph_max_context or 0 if release_before(version, runtime.graph_context_cap_before) else 0
        ),
        legacy_moe=release_before(version, runtime.moe_kernels_from),
        eager=bool(runtime.eager_s_per_layer)
        and (_stated_eager(figure.source) or release_before(version, runtime.eager_before)),
    )
    g = with_own_kernels(g, figure.runtime)
    steps = _stated_scheduler_steps(figure.source)
    return PreparedFigure(figure=figure, generation=g, concurrency=concurrency, scheduler_steps=steps)


def predict(c: SpeedConstants, prepared: PreparedFigure) -> float:
    """gpufit's figure for the published one, in the published metric's unit."""
    f = prepared.figure
    if f.kind == "diffusion":
        card = f.card_spec(load_catalog())
        seconds = prepared.diffusion_bf16_s * prepared.at_mfu / c.vision_utilisation(card)
        if f.precision is Precision.FP8 and card.fp8_tflops:
            seconds /= c.formats.diffusion_fp8
        return seconds
    if prepared.training is not None:
        per_gpu = tokens_per_s_per_gpu(c, prepared.training)
        if f.kind == "pretrain_hours":
            goodput = c.training.goodput if prepared.wall_clock_hours else 1.0
            return f.tokens / (per_gpu * goodput) / 3600
        return per_gpu if f.metric == "tokens_per_s_per_gpu" else per_gpu * f.gpus
    g = prepared.generation
    assert g is not None
    if f.kind == "ttft":
        return loaded_ttft_s(c, g, f.input_len, f.batch, prepared.scheduler_steps) * 1000
    if f.kind == "serve":
        n = prepared.concurrency
        return n / serving_step_s(c, g, n, f.input_len, f.output_len)
    # A batch larger than the pool holds runs as the pool allows: `concurrency` at once (prepare), the rest
    # waiting for their turn, so the batch takes batch / concurrency turns of a generation of that many.
    n = min(prepared.concurrency, f.batch)
    if f.metric == "decode_tok_s":
        kv = f.input_len + f.output_len / 2
        return 1.0 / decode_step_s(c, g, n, kv)
    seconds = f.batch / n * generation_s(c, g, n, f.input_len, f.output_len)
    if f.metric == "total_tok_s":
        return f.batch * (f.input_len + f.output_len) / seconds
    if f.metric == "output_tok_s_per_gpu":
        return f.batch * f.output_len / seconds / f.gpus
    return f.batch * f.output_len / seconds


@cache
def prepared_figures(table: str = FITTED_TABLE) -> tuple[PreparedFigure, ...]:
    return tuple(prepare(figure) for figure in load_published(table))
