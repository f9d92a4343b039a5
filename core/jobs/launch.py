"""A ready-to-paste launch line for the job as answered: the runtime, the cards, the context and the split the
answer's numbers use (flags from each project's own docs: vLLM serve CLI, SGLang server_arguments.md,
llama.cpp tools/server/README.md, Ollama docs/faq.mdx, LM Studio `lms load`, DeepSpeed config-json.md,
KTransformers' R1 tutorial, TensorRT-LLM trtllm-serve)."""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict

from core.estimator import Estimate
from core.jobs.offload import InferenceOffload
from core.query import Offload, Precision, Query, Task
from core.registry import ModelArch
from core.runtimes import load_runtimes, runtime_profile


class Launch(BaseModel):
    model_config = ConfigDict(frozen=True)

    runtime: str
    command: str
    config: str | None = None  # a DeepSpeed JSON when the job needs one


def _repo(model: ModelArch | None, query: Query) -> str:
    if model is not None and model.hf_repo:
        return model.hf_repo
    if query.model:
        return query.model
    return f"<your {query.params_b:g}B model>" if query.params_b else "<model>"


def ollama_tag(model: ModelArch | None, query: Query) -> str:
    """The library tag: 'qwen2.5-14b' → 'qwen2.5:14b', 'llama-3.3-70b' → 'llama3.3:70b' (+ the quant when it
    is not the tag's default Q4_K_M)."""
    name = (model.id if model is not None else query.model) or "model"
    head, _, size = name.rpartition("-")
    head = head.replace("llama-", "llama").replace("gemma-", "gemma").replace("mistral-", "mistral")
    tag = f"{head}:{size}" if head else name
    precision = query.precision or Precision.Q4_K_M
    if precision is not Precision.Q4_K_M:
        tag += f"-instruct-{precision.value}"
    return tag


def _gguf(model: ModelArch | None, query: Query) -> str:
    base = (model.hf_repo.split("/")[-1] if model is not None and model.hf_repo else query.model) or "model"
    return f"{base}-{(query.precision or Precision.Q4_K_M).value.upper()}.gguf"


def launch_line(
    estimate: Estimate,
    model: ModelArch | None,
    count: int,
    offload: InferenceOffload | None,
    *,
    on_cpu: bool = False,
) -> Launch | None:
    """The command for the runtime the answer assumed (its profile's `launch` template, data/runtimes.toml);
    a DeepSpeed launch with its config for ZeRO offload; None for a plain transformers / peft job."""
    q = estimate.query
    profile = runtime_profile(q.runtime)
    offloaded = q.offload in (Offload.OPTIMIZER, Offload.PARAMS, Offload.NVME)
    if q.task is not Task.INFERENCE:
        if not (offloaded or ((q.zero_stage or 0) > 0 and profile.launch)):
            return None
        # the trainer's own launch, else the one training profile with a launch line (DeepSpeed's launcher)
        launchers = [p for p in load_runtimes().profiles if "training" in p.jobs and p.launch]
        deepspeed = profile if profile.launch else launchers[0]
        command = (deepspeed.launch or "").format(gpus=count)
        return Launch(runtime=deepspeed.id, command=command, config=json.dumps(deepspeed_config(q), indent=2))
    if q.runtime is None or profile.launch is None:
        return None
    seq = q.seq or 2048
    fields = _fields(q, model, count, seq, offload, on_cpu=on_cpu)
    flags = {"kv": "", "ep": "", "dp": "", "experts": "", "weights": ""}
    if q.kv_cache_dtype is not None and profile.launch_kv:
        flags["kv"] = profile.launch_kv.format(**fields)
    if q.expert_parallel and profile.launch_expert_parallel:
        flags["ep"] = profile.launch_expert_parallel.format(**fields)
    if model is not None and model.is_mla and count > 1 and profile.launch_dp_attention:
        flags["dp"] = profile.launch_dp_attention.format(**fields)
    if offload is not None and offload.mode is Offload.EXPERTS and profile.launch_experts_on_cpu:
        flags["experts"] = profile.launch_experts_on_cpu.format(**fields)
    if q.cpu_offload_gb and profile.launch_weight_offload:
        flags["weights"] = profile.launch_weight_offload.format(**fields)
    return Launch(runtime=profile.id, command=profile.launch.format(**fields | flags))


def _fields(
    q: Query,
    model: ModelArch | None,
    count: int,
    seq: int,
    offload: InferenceOffload | None,
    *,
    on_cpu: bool = False,
) -> dict[str, object]:
    """What the profiles' launch templates may name; `on_cpu`: no layer on a GPU (there is none)."""
    gguf = _gguf(model, q)
    layers = offload.gpu_layers if offload is not None and offload.mode is Offload.LAYERS else 999
    fraction = "max" if offload is None else f"{offload.gpu_layers / max(offload.layers, 1):.2f}"
    if on_cpu:
        layers, fraction = 0, "off"
    cpu_moe = offload.layers - offload.expert_layers_on_gpu if offload is not None else 0
    return {
        "repo": _repo(model, q),
        "gguf": gguf,
        "gguf_dir": gguf.removesuffix(".gguf"),
        "tag": ollama_tag(model, q),
        "gpus": count,
        "seq": seq,
        "share": q.gpu_memory_utilization or runtime_profile(q.runtime).memory.memory_share or 0.9,
        "ngl": layers,
        "gpu_fraction": fraction,
        "cpu_moe_layers": cpu_moe,
        "kv": q.kv_cache_dtype.value if q.kv_cache_dtype is not None else "",
        "cpu_offload_gb": f"{q.cpu_offload_gb:g}" if q.cpu_offload_gb else "",
    }


def deepspeed_config(q: Query) -> dict[str, object]:
    """The ZeRO section DeepSpeed's config-json.md documents, with the offload the answer assumed."""
    stage = q.zero_stage or (3 if q.offload in (Offload.PARAMS, Offload.NVME) else 2)
    zero: dict[str, object] = {"stage": stage, "overlap_comm": True, "contiguous_gradients": True}
    device = "nvme" if q.offload is Offload.NVME else "cpu"
    target: dict[str, object] = {"device": device, "pin_memory": True}
    if device == "nvme":
        target["nvme_path"] = "/local_nvme"
    if q.offload in (Offload.OPTIMIZER, Offload.PARAMS, Offload.NVME):
        zero["offload_optimizer"] = dict(target)
    if q.offload in (Offload.PARAMS, Offload.NVME) and stage == 3:
        zero["offload_param"] = dict(target)
    if stage == 3:
        zero["stage3_gather_16bit_weights_on_model_save"] = True
    return {
        "bf16": {"enabled": True},
        "zero_optimization": zero,
        "gradient_accumulation_steps": "auto",
        "train_micro_batch_size_per_gpu": q.batch or 1,
        "gradient_clipping": 1.0,
    }
