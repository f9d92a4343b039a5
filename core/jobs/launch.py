"""A ready-to-paste launch line for the job as answered: the runtime, the cards, the context and the split the
answer's numbers use (flags from each project's own docs: vLLM serve CLI, SGLang server_arguments.md,
llama.cpp tools/server/README.md, Ollama docs/faq.mdx, LM Studio `lms load`, DeepSpeed config-json.md,
KTransformers' R1 tutorial, TensorRT-LLM trtllm-serve)."""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict

from core.estimator import Estimate
from core.jobs.offload import InferenceOffload
from core.query import Offload, Precision, Query, Runtime, Task, is_serving_engine
from core.registry import ModelArch


class Launch(BaseModel):
    model_config = ConfigDict(frozen=True)

    runtime: Runtime
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
    estimate: Estimate, model: ModelArch | None, count: int, offload: InferenceOffload | None
) -> Launch | None:
    """The command for the runtime the answer assumed; None for a plain transformers / peft job (a script)."""
    q = estimate.query
    runtime = q.runtime
    seq = q.seq or 2048
    if q.task is Task.INFERENCE and runtime is not None:
        return _serving(q, model, count, seq, offload)
    deepspeed = q.runtime is Runtime.DEEPSPEED or q.offload in (
        Offload.OPTIMIZER,
        Offload.PARAMS,
        Offload.NVME,
    )
    if q.task is not Task.INFERENCE and deepspeed:
        return _deepspeed(q, count)
    return None


def _serving(
    q: Query, model: ModelArch | None, count: int, seq: int, offload: InferenceOffload | None
) -> Launch | None:
    runtime = q.runtime
    repo = _repo(model, q)
    if runtime is Runtime.VLLM:
        parts = [f"vllm serve {repo}", f"--tensor-parallel-size {count}", f"--max-model-len {seq}"]
        parts.append(f"--gpu-memory-utilization {q.gpu_memory_utilization or 0.9}")
        if q.kv_cache_dtype == "fp8":
            parts.append("--kv-cache-dtype fp8")
        if q.expert_parallel:
            parts.append("--enable-expert-parallel")
        if q.batch and "batch" not in q.defaulted:
            parts.append(f"--max-num-seqs {q.batch}")
        return Launch(runtime=runtime, command=" ".join(parts))
    if runtime is Runtime.SGLANG:
        parts = [
            f"python -m sglang.launch_server --model-path {repo}",
            f"--tp {count}",
            f"--context-length {seq}",
        ]
        if model is not None and model.is_mla and count > 1:
            parts += ["--enable-dp-attention", f"--dp {count}"]
        if q.kv_cache_dtype == "fp8":
            parts.append("--kv-cache-dtype fp8_e4m3")
        return Launch(runtime=runtime, command=" ".join(parts))
    if runtime is Runtime.TENSORRT_LLM:
        return Launch(
            runtime=runtime,
            command=(
                f"trtllm-serve {repo} --tp_size {count} --max_seq_len {seq} "
                "--kv_cache_free_gpu_memory_fraction 0.9"
            ),
        )
    if runtime is Runtime.LLAMA_CPP:
        layers = offload.gpu_layers if offload is not None and offload.mode is Offload.LAYERS else 999
        parts = [f"llama-server -m {_gguf(model, q)}", f"-ngl {layers}", f"-c {seq}"]
        if offload is not None and offload.mode is Offload.EXPERTS:
            parts.append(
                '-ot "exps=CPU"'
                if offload.expert_layers_on_gpu == 0
                else f"--n-cpu-moe {offload.layers - offload.expert_layers_on_gpu}"
            )
        if q.kv_cache_dtype in ("q8_0", "q4_0"):
            parts += [f"-ctk {q.kv_cache_dtype}", f"-ctv {q.kv_cache_dtype}", "-fa on"]
        if count > 1:
            parts.append("--split-mode layer")
        return Launch(runtime=runtime, command=" ".join(parts))
    if runtime is Runtime.OLLAMA:
        env = f"OLLAMA_CONTEXT_LENGTH={seq}"
        if q.kv_cache_dtype in ("q8_0", "q4_0"):
            env += f" OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE={q.kv_cache_dtype}"
        tag = ollama_tag(model, q)
        return Launch(
            runtime=runtime,
            command=f"{env} ollama serve & ollama run {tag}  # in the chat: /set parameter num_ctx {seq}",
        )
    if runtime is Runtime.LM_STUDIO:
        share = "max" if offload is None else f"{offload.gpu_layers / max(offload.layers, 1):.2f}"
        return Launch(runtime=runtime, command=f"lms load {repo} --gpu {share} --context-length {seq}")
    if runtime is Runtime.KTRANSFORMERS:
        return Launch(
            runtime=runtime,
            command=(
                f"python -m ktransformers.local_chat --model_path {repo} "
                f"--gguf_path ./{_gguf(model, q)[:-5]} "
                f"--cpu_infer 32 --max_new_tokens 1000"
            ),
        )
    if runtime is Runtime.MINDIE:
        return Launch(
            runtime=runtime,
            command=(
                f'# mindie-service config.json: "worldSize": {count}, "maxSeqLen": {seq}, '
                f'"npuMemSize": -1, "modelWeightPath": "{repo}"'
            ),
        )
    if is_serving_engine(runtime):
        return None
    return None


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


def _deepspeed(q: Query, count: int) -> Launch:
    config = json.dumps(deepspeed_config(q), indent=2)
    return Launch(
        runtime=Runtime.DEEPSPEED,
        command=f"deepspeed --num_gpus {count} train.py --deepspeed ds_config.json",
        config=config,
    )
