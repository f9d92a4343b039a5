"""'720p' / '480p' name a class of frame; a video model renders its own frame of that class, as its model
card gives it (data/vision_models.toml width × height): Wan 2.2 TI2V 5B's 720P is 1280×704, CogVideoX's 480p
720×480. A model whose own frame is of another class, or a frame written out ('1280x720'), keeps 16:9 or what
was written."""

from __future__ import annotations

import pytest

from core.parser import parse


@pytest.mark.parametrize(
    ("question", "model", "frame"),
    [
        ("Wan 2.2 TI2V 5B 720p video on a 4090", "wan2.2-ti2v-5b", (1280, 704)),
        ("wan2.2 5b 生成720p视频 4090够吗", "wan2.2-ti2v-5b", (1280, 704)),
        ("CogVideoX 5B 480p video on a 4090", "cogvideox-5b", (720, 480)),
        ("Wan 2.1 14B 720p video on an H100", "wan2.1-t2v-14b", (1280, 720)),
        ("Wan 2.1 1.3B 480p video on a 4090", "wan2.1-t2v-1.3b", (832, 480)),
        ("Wan 2.1 1.3B 720p video on a 4090", "wan2.1-t2v-1.3b", (1280, 720)),
        ("Wan 2.2 TI2V 5B 1280x720 video on a 4090", "wan2.2-ti2v-5b", (1280, 720)),
    ],
)
def test_a_named_class_is_the_models_own_frame(question: str, model: str, frame: tuple[int, int]) -> None:
    job = parse(question).vision
    assert job is not None and job.model == model
    assert (job.width, job.height) == frame
