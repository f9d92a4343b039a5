"""The host's memory bandwidth, for decoding layers or experts kept in system RAM.

bandwidth = MT/s × 8 bytes per 64-bit channel × channels (jobs-and-market.md §1.5). What is assumed when the
user does not say (data/jobs.toml [host]): a desktop's two channels of DDR5-5600 (89.6 GB/s), DDR4-3200 when
DDR4 is said (51.2 GB/s); a machine with 256 GB or more is a server with 8 channels of DDR5-4800 per socket
(307.2 GB/s, KTransformers' Xeon Gold 6454S)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from core.jobs.constants import load_job_constants
from core.query import Query
from core.runtimes import runtime_profile


class HostMemory(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: str  # "ddr4" | "ddr5"
    mts: int
    channels: int
    server: bool
    assumed: bool  # nothing about the memory was said

    @property
    def peak_bytes_s(self) -> float:
        return self.mts * 1e6 * 8 * self.channels

    @property
    def label(self) -> str:
        return f"{self.kind.upper()}-{self.mts} × {self.channels}"


def host_memory(query: Query) -> HostMemory:
    c = load_job_constants().host
    server = (query.host_memory_bytes or 0) >= c.server_from_gb * 1e9 or (
        runtime_profile(query.runtime).host_server and query.host_memory_bytes is None
    )
    kind = query.host_memory_type or "ddr5"
    if server:
        mts = c.server_mts if kind == "ddr5" else c.ddr4_mts
        channels = query.host_memory_channels or c.server_channels
    else:
        mts = c.ddr5_mts if kind == "ddr5" else c.ddr4_mts
        channels = query.host_memory_channels or c.desktop_channels
    said = query.host_memory_type is not None or query.host_memory_channels is not None
    return HostMemory(kind=kind, mts=mts, channels=channels, server=server, assumed=not said)


def effective_bytes_s(memory: HostMemory) -> float:
    """What decoding from host memory reaches: the peak × the achieved share (data/jobs.toml)."""
    return memory.peak_bytes_s * load_job_constants().host.efficiency
