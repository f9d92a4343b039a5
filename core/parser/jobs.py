"""Readings for the jobs people really run (issue 18): the runtime named and its flags, system RAM and its
kind, what is offloaded, preference / RL training and its generation settings, pure bf16, a launch line.

They run before the general number readers and mask what they read, so '--max-model-len 32768' is a context,
'8 generations per prompt' is not a batch and '4k completions' is a completion length, not 4k samples.
"""

from __future__ import annotations

import re

from core.parser.card_names import mask
from core.parser.numbers import NUMBER_RE, context_tokens
from core.query import Algorithm, Offload
from core.regex_screen import AnyOf, TextPattern, gated
from core.runtimes import load_runtimes

JOB_MARK = "\ue004"  # stands in for a flag or setting already read


def _c(pattern: str) -> TextPattern:
    return gated(pattern)  # no search where the strings every match holds are missing (regex_screen)


_B = r"(?<![a-z0-9_])"
_E = r"(?![a-z0-9_])"

_FSDP = _c(rf"{_B}fsdp2?{_E}")

# -- serving and llama.cpp flags -----------------------------------------------------------------------
_CTX = rf"(?P<num>{NUMBER_RE})\s*(?P<unit>k|m)?{_E}"
_SEQ_FLAGS = (
    _c(rf"--max[-_]model[-_]len(?:\s*=\s*|\s+){_CTX}"),
    _c(rf"--context[-_]length(?:\s*=\s*|\s+){_CTX}"),
    _c(rf"--ctx[-_]size(?:\s*=\s*|\s+){_CTX}"),
    _c(rf"{_B}num_ctx(?:\s*=\s*|\s*:\s*|\s+){_CTX}"),
    _c(rf"ollama_context_length\s*=\s*{_CTX}"),
    _c(rf"(?<![a-z0-9-])-c\s+{_CTX}"),
)
_GPU_UTIL = _c(r"--gpu[-_]memory[-_]utilization(?:\s*=\s*|\s+)(?P<v>0?\.\d+|1(?:\.0+)?)")
# SGLang's --mem-fraction-static; LMDeploy's --cache-max-entry-count (its share of what the weights leave)
_MEM_FRACTION = _c(
    r"(?:--mem[-_]fraction[-_]static|-?-?cache[-_]max[-_]entry[-_]count)(?:\s*=\s*|\s+)(?P<v>0?\.\d+)"
)
_TP = _c(
    r"(?:--tensor[-_]parallel[-_]size|--tp[-_]size|--tp|(?<![a-z0-9-])-tp)(?:\s*=\s*|\s+)(?P<n>\d{1,3})(?!\d)"
)
# A parallel layout named in words or by Megatron's / vLLM's flags ('TP8 PP4', 'tp=4 pp=2', 'TP 2 × PP 4',
# '张量并行8 流水线并行4', '--tensor-model-parallel-size 4', '--pipeline-parallel-size 2', 'DP 16')
_SIZE = r"(?:[\s_-]*(?:size|degree|度|数))?\s*(?:=|:|为|是|of)?\s*(?P<n>\d{1,4})(?![\d.])"
_TP_NAMED = _c(
    r"(?:--tensor[-_]model[-_]parallel[-_]size|tensor[\s_-]*(?:model[\s_-]*)?parallel(?:ism)?"
    rf"|张量并行|(?<![a-z0-9]){'tp'}(?=[\s_=:\d-])){_SIZE}"
)
_PP_NAMED = _c(
    r"(?:--pipeline[-_](?:model[-_])?parallel[-_]size|pipeline[\s_-]*(?:model[\s_-]*)?parallel(?:ism)?"
    rf"|流水线并行|流水并行|(?<![a-z0-9]){'pp'}(?=[\s_=:\d-])){_SIZE}"
)
_DP_NAMED = _c(
    rf"(?:--data[-_]parallel[-_]size|data[\s_-]*parallel(?:ism)?|数据并行|(?<![a-z0-9]){'dp'}(?=[\s_=:\d-])){_SIZE}"
)
_EP = _c(r"--enable[-_]expert[-_]parallel|(?<![a-z0-9-])-ep(?![a-z0-9])|expert[\s_-]*parallel|专家并行")
_NGL = _c(
    rf"(?:(?<![a-z0-9-])-ngl|--n[-_]gpu[-_]layers|--gpu[-_]layers|{_B}num_gpu)(?:\s*=\s*|\s+)(?P<n>\d{{1,3}})(?!\d)"
)
# llama.cpp's --n-cpu-moe N: "keep the Mixture of Experts (MoE) weights of the first N layers in the CPU"
_CPU_MOE_COUNT = _c(r"(?:--n[-_]cpu[-_]moe|(?<![a-z0-9-])-ncmoe)(?:\s*=\s*|\s+)?(?P<n>\d{1,3})(?!\d)")
# vLLM's --cpu-offload-gb N: N GiB of each GPU's weights kept in host memory (vllm/config/cache.py)
_CPU_OFFLOAD_GB = _c(
    r"(?:--cpu[-_]offload[-_]gb|cpu_offload_gb)(?:\s*=\s*|\s+)(?P<n>\d{1,5}(?:\.\d+)?)(?![\d.])"
)
# the requests an engine serves at once: Ollama's OLLAMA_NUM_PARALLEL, llama-server's -np / --parallel
_PARALLEL = _c(
    rf"(?:ollama_num_parallel|{_B}num_parallel|(?<![a-z0-9-])-np|(?<![a-z0-9-])--parallel)(?:\s*=\s*|\s+)(?P<n>\d{{1,4}})(?!\d)"
)
_KV_DTYPE = _c(
    r"(?:--kv[-_]cache[-_]dtype|ollama_kv_cache_type|--cache[-_]type[-_][kv]|(?<![a-z0-9-])-ct[kv]|kv[\s_-]*cache"
    r"(?:\s*(?:用|dtype|type|类型|量化|量化成|in|as))?)(?:\s*=\s*|\s+|\s*:\s*)?(?P<d>fp8(?:_e4m3|_e5m2)?|q8_0|q4_0|f16|fp16|bf16|auto)"
)

# -- offload --------------------------------------------------------------------------------------------
_EXPERTS_OFF = _c(
    # '--n-cpu-moe' without its count is the flag a user tunes: the plan picks how many layers' experts stay
    # in RAM (core/jobs/offload.py fills the card first); with the count ('--n-cpu-moe 36') it is the user's
    r"exps\s*=\s*cpu|--n[-_]cpu[-_]moe\s*=?\s*\d|--cpu[-_]moe|(?<![a-z0-9-])-cmoe(?![a-z])"
    r"|(?<![a-z0-9-])-ncmoe\s*=?\s*\d|override[-_]tensor|(?<![a-z0-9-])-ot(?![a-z])"
    r"|专家.{0,6}(?:放|卸载|offload|留|在).{0,4}(?:内存|cpu|ram)|experts?\s+(?:in|on|to)\s+(?:system\s+)?(?:ram|cpu|memory)"
)
_NVME = _c(r"nvme|zero[\s_-]*infinity")
_NO_OFFLOAD = _c(
    r"(?<!vs )(?<!versus )(?<!than )(?:不用|不开|不要|关闭|关掉|没有|without|no|disable)\s*(?:cpu\s*)?offload"
    r"|offload\s*(?:off|=\s*false)"
)
_OFFLOAD = _c(r"offload|卸载|放到?内存|放一部分到内存|放到cpu")
_OPTIMIZER_OFF = _c(
    r"optimi[sz]er[\s_-]*offload|offload[\s_-]*optimi[sz]er|zero[\s_-]*offload|优化器.{0,4}(?:卸载|offload)"
)
_PARAM_OFF = _c(r"param(?:eter)?s?[\s_-]*offload|offload[\s_-]*param|参数.{0,6}(?:卸载|offload)")

# -- host memory ----------------------------------------------------------------------------------------
_RAM_WORD = (
    r"(?:(?:system|host|cpu)\s+ram|ram|内存|(?:system|host|cpu)\s+memory|系统内存|dram|ddr[45](?:[\s-]*\d{4})?"
    r"|memory\s+ram)"
)
# a size the RAM is changed to ('内存加到 64g', 'RAM upgraded to 128GB'): a follow-up's new RAM
_RAM_CHANGED_TO = (
    r"(?:加到|升到|升级到|扩到|扩容到|增加到|加成|换成|改成|变成"
    r"|upgraded\s+to|increased\s+to|bumped\s+to|raised\s+to)"
)
_HOST_RAM = (
    _c(rf"(?<![a-z0-9.])(?P<num>\d{{1,4}})\s*(?:gb|gib|g|t|tb)\s*(?:的|of)?\s*{_RAM_WORD}"),
    _c(
        rf"{_RAM_WORD}\s*(?:是|有|为|:|=|{_RAM_CHANGED_TO})?\s*(?:只有|才)?\s*(?P<num>\d{{1,4}})\s*(?:gb|gib|g|t|tb)"
        r"(?![a-z0-9])"
    ),
)
_DDR = _c(r"ddr\s*([45])")
# No GPU at all: the job runs on the CPU and system RAM ('纯CPU', '没有显卡', 'CPU only', 'no GPU'); a card
# named beside it still gets its answer for the card. Not '-ot exps=CPU' / 'experts on the CPU' (a split).
_CPU_ONLY = _c(
    r"(?<![a-z])cpu[\s_-]*only(?![a-z])|(?<![a-z])(?:only|just)\s+(?:a\s+|the\s+|my\s+)?cpus?(?![a-z])|"
    r"(?<![a-z])no\s+(?:dedicated\s+|discrete\s+)?(?:gpus?|graphics\s+cards?|video\s+cards?)(?![a-z])|"
    r"without\s+(?:a\s+|any\s+)?(?:dedicated\s+|discrete\s+)?(?:gpus?|graphics\s+cards?)(?![a-z])|"
    r"(?:don'?\s?t|do\s+not)\s+have\s+(?:a\s+|any\s+)?(?:gpus?|graphics\s+cards?)(?![a-z])|"
    r"纯\s*cpu|只有\s*cpu|只用\s*cpu|仅用?\s*cpu|光用\s*cpu|cpu\s*推理|"
    r"(?:没有|没|无|不用)\s*(?:独立)?(?:显卡|gpu|独显)"
)
_CHANNELS = _c(r"(双|四|八|十二|\d{1,2})\s*通道|(dual|quad|\d{1,2})[\s-]*channel")
_CHANNEL_WORDS = {"双": 2, "四": 4, "八": 8, "十二": 12, "dual": 2, "quad": 4}

# -- preference and RL ----------------------------------------------------------------------------------
_ALGORITHMS: tuple[tuple[TextPattern, Algorithm], ...] = (
    (_c(rf"{_B}grpo{_E}|{_B}dapo{_E}"), Algorithm.GRPO),
    (_c(rf"{_B}ppo{_E}|{_B}rlhf{_E}(?!.{{0,20}}(?:dpo|grpo))"), Algorithm.PPO),
    (_c(rf"{_B}orpo{_E}"), Algorithm.ORPO),
    (_c(rf"{_B}simpo{_E}|{_B}cpo{_E}"), Algorithm.SIMPO),
    (_c(rf"{_B}kto{_E}"), Algorithm.KTO),
    (
        _c(rf"{_B}dpo{_E}|偏好(?:训练|优化|对齐)|preference\s+(?:training|optimi[sz]ation|tuning)"),
        Algorithm.DPO,
    ),
)
_GENERATIONS = (
    _c(r"num_generations\s*(?:=|:)?\s*(?P<n>\d{1,4})"),
    _c(
        r"(?<![a-z0-9.])(?P<n>\d{1,4})\s*(?:generations|completions|samples|rollouts|responses|answers)\s*(?:per|each|/|a)\s*(?:prompt|question)"
    ),
    _c(
        r"(?:每个|每条|每道)\s*(?:prompt|问题|提示|题)\s*(?:生成|采样|出)?\s*(?P<n>\d{1,4})\s*(?:个|条|次)?(?:回答|回复|生成|输出|样本|completion|response)?"
    ),
    _c(r"(?:group[\s_-]*size|rollout\.n|(?<![a-z])n)\s*=\s*(?P<n>\d{1,4})(?!\d)"),
    # with RL named: '6 generations, 512-token completions' (a count of them, not a length: no 'token' before)
    _c(r"(?<![a-z0-9.-])(?P<n>\d{1,4})\s*(?:generations|rollouts|samples)(?![a-z])"),
    _c(r"(?P<n>\d{1,4})\s*(?:个|条)\s*(?:回答|回复|采样|生成)"),
)
_COMPLETION = (
    _c(rf"max_completion_length\s*(?:=|:)?\s*{_CTX}"),
    _c(rf"response_length\s*(?:=|:)?\s*{_CTX}"),
    _c(rf"(?:回答|回复)\s*(?:长度|最长|最大长度)\s*(?:改成|改为|设为|是|为|=)?\s*{_CTX}"),
    _c(
        rf"(?<![a-z0-9.]){_CTX[: -len(_E)]}[\s-]*(?:tokens?[\s-]+)?"
        rf"(?:completions?|responses?|generations?)(?:\s+length)?{_E}"
    ),
    _c(rf"(?:completions?|responses?|generations?)\s*(?:length|len|of|up\s+to)?\s*(?:=|:)?\s*{_CTX}"),
    _c(rf"(?:回答|回复|生成|输出)\s*(?:长度|最长|最大长度)?\s*(?:改成|改为|设为|是|为|=)?\s*{_CTX}"),
    # the length said of each one: '生成 4 条，每条 512 token', '8 generations of 1024 tokens' (the count is
    # read first and stands as JOB_MARK)
    _c(
        rf"(?:每条|每个回答|每个回复|each)\s*(?:回答|回复|生成|输出|one)?\s*(?:长度|最长)?\s*(?:约|大约|about|of)?\s*"
        rf"{_CTX[: -len(_E)]}\s*(?:个\s*)?tokens?{_E}"
    ),
    _c(rf"{JOB_MARK}\s*(?:of|,|，)\s*{_CTX[: -len(_E)]}[\s-]*tokens?{_E}"),
)
_CHANGE = _c(r"(?:改成|改为|换成|变成|调到|设成|设为)\s*\d|(?:make\s+it|change\s+to|switch\s+to)\s+\d")
_ROLLOUT_SEPARATE = _c(
    r"rollout.{0,10}(?:单独|独立|separate|dedicated|own)|(?:单独|独立|separate|dedicated).{0,10}(?:rollout|推理卡|生成卡)"
    r"|vllm[\s_-]*mode\s*=\s*server|trl\s+vllm-serve"
)
_ROLLOUT_COLOCATED = _c(r"共卡|共用|colocat|同卡|hybrid[\s_-]*engine|colocate_all")

# -- precision as people set it -------------------------------------------------------------------------
_PURE_BF16 = _c(
    r"pure[\s_-]*bf16|纯\s*bf16|纯\s*bfloat16|全\s*bf16|bf16\s*(?:优化器|optimizer\s+states?)|"
    r"(?:no|without|不要|不用|没有|去掉)\s*(?:fp32|32位)\s*(?:master|主)\s*(?:weights?|权重|副本)?"
)

_CHUNKED_LOSS = _c(
    r"{_B}liger{_E}|chunked[\s_-]*(?:loss|cross|ce)|fused[\s_-]*(?:linear[\s_-]*)?(?:cross|ce|loss)|cut[\s_-]*cross"
    r"|分块(?:loss|损失|交叉熵)|融合(?:交叉熵|loss)".replace("{_B}", _B).replace("{_E}", _E)
)
_OFFLOADED_CHECKPOINTS = _c(
    r"offload(?:ed)?[\s_-]*(?:gradient[\s_-]*)?checkpoint|activation[\s_-]*offload|激活.{0,4}(?:卸载|offload)"
    r"|use_gradient_checkpointing\s*=\s*.?unsloth"
)

# -- sequence parallelism (DeepSpeed Ulysses, ring attention: 360-LLaMA-Factory, ms-swift, Megatron CP) ---
_SP_DEGREE = _c(
    r"(?:sequence[\s_-]*parallel(?:[\s_-]*(?:size|degree))?|ulysses(?:[\s_-]*(?:degree|size))?|sp[_-]size"
    r"|context[\s_-]*parallel(?:[\s_-]*size)?|序列并行(?:度|数)?)\s*(?:=|:|为|是)?\s*(?P<n>\d{1,3})(?![\d.])"
)
_SP_WORDS = _c(
    r"sequence[\s_-]*parallel|ulysses|ring[\s_-]*(?:flash[\s_-]*)?attn|ring[\s_-]*attention"
    r"|context[\s_-]*parallel|序列并行|上下文并行"
)

# -- the launch line ------------------------------------------------------------------------------------
_LAUNCH = _c(
    r"^\s*/cmd\b|启动命令|运行命令|命令怎么写|命令行|给我.{0,6}命令|launch\s+(?:line|command)|"
    r"(?:the|a|give\s+me\s+the|what'?s\s+the|show\s+me\s+the)\s+(?:\w+\s+)?(?:command|cli\s+line)|command\s+(?:to|for)|"
    r"(?<![a-z])command(?![a-z])|(?<![a-z])(?:cmd)(?![a-z])|配置文件|(?:给我|写|来)一?个?.{0,20}配置|ds_config|deepspeed\s+config"
)


# '显存 16g 内存…': the size belongs to the card ('8g显存 16g内存': the 显存 before it is the card's word)
_VRAM_JUST_BEFORE = re.compile(r"显存\s*$")
_CARD_SIZE_BEFORE = re.compile(r"\d\s*(?:gb|gib|g)\s*显存\s*$")


def _host_ram(text: str) -> int | None:
    for pattern in _HOST_RAM:
        for match in pattern.finditer(text):
            before = text[: match.start()]
            if _VRAM_JUST_BEFORE.search(before) and not _CARD_SIZE_BEFORE.search(before):
                continue
            value = int(match.group("num"))
            unit = text[match.start("num") + len(match.group("num")) : match.end()].strip()
            scale = 1000**4 if unit.startswith("t") else 1000**3
            if 4 <= value <= 64_000 or unit.startswith("t"):
                return value * scale
            break
    return None


_BARE_RAM = _c(r"(?<![a-z0-9.])(?P<num>\d{1,4})\s*(?P<unit>gb|gib|g|tb|t)(?![a-z0-9])")


def read_host_memory(text: str, *, bare_size: bool = False) -> dict[str, object]:
    """System RAM, its DDR generation and channels in normalized text ('64g ddr5 双通道', '128GB RAM, quad
    channel'); `bare_size` reads a size without a RAM word too (the checklist's RAM step asks for it)."""
    fields: dict[str, object] = {}
    host = _host_ram(text)
    if host is None and bare_size:
        match = _BARE_RAM.search(text)
        if match and 4 <= int(match.group("num")) <= 64_000:
            scale = 1000**4 if match.group("unit").startswith("t") else 1000**3
            host = int(match.group("num")) * scale
    if host is not None:
        fields["host_memory_bytes"] = host
    ddr = _DDR.search(text)
    if ddr:
        fields["host_memory_type"] = f"ddr{ddr.group(1)}"
    channels = _channels(text)
    if channels:
        fields["host_memory_channels"] = channels
    return fields


def _channels(text: str) -> int | None:
    match = _CHANNELS.search(text)
    if not match:
        return None
    word = match.group(1) or match.group(2)
    return _CHANNEL_WORDS.get(word) or (int(word) if word.isdigit() else None)


def read_jobs(text: str, fields: dict[str, object]) -> str:
    """Fill `fields` with issue 18's readings of `text`; returns the text with flags and settings masked."""

    def take(pattern: TextPattern) -> re.Match[str] | None:
        """The first match, masked at once so later readers do not read it again."""
        nonlocal text
        match = pattern.search(text)
        if match:
            text = mask(text, [m.span() for m in pattern.finditer(text)], JOB_MARK)
        return match

    named = load_runtimes().named_in(
        text
    )  # the profiles' words (data/runtimes.toml), before flags are masked
    if named is not None:
        fields["runtime"] = named.id
    if not _JOB_READINGS.holds(text):  # none of the flags and settings below is said: nothing to mask
        fields.update(read_host_memory(text))
        return text
    if _FSDP.search(text):
        fields["zero_stage"] = 3
    for pattern in _SEQ_FLAGS:
        match = take(pattern)
        if match:
            value = context_tokens(match.group("num"), match.group("unit"))
            if 16 <= value <= 10_000_000:
                fields["seq"] = value
            break
    util = take(_GPU_UTIL) or take(_MEM_FRACTION)
    if util and 0 < float(util.group("v")) <= 1:
        fields["gpu_memory_utilization"] = float(util.group("v"))
    tp = take(_TP)
    if tp and 1 <= int(tp.group("n")) <= 512:
        fields["gpus"] = int(tp.group("n"))
        fields["tensor_parallel"] = int(tp.group("n"))
    for pattern, name in (
        (_TP_NAMED, "tensor_parallel"),
        (_PP_NAMED, "pipeline_parallel"),
        (_DP_NAMED, "data_parallel"),
    ):
        size = take(pattern)
        if size and 1 <= int(size.group("n")) <= 4096 and name not in fields:
            fields[name] = int(size.group("n"))
    if _EP.search(text):
        fields["expert_parallel"] = True
    ngl = take(_NGL)
    if ngl:
        fields["gpu_layers"] = int(ngl.group("n"))
        fields["offload"] = Offload.LAYERS
    cpu_moe = _CPU_MOE_COUNT.search(text)  # not masked: the offload reading below reads the flag too
    if cpu_moe:
        fields["cpu_moe_layers"] = int(cpu_moe.group("n"))
    weights_off = take(_CPU_OFFLOAD_GB)
    if weights_off and float(weights_off.group("n")) > 0:
        fields["cpu_offload_gb"] = float(weights_off.group("n"))
    slots = take(_PARALLEL)
    if slots and int(slots.group("n")) >= 1:
        fields["parallel"] = int(slots.group("n"))
    kv = take(_KV_DTYPE)
    if kv:
        dtype = kv.group("d")
        if dtype != "auto":
            spelled = {"f16": "fp16", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8"}
            fields["kv_cache_dtype"] = spelled.get(dtype, dtype)
    _read_offload(text, fields)
    if fields.get("offload") in (Offload.NVME, Offload.PARAMS):
        fields.setdefault("zero_stage", 3)  # only ZeRO-3 offloads parameters (DeepSpeed config-json)
    if take(_CPU_ONLY):  # masked: 'no GPU, 16GB RAM' names no card count nor card memory
        fields["cpu_only"] = True
    fields.update(read_host_memory(text))
    for pattern, algorithm in _ALGORITHMS:
        if pattern.search(text):
            fields["algorithm"] = algorithm
            break
    # generations and completion lengths in words only for RL ('1 million responses of 500 tokens' to
    # serve is a batch of requests); the trainers' own flags always
    rl_said = "algorithm" in fields
    # 'N per prompt' is RL's however said; a bare 'N个生成' only with RL named, or as a follow-up's change
    # ('改成16个生成呢' after a GRPO question)
    generations = _GENERATIONS if rl_said or _CHANGE.search(text) else _GENERATIONS[:3]
    for pattern in generations:
        match = take(pattern)
        if match and 1 <= int(match.group("n")) <= 1024:
            fields["num_generations"] = int(match.group("n"))
            break
    # a follow-up of an RL question that changes its generations changes its completions the same way
    for pattern in _COMPLETION if rl_said or "num_generations" in fields else _COMPLETION[:3]:
        match = pattern.search(text)
        if match:
            value = context_tokens(match.group("num"), match.group("unit"))
            if 16 <= value <= 1_000_000:
                fields["completion_tokens"] = value
                text = mask(text, [match.span()], JOB_MARK)
                break
    if _ROLLOUT_SEPARATE.search(text):
        fields["rollout"] = "separate"
    elif _ROLLOUT_COLOCATED.search(text):
        fields["rollout"] = "colocated"
    sp = take(_SP_DEGREE)
    if sp and 1 <= int(sp.group("n")) <= 4096:
        fields["sequence_parallel"] = int(sp.group("n"))
    elif _SP_WORDS.search(text):
        fields["sequence_parallel"] = 0  # over all the job's cards (core/estimator/memory.py)
    if _PURE_BF16.search(text):
        fields["master_weights"] = False
    if _CHUNKED_LOSS.search(text):
        fields["chunked_loss"] = True
    if _OFFLOADED_CHECKPOINTS.search(text):
        fields["offload_activations"] = True
    if _LAUNCH.search(text):
        fields["launch"] = True
    return text


# What is offloaded, the first that the words say (no offload, MoE experts, NVMe, parameters, the optimizer)
_OFFLOAD_KINDS: tuple[tuple[TextPattern, Offload], ...] = (
    (_NO_OFFLOAD, Offload.NONE),
    (_EXPERTS_OFF, Offload.EXPERTS),
    (_NVME, Offload.NVME),
    (_PARAM_OFF, Offload.PARAMS),
    (_OPTIMIZER_OFF, Offload.OPTIMIZER),
)


# every pattern read_jobs and _read_offload read (tests/test_regex_screen.py checks that none is missing):
# most messages say none of these flags, and one scan says so
_JOB_READINGS = AnyOf(
    _FSDP, _SEQ_FLAGS, _GPU_UTIL, _MEM_FRACTION, _TP, _TP_NAMED, _PP_NAMED, _DP_NAMED, _EP, _NGL,
    _CPU_OFFLOAD_GB, _CPU_MOE_COUNT, _PARALLEL,
    _KV_DTYPE, _OFFLOAD_KINDS, _OFFLOAD, _CPU_ONLY, _ALGORITHMS, _GENERATIONS, _CHANGE, _COMPLETION,
    _ROLLOUT_SEPARATE, _ROLLOUT_COLOCATED, _SP_DEGREE, _SP_WORDS, _PURE_BF16, _CHUNKED_LOSS,
    _OFFLOADED_CHECKPOINTS, _LAUNCH,
)  # fmt: skip


def _read_offload(text: str, fields: dict[str, object]) -> None:
    for pattern, kind in _OFFLOAD_KINDS:
        if pattern.search(text):
            fields["offload"] = kind
            return
    if _OFFLOAD.search(text) and "offload" not in fields:
        fields["offload_said"] = True
