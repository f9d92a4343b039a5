"""A language model on the CPU alone ("no GPU", "纯CPU", "没有显卡"): whether it fits in system RAM, how fast
it decodes from that RAM, and how slowly it reads a prompt.

The same host-memory model as a split with the card (core/jobs/offload.py, core/jobs/host.py): a decoded token
reads every repeating layer's weights (of a MoE layer only the experts its router picks,
`layer_bytes_read_per_token`), the output layer and the KV cache from system RAM, at the host's achieved
bandwidth (MT/s × 8 B × channels × [host] efficiency: a desktop's two channels unless said, a server's eight
from 256 GB, data/jobs.toml [host]). Reading the prompt is bound by the cores' arithmetic instead (2 FLOPs
per active parameter per token), at llama.cpp's achieved rate on the CPU (data/jobs.toml [cpu], from
published llama-bench runs with the CPU backend). GGUF engines run there; a GPU-only engine asked is
answered on llama.cpp, and the answer says so."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from core.estimator import Estimate, terms
from core.jobs.constants import load_job_constants
from core.jobs.defaults import cpu_runtime
from core.jobs.host import effective_bytes_s, host_memory
from core.jobs.offload import OS_RESERVE_BYTES, decode_kv_tokens, layer_bytes_read_per_token, weight_split
from core.query import Precision, Query
from core.registry import ModelArch
from core.runtimes import runtime_profile


class CpuRun(BaseModel):
    """The job on the CPU and system RAM alone (the answers' `cpu`)."""

    model_config = ConfigDict(frozen=True)

    runtime: str
    asked_runtime: str | None  # an engine asked that needs a GPU (answered on `runtime` instead)
    need_bytes: int  # what the job holds in RAM: weights, KV cache, compute buffers
    reserve_bytes: int  # what the OS and the rest keep beside it
    host_memory_bytes: int | None  # the RAM the user said
    fits: bool | None  # None: the RAM was not said
    host_memory: str  # "DDR4-3200 × 2"
    host_bandwidth_gb_s: float  # its peak
    host_efficiency: float  # the share of the peak a decode reaches
    host_assumed: bool  # neither DDR4/DDR5 nor the channels were said
    server: bool
    bytes_per_token: int  # read from RAM per decoded token
    decode_tokens_per_s: float
    prompt_tokens_per_s: float
    prompt_tflops: float  # the cores' achieved rate on a prompt
    prompt_tokens: int  # the prompt the answer times
    prompt_seconds: float
    # the engine's setting that keeps all layers off a GPU: "-ngl 0", "num_gpu 0"
    gpu_layers_knob: str | None

    @property
    def runs(self) -> bool:
        return self.fits is not False


def cpu_run(est: Estimate, model: ModelArch, asked: Query) -> CpuRun:
    """The job of `est` on the CPU and system RAM alone; `asked` is the question as asked (its engine)."""
    query = est.query
    c = load_job_constants()
    precision = query.precision or Precision.Q4_K_M
    per, _, output, block = weight_split(model, precision)
    layers = model.decoder_layers or model.layers
    seq = query.seq or 4096
    kv_total = terms.kv_cache_bytes(model, seq, 2, sequences=1, gpus=1, compressed_mla=True)
    kv_per_token = kv_total * terms.kv_dtype_factor(query.kv_cache_dtype) / seq
    kv_tokens = decode_kv_tokens(seq)
    read = layers * layer_bytes_read_per_token(model, block, per) + output + kv_tokens * kv_per_token
    breakdown = est.breakdown
    need = breakdown.weights + breakdown.kv_cache + breakdown.activations + breakdown.logits
    have = query.host_memory_bytes
    # RAM not said: the machine that holds the job (a server's channels from [host] server_from_gb)
    memory = host_memory(query if have is not None else query.model_copy(update={"host_memory_bytes": need}))
    decode = effective_bytes_s(memory) / read
    tflops = c.cpu.server_prompt_tflops if memory.server else c.cpu.desktop_prompt_tflops
    prompt = tflops * 1e12 / (2 * max(model.active_params, 1))
    prompt_tokens = min(c.cpu.prompt_tokens, seq)
    asked_runtime = asked.runtime if asked.runtime and asked.runtime != query.runtime else None
    runtime = query.runtime or cpu_runtime(query)
    knob = runtime_profile(runtime).gpu_layers_knob
    return CpuRun(
        runtime=runtime,
        asked_runtime=asked_runtime,
        need_bytes=need,
        reserve_bytes=OS_RESERVE_BYTES,
        host_memory_bytes=have,
        fits=None if have is None else need + OS_RESERVE_BYTES <= have,
        host_memory=memory.label,
        host_bandwidth_gb_s=round(memory.peak_bytes_s / 1e9, 1),
        host_efficiency=c.host.efficiency,
        host_assumed=memory.assumed,
        server=memory.server,
        bytes_per_token=int(read),
        decode_tokens_per_s=round(decode, 2),
        prompt_tokens_per_s=round(prompt, 1),
        prompt_tflops=tflops,
        prompt_tokens=prompt_tokens,
        prompt_seconds=round(prompt_tokens / prompt, 1),
        gpu_layers_knob=knob.format(ngl=0, gpu_fraction="off") if knob else None,
    )
