"""Image, video, vision, speech and embedding jobs in a message (zh + en) -> a typed VisionJob.

A job is recognised by a model of data/vision_models.toml named in the text ('SDXL', 'FLUX.1-dev',
'YOLOv8x', 'Whisper large') or by a task people name without a model ('文生图', '图生视频',
'转写 1 小时音频'), which then takes the most asked model for it (stated as an assumption: `model` is in
`defaulted`). Quantities are read the way these jobs write them: '1024x1024', '720p', '5 秒视频',
'4 张一批', 'batch 16', 'YOLOv8x 640', '30 步', '1 小时音频'. Runs on the normalised text
(core.parser.normalize).
"""

from __future__ import annotations

import re
from functools import cache

from core.query import Precision
from core.regex_screen import TextPattern, gated
from core.runtimes import vision_runtime_named_in
from core.vision.job import Offload, TrainMethod, VisionJob, VisionTask
from core.vision.registry import VisionModel, load_vision_registry


def _c(pattern: str) -> TextPattern:
    return gated(pattern)  # no search where the strings every match holds are missing (regex_screen)


# Tasks named without a model, and the model each defaults to (the most rented-for one of its kind).
_TASK_DEFAULTS: tuple[tuple[TextPattern, str, VisionTask], ...] = (
    (_c(r"图生视频|image[\s-]*to[\s-]*video|(?<![a-z])i2v(?![a-z])"), "wan2.1-i2v-14b", VisionTask.GENERATE),
    (
        _c(
            r"文生视频|视频生成|生成视频|text[\s-]*to[\s-]*video|(?<![a-z])t2v(?![a-z])|video\s+generation|ai\s*视频|"
            r"\d+(?:\.\d+)?\s*(?:秒|s|sec(?:ond)?s?)\s*(?:的|long\s+)?\s*(?:\d{3,4}\s*p\s*)?(?:视频|videos?|clips?)|"
            r"\d{3,4}\s*p\s*(?:的)?\s*(?:视频|videos?)"
        ),
        "wan2.1-t2v-14b",
        VisionTask.GENERATE,
    ),
    (
        _c(
            r"文生图|出图|生图|ai\s*绘画|ai\s*画图|text[\s-]*to[\s-]*image|(?<![a-z])t2i(?![a-z])|image\s+generation|generate\s+images?"
        ),
        "sdxl",
        VisionTask.GENERATE,
    ),
    (
        # '炼丹' is the image community's word for training a LoRA (SD / SDXL LoRAs on rented 4090s).
        _c(
            r"炼丹|(?:sd|绘画|画风|画师|人物|角色|二次元|anime|character|style)\s*lora|lora\s*(?:模型\s*)?(?:炼|训练)?\s*(?:画|图)"
        ),
        "sdxl",
        VisionTask.TRAIN,
    ),
    (
        _c(r"转写|转录|语音识别|语音转文字|字幕|transcrib|speech[\s-]*to[\s-]*text|(?<![a-z])asr(?![a-z])"),
        "whisper-large-v3",
        VisionTask.TRANSCRIBE,
    ),
)

_TRAIN = _c(
    r"训练|炼丹|微调|finetun|fine[\s-]*tun|(?<![a-z])train|lora|dreambooth|(?<![a-z])db(?![a-z])|全量|from\s*scratch"
)
_FULL = _c(r"全量|全参|full[\s-]*(?:fine[\s-]*tun|finetun|parameter|ft)|full\s+train|(?<![a-z])fft(?![a-z])")
_LORA = _c(r"lora|dreambooth|(?<![a-z])lycoris|(?<![a-z])loha")
_INFER = _c(r"推理|检测|识别|分割|infer|predict|serv|部署|deploy|检索|embed|向量|rerank|重排")
_RES = _c(r"(?<![\d.])(\d{3,5})\s*(?:x|\*|×|乘)\s*(\d{3,5})(?![\d.])")
_P_RES = _c(r"(?<![\d.])(480|540|576|704|720|1080|1440|2160)\s*p(?![a-z])|(?<![a-z\d])(4k|2k)(?![a-z])")
_SECONDS = _c(r"(\d+(?:\.\d+)?)\s*(?:秒|s(?![a-z])|sec(?:ond)?s?(?![a-z]))")
_FRAMES = _c(r"(\d{1,4})\s*(?:帧|frames?(?![a-z]))")
_BATCH = _c(
    r"(?:batch(?:[\s_-]*size)?|(?<![a-z])bs|批量|批大小|批次)\s*[=:：]?\s*(\d{1,5})|"
    r"(\d{1,4})\s*张\s*(?:图\s*)?(?:1|一)?\s*批|一次\s*(?:出|生成|跑)?\s*(\d{1,4})\s*张|"
    r"(\d{1,4})\s*(?:images?|pics?|pictures?)\s*(?:at\s+once|per\s+batch|in\s+a\s+batch)|"
    r"(?:一批|每批)\s*(\d{1,4})\s*(?:张|条|个)?"
)
_STEPS = _c(r"(\d{1,4})\s*(?:步|steps?(?![a-z]))|steps?\s*[=:：]?\s*(\d{1,4})")
_IMGSZ = _c(r"(?:imgsz|img[\s_-]*size|image[\s_-]*size|输入尺寸|分辨率)\s*[=:：]?\s*(\d{3,4})")
_BARE_SIDE = _c(
    r"(?<![\d.x*])(224|256|320|384|416|448|512|608|640|768|800|896|960|1024|1280|1536)(?![\d.]|\s*(?:x|\*|×|[pkgb](?![a-z])|张|步|tokens?|条))"
)
_AUDIO_HOURS = _c(r"(\d+(?:\.\d+)?)\s*(?:个\s*)?(?:小时|hours?|hrs?|h(?![a-z]))")
_AUDIO_MINUTES = _c(r"(\d+(?:\.\d+)?)\s*(?:分钟|minutes?|mins?)")
_TOKENS = _c(r"(\d{2,6})\s*(?:tokens?|个?\s*token|字)")
_ITEMS = _c(
    r"(?:生成|出|画|做|跑|处理|转|generate|make|render|produce|process|embed|encode|index|嵌入|向量化|编码|索引)"
    r"\s*(\d[\d,]*(?:\.\d+)?)\s*(万|亿|k|m|million)?\s*"
    r"(?:张|个|段|条|幅|篇|images?|pictures?|pics?|videos?|clips?|texts?|documents?|docs?|passages?|chunks?|sentences?"
    r"|段落|文档|句子?)"
)
# the count before its noun with no verb in front: '给 1000 万条文本做向量', '1万张图片 打标签'
_ITEMS_NOUN = _c(
    r"(?<![\d.])(\d[\d,]*(?:\.\d+)?)\s*(万|亿|k|m|million)?\s*(?:条|篇|张|段|幅|个)\s*"
    r"(?:文本|文档|图片|图像|照片|图|视频|句子|段落|语料|passages?|texts?|documents?|images?)"
)
_ITEM_MAGNITUDE = {"万": 10_000, "亿": 100_000_000, "k": 1_000, "m": 1_000_000, "million": 1_000_000}
_OFFLOAD_GROUP = _c(r"group[\s_-]*offload|apply_group_offloading|分组卸载|组卸载")
_OFFLOAD_SEQ = _c(r"sequential[\s_-]*(?:cpu[\s_-]*)?offload|逐层卸载|顺序卸载|novram")
# ComfyUI's (and the WebUI's) --lowvram: part of the denoiser on the card, the rest streamed every step
_OFFLOAD_PARTIAL = _c(r"lowvram|low[\s_-]vram\s*mode|低显存模式")
_OFFLOAD = _c(r"offload|卸载到内存|放到内存|cpu\s*卸载|内存卸载|--medvram")
_TILING = _c(r"tiled?\s*vae|vae\s*til|vae\s*分块|分块\s*vae|vae\s*切片|tiled\s*diffusion")
_GC = _c(r"gradient[\s_-]*checkpoint|梯度检查点|重计算|activation\s*checkpoint")
_NO_CACHE = _c(r"不\s*缓存|no[\s_-]*cache|without\s+cach")
_GGUF = _c(r"gguf|q4_k|q4km|q8_0|(?<![a-z])q4(?![a-z0-9])|(?<![a-z])q8(?![a-z0-9])")


@cache
def _alias_patterns() -> tuple[tuple[str, TextPattern, str], ...]:
    """Each alias as a pattern tolerant of spaces / dashes between its parts, longest alias first, beside
    its longest part: a text that lacks that part cannot match, and a substring test is far cheaper than a
    search (find_vision_model tries every alias of the registry on every message)."""
    registry = load_vision_registry()
    out: list[tuple[int, str, TextPattern, str]] = []
    for model in registry.models.values():
        for alias in {model.id, model.name.lower(), *(a.lower() for a in model.aliases)}:
            parts = [p for p in re.split(r"[\s_\-/]+|(?<=[a-z])(?=\d)|(?<=\d)(?=[a-z])", alias) if p]
            body = r"[\s_\-/]*".join(re.escape(p) for p in parts)
            pattern = re.compile(rf"(?<![a-z0-9.]){body}(?![a-z0-9])")
            out.append((len(alias), max(parts, key=len, default=""), pattern, model.id))
    out.sort(key=lambda item: -item[0])
    return tuple((part, pattern, model_id) for _, part, pattern, model_id in out)


@cache
def _aliases_by_part() -> dict[str, tuple[int, ...]]:
    """Each longest part of _alias_patterns(), with the places (in that order) of the aliases it belongs to:
    a message is tested for the few dozen distinct parts, and only the aliases whose part it holds are
    searched, still longest first."""
    places: dict[str, list[int]] = {}
    for place, (part, _, _) in enumerate(_alias_patterns()):
        places.setdefault(part, []).append(place)
    return {part: tuple(found) for part, found in places.items()}


def find_vision_model(text: str) -> tuple[VisionModel, str] | None:
    """The first (longest) vision model named in the text, with the words that named it."""
    aliases = _alias_patterns()
    held = [place for part, found in _aliases_by_part().items() if part in text for place in found]
    for place in sorted(held):
        _, pattern, model_id = aliases[place]
        match = pattern.search(text)
        if match:
            return load_vision_registry().models[model_id], match.group(0)
    return None


def _int(match: re.Match[str] | None) -> int | None:
    if not match:
        return None
    for group in match.groups():
        if group:
            return int(float(group))
    return None


# How near a model's own height must be to a named class ('720p') to be that model's own reading of it.
OWN_RESOLUTION_TOLERANCE = 0.03


def _resolution(text: str, model: VisionModel | None = None) -> tuple[int, int] | None:
    """The frame a message asks for: 'WxH' as written; a class ('720p', '4k') as `model` itself renders it
    when its own resolution is of that class (Wan 2.2 TI2V 5B's 720P is 1280×704 and CogVideoX's 480p is
    720×480, their model cards), else 16:9 (Wan's 480P, 832×480)."""
    match = _RES.search(text)
    if match:
        return int(match.group(1)), int(match.group(2))
    match = _P_RES.search(text)
    if match:
        named = match.group(2)
        height = (2160 if named == "4k" else 1440) if named else int(match.group(1))
        own = model.height if model is not None and model.width else 0
        if own and abs(own - height) <= OWN_RESOLUTION_TOLERANCE * height:
            assert model is not None
            return model.width, own
        width = {480: 832, 704: 1280}.get(height, height * 16 // 9)
        return width, height
    return None


def _precision(text: str, stated: object) -> Precision | None:
    if _GGUF.search(text):
        return Precision.Q8_0 if re.search(r"q8", text) else Precision.Q4_K_M
    if isinstance(stated, Precision):
        return stated
    return None


def extract_vision(text: str, fields: dict[str, object]) -> VisionJob | None:
    """The vision job a normalised message asks about, or None when it names none.

    `fields` are the general extractor's (card, precision, currency) for the same text.
    """
    found = find_vision_model(text)
    task: VisionTask | None = None
    defaulted: list[str] = []
    if found is None:
        for pattern, model_id, default_task in _TASK_DEFAULTS:
            if pattern.search(text):
                found = (load_vision_registry().models[model_id], pattern.pattern)
                task = default_task
                defaulted.append("model")
                break
    if found is None:
        return None
    model, named = found
    rest = text.replace(named, " ", 1) if named in text else text
    stated = _stated(rest, model, fields, task)
    return VisionJob(model=model.id, defaulted=tuple(defaulted), **stated)


def follow_up_vision(text: str, fields: dict[str, object], previous: VisionJob) -> VisionJob | None:
    """A short follow-up to a vision answer ('3090 呢', 'batch 8?', 'with fp8', '换成 1536x1536') changes
    only what it says; None when it says nothing a vision job has."""
    model = load_vision_registry().models.get(previous.model)
    if model is None:
        return None
    stated = _stated(text, model, fields, None)
    if not stated:
        return None
    kept = previous.said()
    if "card" in stated:
        kept.pop("card_memory_bytes", None)
    if "card_memory_bytes" in stated:
        kept.pop("card", None)
    kept.update(stated)
    kept["model"] = previous.model
    defaulted = tuple(d for d in previous.defaulted if d == "model")
    return VisionJob(**kept, defaulted=defaulted)


def _stated(
    rest: str, model: VisionModel, fields: dict[str, object], task: VisionTask | None
) -> dict[str, object]:
    """What the text says about a job on `model` (only the fields it states)."""
    diffusion = model.family in ("image", "video")
    if _TRAIN.search(rest) and model.family != "embedding":
        task = VisionTask.TRAIN
    elif task is None and model.family in ("vision", "detector", "segment") and _INFER.search(rest):
        task = VisionTask.INFER
    method: TrainMethod | None = None
    if task is VisionTask.TRAIN:
        if _FULL.search(rest):
            method = TrainMethod.FULL
        elif _LORA.search(rest):
            method = TrainMethod.LORA
    values: dict[str, object] = {}
    resolution = _resolution(rest, model)
    if resolution:
        values["width"], values["height"] = resolution
    elif model.family in ("vision", "detector", "segment"):
        side = _int(_IMGSZ.search(rest)) or _int(_BARE_SIDE.search(rest))
        if side:
            values["width"] = values["height"] = side
    elif diffusion:
        side = _int(_IMGSZ.search(rest))
        if side:
            values["width"] = values["height"] = side
    if model.family == "video":
        frames = _int(_FRAMES.search(rest))
        seconds = _SECONDS.search(rest)
        if frames:
            values["frames"] = frames
        elif seconds and model.fps:
            # Wan / HunyuanVideo / CogVideoX count the first frame on top: 5 s at 16 fps is 81 frames.
            values["frames"] = int(float(seconds.group(1)) * model.fps) + 1
    batch = _int(_BATCH.search(rest))
    if batch:
        values["batch"] = batch
    steps = _int(_STEPS.search(rest))
    if steps and diffusion:
        values["steps"] = steps
    items = _ITEMS.search(rest) or _ITEMS_NOUN.search(rest)
    if items:
        count = float(items.group(1).replace(",", "")) * _ITEM_MAGNITUDE.get(items.group(2) or "", 1)
        if count >= 1 and int(count) != batch:
            values["items"] = int(count)
    if model.family == "speech":
        hours = _AUDIO_HOURS.search(rest)
        minutes = _AUDIO_MINUTES.search(rest)
        if hours:
            values["audio_hours"] = float(hours.group(1))
        elif minutes:
            values["audio_hours"] = float(minutes.group(1)) / 60
    if model.family == "embedding":
        tokens = _int(_TOKENS.search(rest)) or (
            fields.get("seq") if isinstance(fields.get("seq"), int) else None
        )
        if tokens:
            values["tokens"] = tokens
    precision = _precision(rest, fields.get("precision"))
    if precision is not None:
        values["precision"] = precision
    runtime = vision_runtime_named_in(rest) if diffusion else None
    if runtime is not None:
        values["runtime"] = runtime.id
    if _OFFLOAD_GROUP.search(rest):
        values["offload"] = Offload.GROUP
    elif _OFFLOAD_SEQ.search(rest):
        values["offload"] = Offload.SEQUENTIAL
    elif _OFFLOAD_PARTIAL.search(rest):
        values["offload"] = Offload.PARTIAL
    elif _OFFLOAD.search(rest) and not (runtime is not None and runtime.auto_offload):
        # "does ComfyUI offload?" asks what the engine does by itself; "with model offload" asks for it
        values["offload"] = Offload.MODEL
    if _TILING.search(rest):
        values["vae_tiling"] = True
    if _GC.search(rest):
        values["grad_checkpointing"] = True
    if task is VisionTask.TRAIN and diffusion and _NO_CACHE.search(rest):
        values["cache_latents"] = False
        values["cache_text"] = False
    host = fields.get("host_memory_bytes")
    if isinstance(host, int) and diffusion:
        values["host_memory_bytes"] = host  # where offloaded weights wait: checked against them
    card = fields.get("card")
    memory = fields.get("card_memory_bytes")
    if isinstance(memory, int) and not card:
        values["card_memory_bytes"] = memory
    gpus = fields.get("gpus") if not batch else None
    for name, value in (
        ("task", task),
        ("method", method),
        ("card", card if isinstance(card, str) else None),
        ("gpus", gpus if isinstance(gpus, int) else None),
        ("currency", fields.get("currency")),
    ):
        if value is not None:
            values[name] = value
    return values
