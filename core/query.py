"""The one query shape shared by the parser, the estimator, the command line and the bot.

Field names and values are a public contract (`gpufit estimate --json`, `gpufit ask --json`).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Any, Final, Literal, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from core.answer_kind import QUERY_KINDS, AnswerKind
from core.runtimes import known_runtime, load_runtimes, runtime_profile


class Task(StrEnum):
    INFERENCE = "inference"
    FINETUNE = "finetune"
    PRETRAIN = "pretrain"


class Method(StrEnum):
    FULL = "full"
    LORA = "lora"
    QLORA = "qlora"
    FREEZE = "freeze"


class Precision(StrEnum):
    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"
    NF4 = "nf4"
    Q8_0 = "q8_0"
    Q6_K = "q6_k"
    Q5_K_M = "q5_k_m"
    Q4_K_M = "q4_k_m"
    Q4_0 = "q4_0"
    Q3_K = "q3_k"
    Q2_K = "q2_k"


class KvCacheDtype(StrEnum):
    """The KV cache's storage type when it is not the model's 16-bit dtype: vLLM/SGLang `--kv-cache-dtype
    fp8` (fp8_e4m3), TensorRT-LLM's fp8 KV, llama.cpp `-ctk/-ctv q8_0 | q4_0`."""

    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    Q8_0 = "q8_0"
    Q4_0 = "q4_0"


class Runtime:
    """Ids of the runtimes core's own recipes name (the measured transformers jobs, vLLM's published pool).

    Every runtime is a profile in data/runtimes.toml (core/runtimes.py): `Query.runtime` is any profile's id,
    and the estimator, the speed model and the advisor read the profile's fields, never the id.
    """

    TRANSFORMERS: Final = "transformers"
    VLLM: Final = "vllm"


def is_serving_engine(runtime: str | None) -> bool:
    """A continuous-batching engine with a KV pool (the profile's memory layout, data/runtimes.toml)."""
    return runtime is not None and runtime_profile(runtime).kv_pool


def offloads_to_host(runtime: str | None) -> bool:
    """The engine keeps what does not fit (layers, MoE experts) in system RAM by itself (llama.cpp and what
    is built on it): the profile's `host_offload`."""
    return runtime is not None and runtime_profile(runtime).host_offload is not None


class Algorithm(StrEnum):
    """Preference and RL training (issue 18): which models the job holds besides the policy."""

    DPO = "dpo"
    ORPO = "orpo"
    SIMPO = "simpo"
    KTO = "kto"
    GRPO = "grpo"
    PPO = "ppo"


class Offload(StrEnum):
    """What is kept in system memory instead of the card: layers / MoE experts (GGUF runtimes), the
    optimizer (ZeRO-Offload), parameters and optimizer (ZeRO-3 offload) or both on NVMe (ZeRO-Infinity)."""

    LAYERS = "layers"
    EXPERTS = "experts"
    OPTIMIZER = "optimizer"
    PARAMS = "params"
    NVME = "nvme"
    NONE = "none"


HostMemoryType = Literal["ddr4", "ddr5"]


# A runtime id known to data/runtimes.toml (vllm, sglang, llama.cpp, …).
RuntimeId = Annotated[str, AfterValidator(known_runtime)]


class Optimizer(StrEnum):
    ADAMW = "adamw"
    ADAMW_8BIT = "adamw_8bit"
    SGD = "sgd"


class Currency(StrEnum):
    CNY = "CNY"
    USD = "USD"


LoraTargets = Literal["all-linear", "attention", "q,v"]
# What a budget is per: "预算每月5000元" a month, "每周预算1000" a week, "$2/hour" an hour, "I have $500" all.
BudgetPeriod = Literal["hour", "day", "week", "month", "total"]
BUDGET_PERIOD_HOURS: dict[str, float] = {"hour": 1.0, "day": 24.0, "week": 168.0, "month": 720.0}
# How a card is billed (data/prices.toml `billing`): hourly, by the term (包月 …), preemptible, committed.
BillingKind = Literal["on-demand", "daily", "weekly", "monthly", "spot", "reserved", "serverless"]
# How plans are ranked: cheapest first, or fastest ("fastest card for …").
SortKey = Literal["cost", "speed"]

# Defaults the answer states when the user did not say; one place, so parser, CLI and bot agree.
DEFAULT_BATCH = 1
DEFAULT_SEQ = 2048
DEFAULT_LORA_RANK = 16


class Query(BaseModel):
    """A fit question. `None` means "not said"; `with_defaults()` fills those in and records which.

    Frozen (hashable), so the pure functions over it can be cached.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    task: Task = Task.INFERENCE
    method: Method | None = None
    model: str | None = None
    params_b: float | None = Field(default=None, gt=0)
    card: str | None = None
    card_memory_bytes: int | None = Field(default=None, gt=0)
    card_name: str | None = Field(
        default=None,
        max_length=48,
        description="a card the catalogue lacks, named with its memory ('rtx 5060 ti 16g'): answered for "
        "that memory, with no speed or price (none is known for it)",
    )
    gpus: int | None = Field(default=None, ge=1, le=4096)
    precision: Precision | None = None
    batch: int | None = Field(default=None, ge=1, le=1_000_000)
    seq: int | None = Field(default=None, ge=1, le=10_000_000)
    runtime: RuntimeId | None = None
    kv_cache_dtype: KvCacheDtype | None = Field(default=None, description="None: the model's 16-bit dtype")
    grad_checkpointing: bool | None = None
    lora_rank: int | None = Field(default=None, ge=1, le=4096)
    lora_targets: LoraTargets | None = None
    optimizer: Optimizer | None = None
    master_weights: bool | None = None
    zero_stage: int | None = Field(default=None, ge=0, le=3)
    gpu_memory_utilization: float | None = Field(default=None, gt=0, le=1)
    expert_parallel: bool | None = Field(default=None, description="vLLM --enable-expert-parallel")
    gpu_layers: int | None = Field(default=None, ge=0, le=1000, description="llama.cpp -ngl / Ollama num_gpu")
    cpu_moe_layers: int | None = Field(
        default=None, ge=0, le=1000, description="llama.cpp --n-cpu-moe N: the first N layers' experts in RAM"
    )
    cpu_offload_gb: float | None = Field(
        default=None,
        gt=0,
        le=100_000,
        description="vLLM --cpu-offload-gb: GiB of weights per card in host RAM",
    )
    parallel: int | None = Field(
        default=None,
        ge=1,
        le=4096,
        description="requests served at once: OLLAMA_NUM_PARALLEL, llama-server -np",
    )
    offload: Offload | None = None
    host_memory_bytes: int | None = Field(default=None, gt=0, description="system RAM the user has")
    host_memory_type: HostMemoryType | None = None
    host_memory_channels: int | None = Field(default=None, ge=1, le=24)
    users: int | None = Field(
        default=None,
        ge=1,
        le=1_000_000_000,
        description="people who use a deployment ('50 users', '200人用'): a headcount, not all at once",
    )
    cpu_only: bool | None = Field(
        default=None, description="no GPU ('纯CPU', '没有显卡', 'CPU only'): the job runs on the CPU and RAM"
    )
    algorithm: Algorithm | None = None
    num_generations: int | None = Field(default=None, ge=1, le=1024, description="completions per prompt")
    rollout: Literal["colocated", "separate"] | None = Field(
        default=None, description="where RL rollouts run"
    )
    completion_tokens: int | None = Field(
        default=None, ge=1, le=1_000_000, description="max completion tokens"
    )
    chunked_loss: bool | None = Field(
        default=None, description="chunked / fused cross-entropy (Liger, Unsloth)"
    )
    offload_activations: bool | None = Field(default=None, description="checkpoints kept in system RAM")
    sequence_parallel: int | None = Field(
        default=None,
        ge=0,
        le=4096,
        description="sequence-parallel degree (DeepSpeed Ulysses / ring attention); 0: over all the cards",
    )
    tensor_parallel: int | None = Field(
        default=None, ge=1, le=4096, description="Megatron tensor-parallel size (said, or the layout chosen)"
    )
    pipeline_parallel: int | None = Field(default=None, ge=1, le=4096, description="pipeline stages")
    data_parallel: int | None = Field(default=None, ge=1, le=4096, description="data-parallel replicas")
    launch: bool | None = Field(default=None, description="the launch line was asked for")
    tokens: float | None = Field(default=None, gt=0)
    samples: int | None = Field(default=None, ge=1, le=10**12, description="training examples in the data")
    sample_chars: int | None = Field(
        default=None, ge=1, le=10_000_000, description="a sample's length in Chinese characters: '每条2000字'"
    )
    epochs: float | None = Field(default=None, gt=0, le=10_000)
    text_bytes: int | None = Field(default=None, gt=0, description="a dataset given as its size in bytes")
    text_lang: Literal["en", "zh"] | None = Field(default=None, description="the language of that text")
    budget: float | None = Field(default=None, gt=0, description="the money the user has, in `currency`")
    budget_period: BudgetPeriod | None = Field(
        default=None, description="what the budget is per ('total': all)"
    )
    currency: Currency | None = None
    platform: str | None = Field(default=None, description="a rental platform named (data/platforms.toml id)")
    billing: BillingKind | None = Field(default=None, description="a billing kind asked about: 包月, spot, …")
    hours_per_day: float | None = Field(
        default=None, gt=0, le=24, description="how long a day the card is used"
    )
    stated_hourly_price: float | None = Field(
        default=None, gt=0, description="an hourly (on-demand) price the question states, in `currency`"
    )
    stated_price_card: str | None = Field(
        default=None,
        description="the card `stated_hourly_price` is for: the card named with it (a plan on another "
        "card, or a follow-up moving the job to one, is priced at the list's price)",
    )
    stated_monthly_price: float | None = Field(
        default=None, gt=0, description="a monthly (包月) price the question states, in `currency`"
    )
    stated_weekly_price: float | None = Field(
        default=None, gt=0, description="a weekly (包周) price the question states, in `currency`"
    )
    stated_daily_price: float | None = Field(
        default=None, gt=0, description="a daily (包天) price the question states, in `currency`"
    )
    stated_reserved_price: float | None = Field(
        default=None,
        gt=0,
        description="a reserved / committed price the question states, per hour of the commitment, billed "
        "around the clock ('包年 9000' = 9,000 ÷ 8,760 h; 'a 3-month commitment at $1.85/h')",
    )
    rental_days: float | None = Field(
        default=None, gt=0, le=3650, description="how many days the card is rented for ('连续跑两周')"
    )
    deadline_hours: float | None = Field(
        default=None,
        gt=0,
        le=87_600,
        description="the wall time a job must finish within ('一周内训完', 'within 24 hours', 'in 60 days')",
    )
    requests_per_s: float | None = Field(default=None, gt=0, description="serving traffic (per day ÷ 86,400)")
    traffic_per_day: bool | None = Field(
        default=None, description="the traffic was given per day (a day's requests, daily users): its average"
    )
    prompt_tokens: int | None = Field(default=None, ge=1, le=10_000_000, description="tokens in per request")
    response_tokens: int | None = Field(
        default=None, ge=1, le=10_000_000, description="tokens out per request"
    )
    ttft_ms: float | None = Field(default=None, gt=0, description="time-to-first-token target")
    user_tokens_per_s: float | None = Field(default=None, gt=0, description="decode speed each user needs")
    nodes: int | None = Field(default=None, ge=1, le=1024, description="machines in a cluster ('两台8卡')")
    network: Literal["infiniband", "ethernet"] | None = Field(
        default=None, description="the link between nodes the question names ('ib互联', 'over 100G Ethernet')"
    )
    network_gbit_s: float | None = Field(
        default=None, gt=0, le=3200, description="that link's speed per node in Gb/s ('100G', '万兆' = 10)"
    )
    # The answer asked for when it is not "does it fit" (plans, how many cards, the largest model, advice on
    # a card): the query rebuilds the same kind of answer when stored, pressed or followed up ("那H20呢"
    # after "要几张L20" still asks how many). None is a fit answer.
    kind: AnswerKind | None = None
    sort: SortKey | None = Field(default=None, description="how plans are ranked; None: by cost")
    defaulted: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _stored_question(cls, data: object) -> object:
        """Queries stored before the answer kinds became one enum said `question`; read it as `kind`."""
        if isinstance(data, dict) and "question" in data:
            data = dict(data)
            old = data.pop("question")
            if old is not None and "kind" not in data:
                data["kind"] = old
        if (
            isinstance(data, dict)
            and data.get("stated_hourly_price") is not None
            and data.get("stated_price_card") is None
            and data.get("card") is not None
        ):
            data = {**data, "stated_price_card": data["card"]}  # the price is for the card named with it
        return data

    @model_validator(mode="after")
    def _only_query_kinds(self) -> Query:
        if self.kind is not None and self.kind not in QUERY_KINDS:
            raise ValueError(f"a query cannot carry the answer kind {self.kind.value!r}")
        return self

    @property
    def answer_kind(self) -> AnswerKind:
        """The kind of answer this query rebuilds."""
        return self.kind or AnswerKind.FIT

    def with_defaults(self) -> Query:
        """Every field the estimator needs, filled; `defaulted` lists exactly those that were not said."""
        training = self.task is not Task.INFERENCE
        method = self.method
        if training and method is None:
            method = Method.FULL if self.task is Task.PRETRAIN else Method.LORA
        if not training:
            method = None
        # Several sequences at once in inference is serving: a continuous-batching engine (vLLM), not one
        # transformers prefill of every prompt together. Stated as an assumption.
        if self.algorithm is not None and self.method is None and training:
            # TRL / verl / OpenRLHF / LLaMA-Factory default to training the whole policy
            method = Method.FULL
        runtimes = load_runtimes()
        serving = not training and (self.batch or 1) > 1
        fills_runtime = (runtimes.serving_default if serving else runtimes.training_default).id
        engine = runtime_profile(self.runtime or fills_runtime)
        # The engine's own defaults for inference (llama.cpp / Ollama: a 4-bit GGUF and a 4k context).
        engine_precision = engine.defaults.precision if not training else None
        precision_default = (
            Precision.NF4 if method is Method.QLORA else Precision(engine_precision or Precision.BF16.value)
        )
        seq_default = (engine.defaults.context if not training else None) or DEFAULT_SEQ
        fills: dict[str, object] = {
            "method": method,
            "precision": precision_default,
            "gpus": 1,
            "batch": DEFAULT_BATCH,
            "seq": seq_default,
            "runtime": fills_runtime,
            # On for fine-tuning, as LLaMA-Factory and peft's prepare_model_for_kbit_training set it:
            # without it a 13B LoRA holds ~20 GiB of activations at 2k tokens. Stated as an assumption.
            # Off for pretraining, which shards over many cards (published MFUs count no recompute).
            "grad_checkpointing": self.task is Task.FINETUNE if training else None,
            "optimizer": Optimizer.ADAMW if training else None,
            # a framework's own recipe may keep no fp32 master copy (torchtune: bf16 weights and Adam states)
            "master_weights": (
                method is Method.FULL and engine.defaults.master_weights is not False if training else None
            ),
            "zero_stage": 0 if training else None,
            "lora_rank": DEFAULT_LORA_RANK if method in (Method.LORA, Method.QLORA) else None,
            "lora_targets": "all-linear" if method in (Method.LORA, Method.QLORA) else None,
            # a serving engine's share of the card (vLLM gpu_memory_utilization, SGLang mem_fraction_static)
            "gpu_memory_utilization": engine.memory.memory_share if engine.kv_pool else None,
        }
        updates: dict[str, object] = {}
        defaulted = list(self.defaulted)
        for name, value in fills.items():
            current = getattr(self, name)
            if name == "method" and current is None and value is None:
                continue
            if current is None:
                updates[name] = value
                if value is not None and name not in defaulted:
                    defaulted.append(name)
        updates["defaulted"] = tuple(defaulted)
        return self.model_copy(update=updates)

    @property
    def has_data_amount(self) -> bool:
        """The question gave an amount of training data (tokens, samples or a text size)."""
        return self.tokens is not None or self.samples is not None or self.text_bytes is not None

    def said(self) -> dict[str, object]:
        """The fields the user actually stated (for follow-ups that change only what was said), in field
        order. Read from the fields themselves: every field is a plain value (no nested model), so this is
        what `model_dump(exclude={"defaulted"})` gave, at a fraction of its cost (~25 calls per answer)."""
        values = self.__dict__
        defaulted = self.defaulted
        return {
            name: value
            for name in _SAID_FIELDS
            if (value := values[name]) is not None and name not in defaulted
        }

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """pydantic's shallow copy, as pydantic makes it (fields copied, `update` applied unvalidated and
        counted as set), without its generic steps for extras and private attributes, which a Query has
        none of: copying queries is the advisor's commonest step (~120 per answer)."""
        if deep:
            return super().model_copy(update=update, deep=True)
        values = self.__dict__.copy()
        fields_set = set(self.__pydantic_fields_set__)
        if update:
            values.update(update)
            fields_set.update(update)
        copied = self.__class__.__new__(self.__class__)
        object.__setattr__(copied, "__dict__", values)
        object.__setattr__(copied, "__pydantic_extra__", None)
        object.__setattr__(copied, "__pydantic_fields_set__", fields_set)
        object.__setattr__(copied, "__pydantic_private__", None)
        return copied


# Query.said's fields: every field but `defaulted`, in the model's order (model_dump's).
_SAID_FIELDS: Final = tuple(name for name in Query.model_fields if name != "defaulted")
