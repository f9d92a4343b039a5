"""ComfyUI and diffusers offload (issue 18): an engine that offloads by itself runs a pipeline that does not
fit the card, with part of it in system RAM and a time per image that pays for the PCIe transfers; diffusers
only offloads when asked. Figures are the published ones, each with its source; where gpufit differs the
test says by how much and why."""

from __future__ import annotations

import pytest

from core.parser import parse
from core.query import Precision
from core.runtimes import load_vision_runtimes, vision_runtime, vision_runtime_named_in
from core.units import GIB
from core.vision import Offload, VisionJob, estimate_vision, need_bytes

MIB = 2**20


def test_comfyui_keeps_its_published_reserve_free() -> None:
    """comfy/model_management.py: minimum_inference_memory() = 0.8 GiB + EXTRA_RESERVED_VRAM (400 MiB on
    Linux) is held back from the weights a lowvram load puts on the card."""
    comfyui = vision_runtime("comfyui")
    assert comfyui.auto_offload and comfyui.offload_modes == ("model", "partial")
    assert comfyui.inference_reserve_gib == pytest.approx(0.8 + 400 / 1024, abs=0.01)
    assert not vision_runtime("diffusers").auto_offload
    assert all(profile.source for profile in load_vision_runtimes())


@pytest.mark.parametrize(
    ("text", "runtime"),
    [
        ("comfyui flux", "comfyui"),
        ("用 ComfyUI 出图", "comfyui"),
        ("python main.py --lowvram", "comfyui"),
        ("diffusers enable_model_cpu_offload", "diffusers"),
        ("a1111 webui", None),
    ],
)
def test_the_engine_is_read_from_the_question(text: str, runtime: str | None) -> None:
    found = vision_runtime_named_in(text)
    assert (found.id if found else None) == runtime


def test_flux_fp8_on_a_12gb_card_runs_under_comfyui_with_the_rest_in_system_ram() -> None:
    """The question of the issue: 'ComfyUI FLUX fp8 on a 12 GB card' is not '❌ does not fit'. ComfyUI's
    own log for FLUX on a 12 GB RTX 3080 Ti (ComfyUI_examples#30, Windows: 600 MiB reserve) says "loading in
    lowvram mode 9771.075": 9.5 GiB of weights on the card, the rest streamed. gpufit keeps 9.0 GiB on a
    12 GB RTX 3080 Ti (Linux reserve, its own CUDA context and allocator slack): within 10%."""
    job = VisionJob(model="flux.1-dev", precision=Precision.FP8, runtime="comfyui", card="rtx-3080-ti")
    result = estimate_vision(job)
    assert result.verdict == "offload" and result.runs_with_offload
    offload = result.offload
    assert offload is not None and offload.mode == "partial" and offload.chosen_by == "runtime"
    assert offload.gpu_weight_bytes == pytest.approx(9771.075 * MIB, rel=0.10)
    # what is not on the card waits in system RAM: the rest of the transformer, T5-XXL, CLIP-L and the VAE
    assert 5 * GIB < offload.host_bytes < 9 * GIB
    assert offload.streamed_bytes_per_step > 1 * GIB
    assert result.as_json()["verdict"] == "offload"


def test_comfyui_time_per_step_on_a_3060_matches_the_reported_range() -> None:
    """specpicks.com 'ComfyUI on an RTX 3060 12GB' (2026): "5–10 seconds per FLUX step on a 3060" — a
    secondary page, the only per-step figure found for this card. gpufit: ≈8.9 s/step (compute at the
    card's 16-bit peak: the 3060 has no fp8 tensor cores, plus ≈2 GiB of weights over PCIe 4.0 per step)."""
    result = estimate_vision(
        VisionJob(model="flux.1-dev", precision=Precision.FP8, runtime="comfyui", card="rtx-3060-12gb")
    )
    assert result.speed is not None and result.job.steps
    per_step = result.speed.seconds_per_item / result.job.steps
    assert 5.0 <= per_step <= 10.0
    assert result.speed.offload_s_per_item > 0


def test_comfyui_first_unloads_the_encoders_before_streaming_the_denoiser() -> None:
    """On 16 GB the fp8 transformer (11.1 GiB) fits once the text encoders are unloaded (ComfyUI frees
    the models not in use before loading the next one): model-level swapping, nothing streamed per step."""
    result = estimate_vision(
        VisionJob(model="flux.1-dev", precision=Precision.FP8, runtime="comfyui", card="rtx-4060-ti-16gb")
    )
    assert result.offload is not None and result.offload.mode == "model"
    assert result.offload.streamed_bytes_per_step == 0
    assert result.verdict == "offload"


def test_a_job_that_fits_is_not_offloaded_by_comfyui() -> None:
    result = estimate_vision(VisionJob(model="sdxl", runtime="comfyui", card="rtx-3060-12gb"))
    assert result.offload is None and result.verdict in ("fits", "tight")


def test_diffusers_does_not_offload_by_itself() -> None:
    """diffusers keeps the pipeline on the card unless enable_*_cpu_offload() is called (its memory docs):
    FLUX does not fit a 3060 as is, and the fixes say which offload runs it."""
    result = estimate_vision(VisionJob(model="flux.1-dev", runtime="diffusers", card="rtx-3060-12gb"))
    assert result.verdict == "no" and result.offload is None
    assert any(f.code == "sequential_offload" and f.fits for f in result.fixes)


def test_asked_sequential_offload_is_what_makes_bf16_flux_run_on_24gb() -> None:
    result = estimate_vision(
        VisionJob(model="flux.1-dev", runtime="diffusers", offload=Offload.SEQUENTIAL, card="rtx-4090")
    )
    assert result.offload is not None and result.offload.chosen_by == "asked"
    assert result.verdict == "offload"
    # every step streams the whole transformer: the time per image pays for it
    assert result.speed is not None and result.speed.offload_s_per_item > 10


def test_model_offload_saves_about_what_diffusers_reports_for_cogvideox() -> None:
    """diffusers' CogVideoX docs (api/pipelines/cogvideox.md, "Memory optimization", CogVideoX-2b in fp16,
    720×480, 49 frames): enable_model_cpu_offload 19 GB against 33 GB without, a ratio of 0.58; gpufit
    20.9 / 34.2 GiB = 0.61."""
    plain = need_bytes(VisionJob(model="cogvideox-2b"))
    model = need_bytes(VisionJob(model="cogvideox-2b", offload=Offload.MODEL))
    assert model / plain == pytest.approx(19 / 33, abs=0.08)


@pytest.mark.parametrize(
    ("offload", "tiling", "published_gib"),
    [(None, False, 33.0), (Offload.MODEL, False, 19.0), (Offload.SEQUENTIAL, True, 4.0)],
)
def test_cogvideox_absolute_memory_is_not_below_the_diffusers_table(
    offload: Offload | None, tiling: bool, published_gib: float
) -> None:
    """The same table in absolute terms (torch.cuda.max_memory_allocated, GiB; gpufit adds the CUDA context
    and allocator slack on top, so its total must not be below the table). "CogVideoX-2b requires about 19 GB
    of GPU memory to decode 49 frames": the VAE decode is the peak, 2 of the 13 latent frames at a time
    (diffusers' num_latent_frames_batch_size, 9 frames in the first batch). gpufit held it at 4.5 GiB over
    4 frames with Wan's coefficient and said 19.2 / 10.5 GiB where the table says 33 / 19 (a wrong "fits" on
    a 24 GB card); the CogVideoX VAE now has its own coefficient, fitted to the 19 GB figure. The table's
    "under 4 GB" for sequential offload holds only with VAE tiling (the decode's maps do not offload), as
    the model card's 4 GB minimum is stated with tiling and slicing on. Not matched: model offload with
    tiling, 11 GB in the table, is 10.5 GiB here (its peak is then the T5 encoder, 9.1 GiB of fp16
    weights; the table's extra 1.5 GB is unexplained)."""
    result = estimate_vision(VisionJob(model="cogvideox-2b", offload=offload, vae_tiling=tiling))
    if offload is Offload.SEQUENTIAL:
        assert result.total_bytes <= 1.3 * published_gib * GIB  # "under 4 GB", plus gpufit's overhead
        return
    assert published_gib * GIB <= result.total_bytes <= 1.2 * published_gib * GIB
    tracked = result.total_bytes - result.breakdown.overhead
    assert tracked == pytest.approx(published_gib * GIB, rel=0.06)


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("用diffusers跑CogVideoX-2b生成视频 4090够吗", ("装不下", "34.2 GiB")),
        ("can I generate a CogVideoX-2b video with diffusers on a 4090?", ("does not fit", "34.2 GiB")),
    ],
)
def test_cogvideox_on_a_24gb_card_is_not_a_plain_fit(question: str, words: tuple[str, ...]) -> None:
    from bot.answer import answer

    reply = answer(question)
    assert reply.facts["verdict"] == "no"
    for word in words:
        assert word in reply.html, reply.html
    listed = reply.facts["fixes"]
    assert isinstance(listed, list)
    fixes = {f["code"]: f["fits"] for f in listed}
    assert fixes["model_offload"] and fixes["vae_tiling"]


def test_flux_nf4_time_on_a_4090_is_within_the_published_band() -> None:
    """diffusers 'Compiling and offloading quantized models' (FLUX.1-dev, transformer and T5 in bnb nf4, RTX
    4090): 32.6 s per image without compile; model CPU offload (with compile) 32.3 s against 25.8 s, so
    offloading costs 6.5 s. gpufit: 44 s, 35% slower than published (the nf4 dequantisation factor is
    torchtune's QLoRA one). Model offload cost 0.3 s when it was one pinned copy in at 80% of PCIe; it is
    now each component to the card and back per image at a tenth of the link (accelerate's hooks copy
    pageable memory tensor by tensor), fitted to this figure: 5.5 s."""
    plain = estimate_vision(VisionJob(model="flux.1-dev", precision=Precision.NF4, card="rtx-4090"))
    offloaded = estimate_vision(
        VisionJob(model="flux.1-dev", precision=Precision.NF4, card="rtx-4090", offload=Offload.MODEL)
    )
    assert plain.speed is not None and offloaded.speed is not None
    assert 0.8 * 32.6 <= plain.speed.seconds_per_item <= 1.6 * 32.6
    assert offloaded.speed.offload_s_per_item == pytest.approx(32.3 - 25.8, rel=0.2)
    assert offloaded.total_bytes < plain.total_bytes


@pytest.mark.parametrize(("precision", "published_s"), [(Precision.NF4, 17 - 12), (Precision.BF16, 20 - 12)])
def test_model_offload_cost_on_an_h100_is_near_the_quantization_blog(
    precision: Precision, published_s: float
) -> None:
    """Hugging Face's "Exploring Quantization Backends in Diffusers" (2025-05-21, its benchmark CSV,
    derekl35/diffusers-quantization-benchmarks; FLUX.1-dev, 12 s per image in bf16, so an H100 class card):
    CPU offload adds 5 s with bitsandbytes 4-bit and 8 s in bf16. The same term on an H100's PCIe 5.0 link:
    2.7 s and 10.6 s, within a factor 2 (the blog keeps T5 in bf16 with 4-bit, and names no card)."""
    job = VisionJob(model="flux.1-dev", precision=precision, card="h100-sxm", offload=Offload.MODEL)
    speed = estimate_vision(job).speed
    assert speed is not None
    assert published_s / 2 <= speed.offload_s_per_item <= published_s * 2


@pytest.mark.parametrize(
    ("question", "offload", "runtime"),
    [
        ("comfyui flux dev fp8 3060 12g 能出图吗", None, "comfyui"),
        ("ComfyUI --lowvram flux dev on a 3060", Offload.PARTIAL, "comfyui"),
        ("comfyui --novram flux dev 3060", Offload.SEQUENTIAL, "comfyui"),
        ("diffusers sdxl 3060 开 model offload", Offload.MODEL, "diffusers"),
        ("comfyui 会自动 offload 吗 flux dev 3060", None, "comfyui"),
    ],
)
def test_the_parser_reads_the_engine_and_its_offload(
    question: str, offload: Offload | None, runtime: str
) -> None:
    job = parse(question).vision
    assert job is not None
    assert job.runtime == runtime
    assert job.offload is offload
