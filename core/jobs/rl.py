"""Preference and RL training: which models a job holds besides the policy, and what its update step runs on.

Layouts as the trainers build them (../shared/reference/jobs-and-market.md §3, each checked in its repo):
- DPO and KTO (TRL dpo_trainer / kto_trainer, LLaMA-Factory `use_ref_model`): a frozen reference copy of the
  policy in 16-bit, unless the policy is a LoRA/QLoRA adapter (the reference is the base with the adapter
  disabled: no second copy). ORPO and SimPO/CPO are reference-free. Each step runs the chosen AND the
  rejected sequence: twice the sequences of the batch.
- GRPO (TRL GRPOConfig, verl, OpenRLHF): num_generations completions per prompt, prompt + completion tokens
each;
  a reference when the KL term is on (verl's GRPO recipe `use_kl_loss`, OpenRLHF's init_kl_coef; TRL's beta
  is 0 since v0.19, so no reference); a rollout engine (vLLM) with its own 16-bit copy of the weights and the
  KV cache of the generations, colocated on the training cards by default (TRL vllm_mode "colocate", verl's
  hybrid engine) or on cards of its own. verl and OpenRLHF's hybrid engine put the engine to sleep during
  the update (vLLM sleep level 1: its weights go to host RAM, its KV cache is freed), so the rollout and the
  update are two phases whose peaks do not add; TRL's colocated engine keeps its memory unless
  vllm_enable_sleep_mode.
- PPO: also a critic (a second trained model; with LoRA, LLaMA-Factory puts the value head on the policy)
and a
  reward model in 16-bit.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.estimator import terms
from core.query import Algorithm, Method, Precision, Query
from core.registry import ModelArch
from core.runtimes import runtime_profile

PAIRED = frozenset({Algorithm.DPO, Algorithm.ORPO, Algorithm.SIMPO, Algorithm.KTO})
REFERENCE_FREE = frozenset({Algorithm.ORPO, Algorithm.SIMPO})
ADAPTERS = frozenset({Method.LORA, Method.QLORA})
# Trainers whose loss reads per-token log-probabilities (TRL selective_log_softmax; verl's and OpenRLHF's
# log-probs of the response alike) instead of transformers' cross-entropy: calibration.toml [log_probs].
# ORPO and SimPO/CPO add an NLL term over the chosen sequences as well and keep the cross-entropy's count.
LOG_PROB_LOSSES = frozenset({Algorithm.DPO, Algorithm.KTO, Algorithm.GRPO, Algorithm.PPO})

Role = Literal["policy", "reference", "critic", "reward", "rollout"]


class RlModel(BaseModel):
    """One model of the job on one training card: its resident bytes (weights, and for trained ones their
    gradients and optimizer states), and the KV cache it generates with (rollout only)."""

    model_config = ConfigDict(frozen=True)

    role: Role
    weights_bytes: int
    states_bytes: int = 0
    kv_bytes: int = 0
    trained: bool = False
    on_training_cards: bool = True
    # a colocated rollout engine that sleeps while the policy trains: alive only in the rollout phase
    asleep_in_update: bool = False

    @property
    def bytes(self) -> int:
        return self.weights_bytes + self.states_bytes + self.kv_bytes


def uses_reference(query: Query) -> bool:
    """A frozen reference copy is held (see the module docstring for each trainer's rule)."""
    algorithm = query.algorithm
    if algorithm is None or algorithm in REFERENCE_FREE:
        return False
    if query.method in ADAPTERS:
        return False  # the base with the adapter disabled is the reference
    if algorithm is Algorithm.GRPO:
        rl = runtime_profile(query.runtime).rl  # TRL's beta defaults to 0.0: no reference
        return rl.grpo_reference if rl is not None else True
    return True


def reference_is_adapter_off(query: Query) -> bool:
    algorithm = query.algorithm
    return algorithm is not None and algorithm not in REFERENCE_FREE and query.method in ADAPTERS


def update_step(query: Query) -> tuple[int, int]:
    """(sequences, tokens per sequence) of one update step on one card: chosen + rejected for preference
    training, num_generations × (prompt + completion) for GRPO / PPO."""
    batch, seq = query.batch or 1, query.seq or 2048
    algorithm = query.algorithm
    if algorithm in PAIRED:
        return 2 * batch, seq
    if algorithm is Algorithm.GRPO:
        return query.num_generations or 8, seq + (query.completion_tokens or 0)
    if algorithm is Algorithm.PPO:
        return batch, seq + (query.completion_tokens or 0)
    return batch, seq


def held_in_update(query: Query) -> tuple[int, int]:
    """(sequences, tokens per sequence) one card holds at once in the update: the whole step, unless the
    trainer packs it into token-capped micro-batches (verl's dynamic batch size) and accumulates the rest —
    a sequence is never split, so at least one."""
    sequences, seq = update_step(query)
    profile = runtime_profile(query.runtime).rl
    cap = profile.update_tokens_per_card if profile is not None else None
    if cap is not None and query.algorithm in (Algorithm.GRPO, Algorithm.PPO):
        sequences = min(sequences, max(1, cap // max(seq, 1)))
    return sequences, seq


def logit_positions(query: Query) -> int:
    """Token positions given logits in one update step on one card: every position of every sequence, except
    in GRPO / PPO, whose policy runs with logits_to_keep = completion + 1 (TRL `_get_per_token_logps`; verl
    and OpenRLHF take the response's log-probs only): the completions' positions."""
    sequences, seq = held_in_update(query)
    if query.algorithm in (Algorithm.GRPO, Algorithm.PPO) and query.completion_tokens:
        return sequences * min(seq, query.completion_tokens)
    return sequences * seq


def rollout_placement(query: Query) -> Literal["colocated", "separate"]:
    return query.rollout or "colocated"


def rollout_sleeps(query: Query) -> bool:
    """The colocated engine frees its GPU memory while the policy trains (the runtime's layout)."""
    rl = runtime_profile(query.runtime).rl
    return rl is not None and rl.rollout_sleeps and rollout_placement(query) == "colocated"


def _sharded(nbytes: float, query: Query, gpus: int) -> int:
    """Frozen copies are sharded with the policy under ZeRO-3 / FSDP (DeepSpeed wraps the reference too)."""
    return int(nbytes / gpus) if (query.zero_stage or 0) >= 3 and gpus > 1 else int(nbytes)


def extra_models(query: Query, model: ModelArch, gpus: int, policy_states_per_param: float) -> list[RlModel]:
    """The models besides the policy, per training card. `policy_states_per_param` is what the policy's
    trained state costs per parameter (weights + gradients + optimizer), for a critic trained the same way."""
    algorithm = query.algorithm
    if algorithm is None:
        return []
    half = terms.weight_bytes(model, Precision.BF16)
    out: list[RlModel] = []
    if uses_reference(query):
        out.append(RlModel(role="reference", weights_bytes=_sharded(half, query, gpus)))
    if algorithm is Algorithm.PPO:
        if query.method not in ADAPTERS:
            states = policy_states_per_param * model.total_params
            out.append(
                RlModel(
                    role="critic", weights_bytes=0, states_bytes=_sharded(states, query, gpus), trained=True
                )
            )
        out.append(RlModel(role="reward", weights_bytes=_sharded(half, query, gpus)))
    if algorithm in (Algorithm.GRPO, Algorithm.PPO):
        out.append(_rollout(query, model, gpus, half))
    return out


ENGINE_TP_MAX = 8  # a vLLM engine's tensor parallelism stays inside one node


def _rollout_tensor_parallel(model: ModelArch, gpus: int, default: int) -> int:
    """The largest engine tensor parallelism up to the cards of one node that splits the heads evenly and
    divides the cards (verl builds its rollout mesh as world size / TP): what verl's tuning scripts set for
    larger models (examples/tuning: 7B on 2 cards at rollout TP 2, 14B and 32B on 4 at TP 4), so each card
    holds the least of the engine; below the runtime's default only when no larger size divides the cards."""
    sizes = [
        size
        for size in range(1, min(gpus, ENGINE_TP_MAX) + 1)
        if gpus % size == 0 and model.tensor_parallel_ok(size)
    ]
    return max(sizes, default=1)


def _rollout(query: Query, model: ModelArch, gpus: int, half: int) -> RlModel:
    """The generation engine: vLLM's copy of the weights (TRL colocate: tensor parallel 1, a whole copy per
    card;
    verl: rollout TP 2 by default; OpenRLHF: TP over the engine's cards) and the generations' KV cache."""
    rl = runtime_profile(query.runtime).rl
    tp = max(
        1, min(gpus, rl.rollout_tensor_parallel) if rl is not None and rl.rollout_tensor_parallel else gpus
    )
    if rl is not None and rl.rollout_tensor_parallel and rl.rollout_tensor_parallel_grows:
        tp = _rollout_tensor_parallel(model, gpus, tp)
    # Unsloth's fast_inference shares the weights between vLLM and training: no second copy
    weights = 0 if rl is not None and rl.rollout_shares_weights else half // tp
    sequences, tokens = update_step(query)
    per_token = terms.kv_bytes_per_token(model, 2, compressed_mla=True)
    kv = sequences * tokens * per_token // tp
    return RlModel(
        role="rollout",
        weights_bytes=weights,
        kv_bytes=int(kv),
        on_training_cards=rollout_placement(query) == "colocated",
        asleep_in_update=rollout_sleeps(query),
    )
