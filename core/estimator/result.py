"""What the estimator returns: bytes per component at the peak, and a verdict per card count."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from core.jobs.slots import ServingSlots
from core.layout import LayoutProblem
from core.query import Query

COMPONENTS = (
    "weights",
    "kv_cache",
    "activations",
    "logits",
    "gradients",
    "optimizer",
    "adapters",
    "overhead",
)


class ComponentBytes(BaseModel):
    """Bytes held on one card at the peak moment of a job, by the named terms that hold them: the one
    breakdown shape of every job (a language model's weights, KV cache, activations …; a pipeline's text
    encoders, denoiser, VAE …). `COMPONENTS` names the terms in the order answers draw them."""

    model_config = ConfigDict(frozen=True)

    COMPONENTS: ClassVar[tuple[str, ...]] = ()

    @property
    def total(self) -> int:
        return sum(int(getattr(self, name)) for name in self.COMPONENTS)

    @property
    def tracked(self) -> int:
        """What PyTorch's allocator itself holds: the total less the runtime overhead."""
        return self.total - int(getattr(self, "overhead", 0))

    def as_dict(self) -> dict[str, int]:
        return {name: int(getattr(self, name)) for name in self.COMPONENTS}


class Breakdown(ComponentBytes):
    """A language-model job's bytes on one card at its peak, by what holds them."""

    COMPONENTS: ClassVar[tuple[str, ...]] = COMPONENTS

    weights: int = 0
    kv_cache: int = 0
    activations: int = 0
    logits: int = 0
    gradients: int = 0
    optimizer: int = 0
    adapters: int = 0
    overhead: int = 0

    @property
    def total(self) -> int:
        # spelled out: the hottest property of the estimator (plans sum it for every card and count)
        return (
            self.weights
            + self.kv_cache
            + self.activations
            + self.logits
            + self.gradients
            + self.optimizer
            + self.adapters
            + self.overhead
        )


class Fit(StrEnum):
    FITS = "fits"
    TIGHT = "tight"
    NO = "no"


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    card: str
    count: int
    fits: Fit
    capacity_bytes: int = Field(description="one card's capacity")
    need_bytes: int = Field(description="per-card need")
    margin_bytes: int
    margin: float = Field(description="(capacity - need) / capacity")
    notes: list[str] = Field(default_factory=list)


class FolkRule(BaseModel):
    """The rule users know (weights × 4–6 for training, × 1.2 margin), shown beside the exact figure."""

    model_config = ConfigDict(frozen=True)

    weights_bytes: int
    low_factor: float
    high_factor: float
    margin: float

    @property
    def low_bytes(self) -> int:
        return int(self.weights_bytes * self.low_factor * self.margin)

    @property
    def high_bytes(self) -> int:
        return int(self.weights_bytes * self.high_factor * self.margin)

    def as_json(self) -> dict[str, object]:
        """The rule as `gpufit estimate --json` and `gpufit ask --json` report it."""
        return {
            "weights_bytes": self.weights_bytes,
            "factor": [self.low_factor, self.high_factor],
            "margin": self.margin,
            "low_bytes": self.low_bytes,
            "high_bytes": self.high_bytes,
        }


class VllmPool(BaseModel):
    """vLLM's pre-allocated KV pool and how many sequences of the asked context it holds at once."""

    model_config = ConfigDict(frozen=True)

    budget_bytes: int
    kv_pool_bytes: int
    kv_bytes_per_sequence: int
    max_sequences: int
    profile_activation_bytes: int
    non_torch_bytes: int
    requested_sequences: int = Field(1, description="sequences the question wants in flight (users)")
    concurrent_sequences: int = Field(
        0, description="sequences that run at once: the pool's capacity, capped by max_num_seqs and the ask"
    )
    queued_sequences: int = Field(0, description="requests that wait in the engine's queue for a slot")
    capacity_sequences: int = Field(
        0, description="sequences the engine can run at once: the pool's capacity capped by max_num_seqs"
    )
    # LMDeploy: the KV cache takes this share of the memory left once the weights and buffers are in (its
    # flag named), not a share of the card; None for vLLM, SGLang
    kv_share_of_free: float | None = None
    kv_share_flag: str | None = None


class Estimate(BaseModel):
    """One query's memory: per card (after sharding), the whole job, the verdicts and how sure we are."""

    model_config = ConfigDict(frozen=True)

    query: Query
    model_name: str
    representative_shape: bool
    params: int
    active_params: int
    trainable_params: int
    breakdown: Breakdown
    peak_phase: str
    folk: FolkRule
    uncertainty: float = Field(description="relative ± band of the tracked bytes")
    verdicts: list[Verdict] = Field(default_factory=list)
    vllm: VllmPool | None = None
    # an engine that answers a fixed number of requests at once (Ollama): the memory is its slots', the rest
    # of the asked requests wait (core/jobs/slots.py)
    slots: ServingSlots | None = None
    warnings: list[str] = Field(default_factory=list, description="codes; templates word them")
    model_context: int | None = Field(
        default=None, description="the model's trained context, when the question asks for a longer one"
    )
    # the layout the question named cannot run (core/layout.py): why; the figures are for the one chosen
    layout_problem: LayoutProblem | None = None

    @property
    def total_bytes(self) -> int:
        return self.breakdown.total
