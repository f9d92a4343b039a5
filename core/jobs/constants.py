"""data/jobs.toml as typed constants (every number there carries its source)."""

from __future__ import annotations

import tomllib
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from core.paths import DATA_DIR


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")
    source: str = ""


class OllamaConstants(_Section):
    context_tiers_gib: list[float]
    context_tiers_tokens: list[int]
    context_small: int
    context_tiers_since: str
    context_before: int
    context_before_since: str
    context_first: int
    default_quant: str


class LlamaCppConstants(_Section):
    context_default: int
    fit_target_mib: int
    compute_buffer_base_mib: int
    compute_buffer_batch_tokens: int


class KTransformersConstants(_Section):
    context_default: int


class HostConstants(_Section):
    desktop_channels: int
    ddr5_mts: int
    ddr4_mts: int
    server_channels: int
    server_mts: int
    server_from_gb: int
    efficiency: float
    pcie_gb_s: float
    pcie_gen: int  # the generation pcie_gb_s is for (others scale by 2 per generation)


class CpuConstants(_Section):
    desktop_prompt_tflops: float
    server_prompt_tflops: float
    prompt_tokens: int


class ZeroConstants(_Section):
    host_bytes_params: float
    host_bytes_optimizer: float
    buffer_factor: float
    gathered_bytes_per_param: float
    cpu_adam_bytes_per_param: float


class RlConstants(_Section):
    num_generations: int
    trl_completion_tokens: int
    completion_tokens: int
    prompt_tokens: int
    trl_rollout_share: float
    verl_rollout_share: float


class UnslothConstants(_Section):
    loss_chunk_tokens: int


class TrafficConstants(_Section):
    peak_share_of_requests: float
    peak_share_of_day: float
    active_share: float  # of a headcount, the share using the deployment at once

    @property
    def peak_factor(self) -> float:
        """The busy hours' rate over the day's average (0.8 / 0.2 = 4)."""
        return self.peak_share_of_requests / self.peak_share_of_day


class AppleConstants(_Section):
    gpu_share_small: float
    gpu_share: float
    gpu_share_large: float
    large_from_gib: float
    small_below_gib: float
    bandwidth_efficiency: float


class JobConstants(BaseModel):
    model_config = ConfigDict(frozen=True)

    ollama: OllamaConstants
    llama_cpp: LlamaCppConstants
    ktransformers: KTransformersConstants
    host: HostConstants
    cpu: CpuConstants
    zero: ZeroConstants
    rl: RlConstants
    unsloth: UnslothConstants
    traffic: TrafficConstants
    apple: AppleConstants


@lru_cache(maxsize=1)
def load_job_constants() -> JobConstants:
    with (DATA_DIR / "jobs.toml").open("rb") as handle:
        return JobConstants.model_validate(tomllib.load(handle))
