"""What an answer adds for the jobs of issue 18, composed in one place from the estimate and the card: the
runtime assumed, where system RAM takes part (GGUF offload, ZeRO offload) and at what speed, the models of
preference / RL training and its step time, the launch line, and the verdict when the runtime offloads by
itself ("runs, with N GB in system RAM, at ~X tokens/s")."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.catalog import Card
from core.estimator import Estimate, Fit
from core.jobs import rl, zero_offload
from core.jobs.cpu import CpuRun, cpu_run
from core.jobs.defaults import OllamaContextRule, ollama_context_rule, on_cpu
from core.jobs.host import effective_bytes_s, host_memory
from core.jobs.launch import Launch, launch_line
from core.jobs.offload import InferenceOffload, offload_plan
from core.jobs.slots import ServingSlots
from core.jobs.tables import TableFigure, size_tables, table_figures
from core.jobs.weight_offload import WeightOffload, weight_offload, with_weight_streaming
from core.query import Offload, Query, Task
from core.registry import ModelArch, load_registry
from core.runtimes import runtime_profile
from core.speed import inference_speed, training_speed

Verdict = Literal["fits", "tight", "no", "offload", "cpu"]


class TrainingOffload(BaseModel):
    """ZeRO's offloaded states (DeepSpeed offload_optimizer / offload_param, ZeRO-Infinity's NVMe): what
    the host holds and what moving them costs a step."""

    model_config = ConfigDict(frozen=True)

    mode: str  # optimizer | params | nvme
    device: Literal["cpu", "nvme"]
    host_bytes: int
    host_memory_bytes: int | None  # the system RAM the user said, if any
    host_fits: bool | None  # None: the user did not say how much RAM there is
    host_bandwidth_gb_s: float
    host_memory: str
    step_seconds: float | None  # None without a card
    offload_seconds_per_step: float


class RlModelFacts(BaseModel):
    """One model of a preference / RL job as the answer shows it: its role and resident bytes."""

    model_config = ConfigDict(frozen=True)

    role: str
    bytes: int
    trained: bool
    on_training_cards: bool
    asleep_in_update: bool


class RolloutFacts(BaseModel):
    """The rollout engine of an RL job: where it runs, what it holds, its share of a card."""

    model_config = ConfigDict(frozen=True)

    placement: Literal["colocated", "separate"]
    bytes: int
    weights_bytes: int
    kv_bytes: int
    engine_share: float | None  # the engine's share of a training card (colocated only)
    asleep_in_update: bool


class RlFacts(BaseModel):
    model_config = ConfigDict(frozen=True)

    algorithm: str
    reference: bool
    reference_is_adapter_off: bool
    models: list[RlModelFacts]
    num_generations: int | None
    completion_tokens: int | None
    sequences_per_step: int
    tokens_per_sequence: int
    rollout: RolloutFacts | None
    step_seconds: float | None


class JobFacts(BaseModel):
    model_config = ConfigDict(frozen=True)

    runtime: str
    verdict: Verdict | None  # None: the estimate's own verdict stands
    # where system RAM takes part: the GGUF split (when not every layer fits) or ZeRO's offloaded states
    offload: InferenceOffload | TrainingOffload | None
    inference_offload: InferenceOffload | None
    rl: RlFacts | None
    launch: Launch | None
    # the trainers' published VRAM tables for this fine-tune, shown when it does not fit or is tight, or when
    # the table's own runtime is named (core/jobs/tables.py)
    tables: list[TableFigure] = []
    estimate_bytes: int = 0  # the per-card figure the tables are set beside, and its activations and logits
    context_bytes: int = 0
    context_rule: OllamaContextRule | None = None  # Ollama's context by VRAM, when it was not said
    cpu: CpuRun | None = None  # no GPU: the job on the CPU and system RAM (core/jobs/cpu.py)
    # an engine that answers a fixed number of requests at once (Ollama): how the asked ones are served
    slots: ServingSlots | None = None
    # a serving engine's weights partly in host memory, read over PCIe each pass (vLLM --cpu-offload-gb)
    weight_offload: WeightOffload | None = None

    def offload_json(self) -> dict[str, object] | None:
        """The answer's JSON `offload`: the split (with whether it runs) or the offloaded states."""
        if isinstance(self.offload, InferenceOffload):
            return self.offload.model_dump(mode="json") | {"runs": self.offload.runs}
        if self.offload is None and self.weight_offload is not None:
            return (
                {"mode": "weights"}
                | self.weight_offload.model_dump(mode="json")
                | {"runs": self.weight_offload.runs}
            )
        return self.offload.model_dump(mode="json") if self.offload is not None else None


def _model(est: Estimate) -> ModelArch | None:
    return load_registry().by_id.get(est.query.model or "")


def _arch(est: Estimate) -> ModelArch | None:
    from core.estimator.memory import resolve_model

    try:
        return resolve_model(est.query, load_registry())
    except Exception:
        return None


def job_facts(
    est: Estimate, card: Card | None, count: int, fits: Fit | None, asked: Query | None = None
) -> JobFacts:
    """`asked`: the question as asked (the engine it named, which a CPU-only answer may not run on)."""
    q = est.query
    runtime = q.runtime or runtime_profile(None).id
    model = _arch(est)
    verdict: Verdict | None = None
    offload: InferenceOffload | TrainingOffload | None = None
    plan: InferenceOffload | None = None
    cpu = cpu_run(est, model, asked or q) if model is not None and card is None and on_cpu(q) else None
    if cpu is not None:
        verdict = "cpu" if cpu.runs else "no"
    asked_split = q.gpu_layers is not None or q.offload is Offload.EXPERTS  # -ngl N, -ot exps=CPU, --cpu-moe
    if model is not None and card is not None and (fits is Fit.NO or asked_split):
        plan = offload_plan(est, model, card, count)
    if plan is not None and plan.whole:
        # llama.cpp's own accounting fits every layer on the cards: tight (transformers' figure says no)
        verdict = "tight" if fits is Fit.NO else None
    elif plan is not None:
        verdict = "offload" if plan.runs else "no"
        offload = plan
    elif model is not None and zero_offload.uses_host_memory(q):
        offload = _training_offload(est, model, card, count)
        if q.host_memory_bytes is not None and offload.host_bytes > q.host_memory_bytes:
            verdict = "no"
    weights_off = None
    if q.cpu_offload_gb and q.task is Task.INFERENCE:
        speed = None
        if card is not None and fits is not Fit.NO:
            speed = with_weight_streaming(inference_speed(est, card, count), est, card, count)
        weights_off = weight_offload(est, card, count, speed)
        if weights_off is not None and fits is not Fit.NO and verdict is None:
            verdict = "offload" if weights_off.runs else "no"
    rl_facts = _rl_facts(est, model, card, count) if q.algorithm is not None and model is not None else None
    launch = launch_line(est, model, count, plan, on_cpu=cpu is not None)
    tables: list[TableFigure] = []
    named = q.runtime in size_tables()  # the trainer whose own table it is
    if model is not None and count == 1 and (fits in (Fit.NO, Fit.TIGHT) or named):
        tables = table_figures(q, model.total_params)
    return JobFacts(
        runtime=runtime,
        verdict=verdict,
        offload=offload,
        inference_offload=plan,
        rl=rl_facts,
        launch=launch,
        tables=tables,
        estimate_bytes=est.breakdown.total,
        context_bytes=est.breakdown.activations + est.breakdown.logits,
        context_rule=_context_rule(est, card, count),
        cpu=cpu,
        slots=est.slots,
        weight_offload=weights_off,
    )


def _context_rule(est: Estimate, card: Card | None, count: int) -> OllamaContextRule | None:
    q = est.query
    memory = card.memory_bytes * count if card else (q.card_memory_bytes or 0) * (q.gpus or 1)
    if "seq" not in q.defaulted or not memory or not runtime_profile(q.runtime).defaults.context_by_vram:
        return None
    return ollama_context_rule(memory)


def _training_offload(est: Estimate, model: ModelArch, card: Card | None, count: int) -> TrainingOffload:
    q = est.query
    host = zero_offload.host_bytes(q, model)
    memory = host_memory(q)
    extra = zero_offload.step_offload_seconds(q, model, effective_bytes_s(memory))
    step = None
    if card is not None:
        speed = training_speed(est, card, count, None)
        step = speed.step_s + extra
    return TrainingOffload(
        mode=q.offload.value if q.offload else "optimizer",
        device="nvme" if q.offload and q.offload.value == "nvme" else "cpu",
        host_bytes=host,
        host_memory_bytes=q.host_memory_bytes,
        host_fits=None if q.host_memory_bytes is None else host <= q.host_memory_bytes,
        host_bandwidth_gb_s=round(memory.peak_bytes_s / 1e9, 1),
        host_memory=memory.label,
        step_seconds=step,
        offload_seconds_per_step=extra,
    )


def _rl_facts(est: Estimate, model: ModelArch, card: Card | None, count: int) -> RlFacts:
    q = est.query
    assert q.algorithm is not None
    sequences, tokens = rl.update_step(q)
    others = rl.extra_models(q, model, count, 16.0)
    # the models alive at the peak: an engine asleep during the update only when the rollout is the peak
    in_peak = [
        m for m in others if m.on_training_cards and (not m.asleep_in_update or est.peak_phase == "rollout")
    ]
    policy = max(0, est.breakdown.total - sum(m.bytes for m in in_peak))
    models = [
        RlModelFacts(
            role="policy", bytes=policy, trained=True, on_training_cards=True, asleep_in_update=False
        )
    ]
    models += [
        RlModelFacts(
            role=m.role,
            bytes=m.bytes,
            trained=m.trained,
            on_training_cards=m.on_training_cards,
            asleep_in_update=m.asleep_in_update,
        )
        for m in others
    ]
    rollout = next((m for m in others if m.role == "rollout"), None)
    rollout_facts = None
    step = None
    if rollout is not None:
        profile_rl = runtime_profile(q.runtime).rl
        engine_share = profile_rl.rollout_share if profile_rl is not None else None
        rollout_facts = RolloutFacts(
            placement=rl.rollout_placement(q),
            bytes=rollout.bytes,
            weights_bytes=rollout.weights_bytes,
            kv_bytes=rollout.kv_bytes,
            engine_share=engine_share if rollout.on_training_cards else None,
            asleep_in_update=rollout.asleep_in_update,
        )
    if card is not None and q.task is not Task.INFERENCE:
        update = training_speed(est, card, count, None)
        update_s = sequences * tokens / max(update.tokens_per_s, 1e-9) * count
        decode_s = 0.0
        if rollout is not None:
            # one decode step of the group reads the rollout engine's weights once (batch of generations)
            weights = rollout.weights_bytes or model.total_params * 2
            decode_s = (q.completion_tokens or 0) * weights / (card.bandwidth_gb_s * 1e9 * 0.6)
        forward_only = sum(1 for m in others if m.role in ("reference", "reward")) * update_s / 3
        step = round(update_s + decode_s + forward_only, 2)
    return RlFacts(
        algorithm=q.algorithm.value,
        reference=rl.uses_reference(q),
        reference_is_adapter_off=rl.reference_is_adapter_off(q),
        models=models,
        num_generations=q.num_generations,
        completion_tokens=q.completion_tokens,
        sequences_per_step=sequences,
        tokens_per_sequence=tokens,
        rollout=rollout_facts,
        step_seconds=step,
    )
