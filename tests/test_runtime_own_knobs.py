"""Each engine's own knobs, named in its answers as the engine spells them (data/runtimes.toml
`gpu_layers_knob`): llama.cpp's `-ngl N`, Ollama's `num_gpu N` (a Modelfile's `PARAMETER num_gpu`, the API's
option; Ollama has no -ngl), LM Studio's `lms load --gpu <share>`."""

from __future__ import annotations

import pytest
from test_quality_followups import answer_of


@pytest.mark.parametrize(
    ("text", "knob", "not_said"),
    [
        ("ollama 跑 qwen2.5-32b 在 4060ti 16g 上 内存64g", "（num_gpu ", "-ngl"),
        ("run qwen2.5-32b with ollama on a 4060 ti 16gb, 64gb ram", "(num_gpu ", "-ngl"),
        ("llama.cpp qwen2.5-32b on a 4060 ti 16gb with 64gb ram", "(-ngl ", "num_gpu"),
        ("llama.cpp 跑 qwen2.5-32b 4060ti 16g 内存64g", "（-ngl ", "num_gpu"),
        ("lm studio qwen2.5-32b on a 4060 ti 16gb with 64gb ram", "(lms load --gpu 0.", "-ngl"),
    ],
)
def test_a_layer_split_names_the_engines_own_setting(text: str, knob: str, not_said: str) -> None:
    answer = answer_of(text)
    offload = answer["offload"]
    assert offload["mode"] == "layers" and 0 < offload["gpu_layers"] < offload["layers"], text
    assert knob in answer["text"], answer["text"]
    split_line = next(line for line in answer["text"].splitlines() if line.startswith("🧮"))
    assert not_said not in split_line, split_line
    if "ollama" in text:
        assert offload["gpu_layers_knob"] == f"num_gpu {offload['gpu_layers']}"
