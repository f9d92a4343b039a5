"""How fast a job runs on a card: decode and prefill for inference, tokens/s and wall time for training.

The speed model is calibrated like the memory model: each term is a named formula with its source
(core/speed/terms.py), composed in core/speed/inference.py and training.py, with constants in data/speed.toml
fitted to published figures (data/measured/speed.csv; tools/fit_speed.py, core/speed/fitting.py). Results
are planning estimates with a ± band and the sources they were calibrated on, not benchmarks.
"""

from core.speed.constants import SpeedConstants, load_speed_constants
from core.speed.inference import (
    DEFAULT_OUTPUT_TOKENS,
    Generation,
    InferenceSpeed,
    decode_step_s,
    decode_weight_bytes,
    generation,
    inference_speed,
    prefill_s,
    runtime_name,
    with_own_kernels,
)
from core.speed.terms import tensor_peak_flops
from core.speed.training import (
    TrainingSpeed,
    is_training,
    training_flops_per_token,
    training_speed,
)

__all__ = [
    "DEFAULT_OUTPUT_TOKENS",
    "Generation",
    "InferenceSpeed",
    "SpeedConstants",
    "TrainingSpeed",
    "decode_step_s",
    "decode_weight_bytes",
    "generation",
    "inference_speed",
    "is_training",
    "load_speed_constants",
    "prefill_s",
    "runtime_name",
    "tensor_peak_flops",
    "training_flops_per_token",
    "training_speed",
    "with_own_kernels",
]
