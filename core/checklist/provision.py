"""What the provider must offer besides the cards: disk for model files, data and checkpoints, system RAM, and
the software stack of the cards' vendor; sized from the job (numbers in data/provisioning.toml)."""

from __future__ import annotations

import tomllib
from functools import cache

from pydantic import BaseModel, ConfigDict

from core.catalog import Card
from core.paths import DATA_DIR
from core.query import Task
from core.speed import load_speed_constants


class Provisioning(BaseModel):
    """Figures from data/provisioning.toml (each with its source there)."""

    model_config = ConfigDict(frozen=True)

    checkpoint_bytes_per_trained_param: float
    checkpoints_kept: int
    headroom: float
    ram_per_gpu_byte: float


@cache
def provisioning() -> Provisioning:
    with open(DATA_DIR / "provisioning.toml", "rb") as handle:
        raw = tomllib.load(handle)
    disk, ram = raw["disk"], raw["ram"]
    return Provisioning(
        checkpoint_bytes_per_trained_param=disk["checkpoint_bytes_per_trained_param"],
        checkpoints_kept=disk["checkpoints_kept"],
        headroom=disk["headroom"],
        ram_per_gpu_byte=ram["per_gpu_byte"],
    )


class MachineNeeds(BaseModel):
    """Disk and RAM the machine needs for this job, in bytes; zero where the job has none of a kind."""

    model_config = ConfigDict(frozen=True)

    model_files_bytes: int
    dataset_bytes: int
    checkpoint_bytes: int
    checkpoints_kept: int
    disk_bytes: int  # all of the above with headroom for copies side by side
    ram_bytes: int


def machine_needs(
    *,
    task: Task,
    weights_bytes: int,
    trainable_params: int,
    data_tokens: float | None,
    text_bytes: int | None,
    gpu_memory_bytes: int,
) -> MachineNeeds:
    """Model files are the weights as stored; data is the training text (one pass of `data_tokens`, or the
    size the user gave); checkpoints hold the trained
    parameters with their optimizer state (for LoRA the trained parameters are the adapters')."""
    figures = provisioning()
    training = task is not Task.INFERENCE
    per_token = load_speed_constants().data.bytes_per_token_en
    dataset = (text_bytes or int((data_tokens or 0) * per_token)) if training else 0
    checkpoint = int(trainable_params * figures.checkpoint_bytes_per_trained_param) if training else 0
    kept = figures.checkpoints_kept if training else 0
    disk = int((weights_bytes + dataset + checkpoint * kept) * figures.headroom)
    ram = int(max(gpu_memory_bytes * figures.ram_per_gpu_byte, weights_bytes))
    return MachineNeeds(
        model_files_bytes=weights_bytes,
        dataset_bytes=dataset,
        checkpoint_bytes=checkpoint,
        checkpoints_kept=kept,
        disk_bytes=disk,
        ram_bytes=ram,
    )


# The software stack a provider must have for each vendor's cards (the question names it).
_STACK = {"NVIDIA": "driver_cuda", "AMD": "driver_rocm", "Huawei": "driver_cann"}


def stack_question(card: Card) -> str:
    """Which software-stack question fits the card: CUDA for NVIDIA, ROCm for AMD, CANN for Ascend."""
    return _STACK.get(card.vendor, "driver_cuda")
