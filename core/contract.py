"""The typed objects of the JSON contract that answers show as they are: a job's speed, its run time and a
serving engine's KV pool. The templates read them (`s.kind`, `t.tokens`, `sv.queued`) and the JSON is
dumped from the same objects (core/report.py), so what an answer says and what `--json` carries cannot
drift apart."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.catalog import Card
from core.data_amount import DataTokens
from core.speed import InferenceSpeed, TrainingSpeed


class OffloadSpeed(BaseModel):
    """Decode speed of a job split between the card and system RAM (core/jobs/offload.py): bandwidth
    arithmetic, one stream, none of a runtime's calibration."""

    model_config = ConfigDict(frozen=True)

    decode_tokens_per_s: float
    aggregate_tokens_per_s: float
    batch: int = 1
    parallelism: str = "offload"
    band: float
    calibrated_on: list[str] = []
    kv_cache_dtype: str
    notes: list[str] = []

    @property
    def kind(self) -> Literal["inference"]:
        return "inference"


# The answers' `speed`: generation, training, or a decode split with system RAM (each says its `kind`).
JobSpeed = InferenceSpeed | TrainingSpeed | OffloadSpeed


def speed_json(speed: JobSpeed | None, stand_in: Card | None = None) -> dict[str, object] | None:
    """`speed`: its kind, then every figure; `typical_card` when a card of that size stood in for a size."""
    if speed is None:
        return None
    body: dict[str, object] = {"kind": speed.kind, **speed.model_dump(mode="json")}
    if stand_in is not None:
        body |= {"typical_card": stand_in.id, "typical_card_name": stand_in.name}
    return body


class JobTime(DataTokens):
    """The answers' `time`: the run's wall-clock hours and the tokens they are for, with how the tokens were
    counted from what the user said."""

    hours: float | None = None

    @classmethod
    def of(cls, data: DataTokens, hours: float | None) -> JobTime:
        """`data` with its hours (already validated: no second validation)."""
        return cls.model_construct(data.model_fields_set | {"hours"}, **dict(data), hours=hours)

    def as_json(self) -> dict[str, object]:
        return {"hours": self.hours, "tokens": self.tokens} | self.model_dump(
            mode="json", exclude={"tokens", "hours"}
        )


@dataclass(frozen=True, slots=True)
class ServingFigures:
    """The answers' `serving`: a KV-pool engine's (vLLM, SGLang) pool, what one sequence takes, how many run
    at once and how many of the asked users wait."""

    runtime: str | None
    tensor_parallel: int
    kv_pool_bytes: int
    kv_bytes_per_sequence: int
    max_concurrent_sequences: int
    requested_sequences: int | None  # None: the batch was not said
    queued: int
    latent_cache_whole_per_card: bool  # an MLA latent cache is held whole on every card under TP
    # the engine's KV cache takes this share of the memory left free after loading (LMDeploy's 0.8), set by
    # `kv_share_flag`; None where the share is of the whole card (vLLM, SGLang)
    kv_share_of_free: float | None = None
    kv_share_flag: str | None = None
    # a headcount said ("50 users"): what the job would be with all of them at once, beside the share sized
    capacity_sequences: int = 0  # what the engine runs at once (the pool's capacity, at most max_num_seqs)
    headcount: int | None = None
    headcount_queued: int | None = None  # of the whole headcount at once, those that would wait for a slot

    def as_json(self) -> dict[str, object]:
        return {
            "runtime": self.runtime,
            "tensor_parallel": self.tensor_parallel,
            "kv_pool_bytes": self.kv_pool_bytes,
            "kv_bytes_per_sequence": self.kv_bytes_per_sequence,
            "max_concurrent_sequences": self.max_concurrent_sequences,
            "requested_sequences": self.requested_sequences,
            "queued": self.queued,
            "latent_cache_whole_per_card": self.latent_cache_whole_per_card,
            "kv_share_of_free": self.kv_share_of_free,
            "capacity_sequences": self.capacity_sequences,
            "headcount": self.headcount,
            "headcount_queued": self.headcount_queued,
        }
