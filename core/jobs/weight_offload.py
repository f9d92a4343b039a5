"""A serving engine's weights partly in host memory, read over PCIe in every pass (vLLM --cpu-offload-gb).

vLLM's `--cpu-offload-gb N` is "the space in GiB to offload to CPU, per GPU … a virtual way to increase the
GPU memory size" (CacheConfig.cpu_offload_gb): the decoder layers' parameters, first layer first, go to pinned
host memory until N GiB are there (vllm/model_executor/offloader/uva.py), and every forward pass reads them
over PCIe, in place through UVA or copied module by module. So the card holds its share of the weights less
N GiB (the KV pool gets the rest of the engine's share), and a step, whatever its batch, costs those N GiB at
the card's host-to-device bandwidth on top of the card's own step: the streamed bytes dominate, which is why
the engine calls it a way to load a model, not to serve it fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from core.catalog import Card
from core.jobs.constants import load_job_constants
from core.query import Precision, Query, Task
from core.runtimes import runtime_profile
from core.units import GIB

if TYPE_CHECKING:
    from core.estimator import Estimate
    from core.speed import InferenceSpeed

# System RAM the OS keeps for itself beside the pinned weights (as the GGUF split, core/jobs/offload.py).
OS_RESERVE_BYTES = 4 * 10**9


class WeightOffload(BaseModel):
    """The weights an engine keeps in host memory, per card, and what reading them costs each step."""

    model_config = ConfigDict(frozen=True)

    flag: str  # the engine's setting, as answers quote it
    asked_gib: float  # N of --cpu-offload-gb N (GiB per card)
    host_bytes: int  # of each card's weights, in host memory (at most all of them)
    weight_bytes: int  # each card's share of the weights
    cards: int
    host_total_bytes: int  # over all the cards
    host_memory_bytes: int | None  # the system RAM the user said
    host_fits: bool | None  # None: the user did not say how much RAM there is
    pcie_gen: int
    pcie_gb_s: float  # achieved host-to-device bandwidth of one card's link
    stream_s: float  # the host bytes over PCIe: added to every forward pass
    decode_tokens_per_s: float | None  # one stream, streaming included (None without speed)

    @property
    def runs(self) -> bool:
        return self.host_fits is not False


def offloaded_weight_bytes(query: Query, weights_per_card: int) -> int:
    """Bytes of each card's weights the engine keeps in host memory: the N GiB asked, at most all of them;
    0 on an engine without such a setting, or when it was not asked."""
    if not query.cpu_offload_gb or query.task is not Task.INFERENCE:
        return 0
    if runtime_profile(query.runtime).weight_offload_flag is None:
        return 0
    return min(weights_per_card, int(query.cpu_offload_gb * GIB))


def pcie_bytes_s(card: Card) -> float:
    """Achieved host-to-device bytes/s of the card's PCIe link: data/jobs.toml [host] pcie_gb_s for its
    generation, doubled per generation above it, halved below (PCI-SIG's 8 / 16 / 32 GT/s)."""
    host = load_job_constants().host
    gen = card.pcie_gen or host.pcie_gen
    return float(host.pcie_gb_s * 1e9 * 2.0 ** (gen - host.pcie_gen))


def _card_weights(est: Estimate, count: int) -> int:
    from core.estimator import terms
    from core.estimator.memory import resolve_model
    from core.registry import load_registry

    q = est.query
    model = resolve_model(q, load_registry())
    return int(terms.weight_bytes(model, q.precision or Precision.BF16) // max(count, 1))


def host_bytes_per_card(est: Estimate, count: int) -> int:
    """What the estimate keeps off each card: its weights' share less the weights it counts on the card."""
    q = est.query
    if not q.cpu_offload_gb or runtime_profile(q.runtime).weight_offload_flag is None:
        return 0
    return max(0, _card_weights(est, count) - est.breakdown.weights)


def with_weight_streaming(speed: InferenceSpeed, est: Estimate, card: Card, count: int) -> InferenceSpeed:
    """`speed` with the host bytes read over PCIe in every forward pass: each decode step (whatever its
    batch) and the prompt's pass take that much longer."""
    streamed = host_bytes_per_card(est, count)
    if not streamed:
        return speed
    extra = streamed / pcie_bytes_s(card)
    batch = max(speed.batch, 1)
    return speed.model_copy(
        update={
            "decode_tokens_per_s": 1.0 / (1.0 / speed.decode_tokens_per_s + extra),
            "aggregate_tokens_per_s": batch / (batch / speed.aggregate_tokens_per_s + extra),
            "ttft_s": speed.ttft_s + extra,
            "notes": list(speed.notes),
            "calibrated_on": list(speed.calibrated_on),
        }
    )


def weight_offload(
    est: Estimate, card: Card | None, count: int, speed: InferenceSpeed | None
) -> WeightOffload | None:
    """The answer's facts of the weights kept in host memory, None when none are."""
    q = est.query
    flag = runtime_profile(q.runtime).weight_offload_flag
    if flag is None or not q.cpu_offload_gb or q.task is not Task.INFERENCE:
        return None
    host = host_bytes_per_card(est, count)
    total = host * max(count, 1)
    have = q.host_memory_bytes
    host_c = load_job_constants().host
    gen = (card.pcie_gen if card is not None else None) or host_c.pcie_gen
    bandwidth = pcie_bytes_s(card) if card is not None else host_c.pcie_gb_s * 1e9
    return WeightOffload(
        flag=flag,
        asked_gib=q.cpu_offload_gb,
        host_bytes=host,
        weight_bytes=host + est.breakdown.weights,
        cards=max(count, 1),
        host_total_bytes=total,
        host_memory_bytes=have,
        host_fits=None if have is None else total + OS_RESERVE_BYTES <= have,
        pcie_gen=gen,
        pcie_gb_s=round(bandwidth / 1e9, 1),
        stream_s=host / bandwidth,
        decode_tokens_per_s=speed.decode_tokens_per_s if speed is not None else None,
    )
