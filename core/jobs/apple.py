"""An Apple silicon Mac as the device a job runs on (data/apple.toml): the share of unified memory Metal
lets the GPU use by default, the chip's bandwidth, the engines that run there, and the sysctl that raises
the limit when the job needs more than the default share but less than the RAM."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from core.catalog import Card
from core.estimator import Estimate
from core.query import Query, Task
from core.runtimes import load_runtimes, runtime_profile
from core.units import GIB, MIB

# What macOS keeps for itself when the GPU limit is raised by hand (ASSUMPTION: the common advice, e.g.
# ollama/omlx reports of a 64 GB Mac capping Metal at 56–58 GB; the answer says so).
MACOS_KEEPS_BYTES = 8 * GIB


class AppleFacts(BaseModel):
    """What a Mac answer adds (the answers' `apple`): the unified memory and the GPU's default share of it,
    the engines that run on Metal, and the limit to raise when the job needs more than that share."""

    model_config = ConfigDict(frozen=True)

    device: str
    unified_memory_bytes: int
    gpu_bytes: int
    gpu_share: float
    bandwidth_gb_s: float
    runtime: str | None
    runtimes: list[str]  # the engines that run on Metal
    unsupported_runtime: str | None  # the engine asked for, when it does not run on a Mac
    unsupported_runtime_name: str | None
    training: bool
    wired_limit_mb: int | None  # `sudo sysctl iogpu.wired_limit_mb=…` that makes it fit, when one does


def apple_facts(card: Card | None, asked: Query, est: Estimate) -> AppleFacts | None:
    """What a Mac answer adds; None on any other card."""
    if card is None or not card.unified_memory:
        return None
    unified = int(card.memory_gib * GIB)
    asked_runtime = asked.runtime
    unsupported = asked_runtime if asked_runtime and not runtime_profile(asked_runtime).metal else None
    need = est.breakdown.total
    raise_to = None
    if need > card.memory_bytes and need + MACOS_KEEPS_BYTES <= unified:
        raise_to = (unified - MACOS_KEEPS_BYTES) // MIB
    return AppleFacts.model_construct(  # every value comes from validated catalog, query and estimate
        device=card.id,
        unified_memory_bytes=unified,
        gpu_bytes=card.memory_bytes,
        gpu_share=round(card.memory_bytes / unified, 3),
        bandwidth_gb_s=card.bandwidth_gb_s,
        runtime=est.query.runtime,
        runtimes=[p.id for p in load_runtimes().profiles if p.metal],
        unsupported_runtime=unsupported,
        unsupported_runtime_name=runtime_profile(unsupported).name if unsupported else None,
        training=est.query.task is not Task.INFERENCE,
        wired_limit_mb=raise_to,
    )
