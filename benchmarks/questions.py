"""The 200 benchmark questions: what people actually type, about half in Chinese, every answer kind.

Each question has a category (what the benchmark reports it under) and, for follow-ups, the chat's previous
question as a Query (what the session store would hand `bot.answer.answer`). The categories are the writer's
intent, not the parser's verdict: the benchmark reports the answer kind core actually chose beside them.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.query import Method, Precision, Query, Task


@dataclass(frozen=True)
class Question:
    text: str
    category: str
    previous: Query | None = None

    @property
    def lang(self) -> str:
        return "zh" if any("\u3400" <= ch <= "\u9fff" for ch in self.text) else "en"


FIT_WITH_CARD = (
    "can a 4090 run llama 2 13b?",
    "Will Llama-3-70B-Instruct fit on 2x A100 80GB in bf16?",
    "full finetune llama3.1 8b on a single h100, seq len 4096, batch size 8",
    "serve qwen2.5 72b with vllm on 4 L40S, 32k context",
    "LoRA fine-tune 7B, rank 8, on an RTX 3090?",
    "deploy deepseek-r1-distill-llama-8b on a T4",
    "gemma 3 27b fp8 on one H100, 20 concurrent users",
    "run phi-4 on a 3060 12gb with gguf q4_k_m",
    "fine tune qwen2.5-7b-instruct with lora r=16 on 2 x a10g",
    "dual 3090 enough for llama 2 70b gptq?",
    "QLoRA 70B on one A6000, possible? gradient checkpointing on",
    "how many A100 40GB do I need to serve llama 3.1 70b at fp16?",
    "8xH100 full fine-tune of llama 3 70b with deepspeed zero 3",
    "Llama 3.1 405B FP8 on 8x H100 SXM, does it fit?",
    "can i host llama3 8b on an rtx 4060 ti 16gb",
    "mixtral 8x7b inference on two a100 80gb",
    "pretrain a 1B model from scratch on 500M tokens with 8 4090s",
    "training a 7b from scratch on 1T tokens, 64 H100s, how long?",
    "would 4x RTX 6000 Ada handle qwen2.5 72b bf16 inference",
    "70b on a 48GB GPU with nf4?",
    "mistral 7b inference on a t4 with 8k context",
    "qwen3 32b int4 on a 5090",
    "gpt-oss-120b on a single h100?",
    "llama 2 7b fp32 inference on a V100 16GB",
    "MI300X x8 for deepseek v3 at fp8",
    "4090能跑llama2 13b吗",
    "一张4090能不能跑qwen2.5-7b？",
    "两张4090跑qwen2.5 72b int4够不够",
    "想在A100 80G上全参微调llama3 8b，显存够吗",
    "qwen2.5-14b 用vllm部署，32k上下文，单卡L40S行不行",
    "3090 24G 能 qlora 微调 qwen2.5 32b 吗？",
    "deepseek r1 distill 32b 4bit量化 单卡4090能跑吗",
    "满血版deepseek v3推理需要几张H20",
    "deepseek r1 671b fp8 8张H200够吗",
    "8卡A800 预训练 70亿模型 2T tokens 要多久",
    "glm4 9b 推理 单卡A10够吗",
    "baichuan2-13b lora微调 秩16 3090够吗",
    "gemma2 27b bf16 推理 单卡H100 够不够？",
    "用910B跑qwen2.5 72b推理可以吗",
    "llama2 70b 量化后 两张4090 能跑不",
    "部署qwen3 30b a3b，int4，并发50，L20行吗",
    "7B 全参微调 zero3 8卡A100 40G",
    "14b的模型 qlora 单卡 3090 能不能训",
    "Qwen2.5-32B-Instruct AWQ 用vllm跑 单卡4090 上下文8k",
    "GGUF Q4_K_M 的 qwen2.5 14b，3060 12G能跑吗",
    "4张L40S 微调72b qlora行么",
    "5090 32G 跑 qwen3 32b 推理 q4",
    "mi300x 单卡 能装下 llama 3.1 70b fp16 吗",
    "4090 fine tune qwen 2.5 7b qlora，bs=2，开梯度检查点",
    "qwen2.5 7b 推理，20个用户同时用，4090够不",
)

FIT_WITHOUT_CARD = (
    "how much vram to fine-tune mistral 7b with qlora",
    "13B model inference, how much memory?",
    "what GPU do I need to run a 70b model in 4bit",
    "vram needed for 7 billion parameter model in half precision",
    "how much memory does deepseek coder 33b need for inference in int4",
    "mixtral-8x22b inference, how many h100?",
    "qwen2.5 14b int8 inference memory",
    "full fine-tune llama 3.1 8b, bs 4, seq 2048: how much vram",
    "lora fine-tune qwen2.5 32b rank 64 memory",
    "llama 3.1 405b inference at fp8, how much memory",
    "serve llama-3.1-8b, 50 concurrent requests, 8k context, which gpu",
    "qwen3 235b a22b fp8 inference memory",
    "gemma 2 9b qlora memory",
    "phi-3 mini inference at bf16",
    "yi 34b fp16 inference needs how much vram",
    "7b模型lora微调要多少显存",
    "130亿参数的模型推理需要什么卡",
    "六十五亿的模型fp16推理显存多少",
    "32B模型，推理，int8，需要多少G显存",
    "请问72b的模型用fp16推理需要几张80G的卡",
    "百川2 13b 推理要多少显存",
    "phi-3 mini 本地跑要多少显存",
    "qwen3-235b-a22b fp8 推理要几张H20？",
    "70亿参数模型 int4 推理 显存多少",
    "q5_k_m量化的llama3 70b 要多大显存",
    "ollama 跑 deepseek-r1:14b 要什么显卡",
    "通义千问72B部署需要多大显存？",
    "我想用lora微调一下qwen3-14b，大概需要多大显存",
    "13b模型，全参微调，需要多少显存",
    "chatglm3-6b qlora 微调显存",
)

FINETUNE_SIDE_BY_SIDE = (
    "fine-tune llama 3.1 8b on a 4090",
    "finetune qwen2.5 7b on an a100 40gb",
    "fine-tune mistral 7b",
    "I want to fine-tune qwen2.5 14b on two 3090s",
    "fine tune gemma 2 9b on an L4",
    "fine-tune a 13b model on an A6000",
    "fine-tune llama 3 70b on 8 a100s",
    "finetune phi-4 on a 4090",
    "fine-tune qwen3 8b, seq 4096",
    "fine-tune deepseek r1 distill qwen 7b on a 3090",
    "千问2.5-7B 微调 用啥卡",
    "微调 qwen2.5 14b 需要什么卡",
    "4090 微调 llama3 8b",
    "想微调一个13b的模型，A100 80G",
    "微调 glm4 9b 要多少显存",
    "两张4090 微调 qwen2.5 32b",
    "微调 yi 34b，8卡A800",
    "baichuan2 7b 微调 3090 行吗",
    "微调 internlm2.5 7b 用什么卡",
    "qwen3 14b 微调，单卡H100",
)

CARD_FACTS = (
    "tell me about the H100",
    "rtx 4090 specs",
    "what is the H20?",
    "A100 80GB memory bandwidth",
    "L40S price per hour",
    "what can an RTX 3090 run?",
    "MI300X info",
    "how fast is the L4",
    "rtx 5090 details",
    "tell me about the A10G",
    "4090显存多大",
    "H20怎么样",
    "A800 80G 价格多少钱",
    "L40S 规格",
    "910B 算力多少",
    "3090 能跑什么",
    "H200 显存多少",
    "A6000 带宽多少",
    "4060ti 16g 适合做什么",
    "V100 32G 还值得租吗",
)

COMPARE = (
    "4090 vs a100",
    "H100 or H200 for inference?",
    "compare L40S and A100 80GB",
    "3090 vs 4090 vs 5090",
    "A6000 vs RTX 6000 Ada",
    "H20 vs H100",
    "MI300X vs H100",
    "T4 vs L4",
    "compare a10g and l4 for llama 3 8b",
    "4090 vs a100 for qwen2.5 14b lora",
    "4090和A100哪个好",
    "H800和H100有什么区别",
    "L20 对比 L40S",
    "3090和4090哪个更划算",
    "A800 vs H800",
    "H20 和 910B 对比",
    "4090 对比 5090 跑 qwen2.5 32b",
    "A100 40G和80G 区别",
    "V100 和 T4 对比",
    "H100 H200 B200 对比",
)

FAQ_AND_OTHER = (
    "Why is bigger VRAM so much more expensive?",
    "what matters more, vram or the card model?",
    "can I upgrade the vram later?",
    "why does memory bandwidth matter?",
    "how do I estimate how much vram a model needs?",
    "rule of thumb for vram per billion parameters",
    "which gpu for production inference with high traffic",
    "I'm a student learning LLMs, which card should I rent?",
    "what card for pretraining a foundation model",
    "what gpu for stable diffusion",
    "what can you do?",
    "hello",
    "asdf qwerty",
    "显存越大为什么越贵",
    "显存和卡型哪个更重要",
    "显存不够以后能不能升级",
    "带宽有什么用",
    "显存怎么估算",
    "每10亿参数需要多少显存",
    "线上高并发推理选什么卡",
    "学生党入门学习大模型租什么卡",
    "预训练基座模型用什么卡",
    "跑stable diffusion用什么卡",
    "你能做什么",
    "你好",
    "？？？",
    "怎么用",
    "最便宜能跑llama3 70b的卡是哪个",
    "cheapest card to serve qwen2.5 32b",
    "budget 2000 usd, fine-tune llama 3 8b lora, recommend a card",
)

PLAN = (
    "cheapest way to run llama 3.1 70b",
    "best value gpu for qwen2.5 32b inference",
    "which card should I rent to fine-tune mistral 7b with lora",
    "recommend a setup for serving deepseek r1 distill 32b",
    "what should I rent for full fine-tuning of qwen2.5 7b",
    "跑qwen2.5 72b推理，最划算的方案",
    "预算有限，微调llama3 8b租什么卡",
    "部署deepseek r1 distill 14b 推荐什么卡",
    "全参微调qwen2.5 14b 性价比最高的配置",
    "qwen3 32b 推理 最便宜租什么",
)

_PREV_INFER = Query(task=Task.INFERENCE, model="qwen2.5-7b", card="rtx-4090")
_PREV_FT = Query(task=Task.FINETUNE, method=Method.LORA, model="llama-3.1-8b", card="rtx-3090")
_PREV_70B = Query(task=Task.INFERENCE, model="llama-3.1-70b", precision=Precision.BF16, card="a100-80gb-sxm")
_PREV_ZH = Query(task=Task.INFERENCE, model="qwen2.5-72b", card="h20", gpus=2)
_PREV_FULL = Query(task=Task.FINETUNE, method=Method.FULL, params_b=7.0, card="a100-80gb-sxm")

FOLLOW_UPS = (
    ("what about qwen 2.5 14b?", _PREV_INFER),
    ("and on an a100?", _PREV_INFER),
    ("with 32k context?", _PREV_INFER),
    ("what about int4?", _PREV_70B),
    ("and with two of them?", _PREV_70B),
    ("what if I use qlora instead?", _PREV_FT),
    ("how about on an h100", _PREV_FT),
    ("batch size 8?", _PREV_FT),
    ("same for llama 3.1 70b", _PREV_FT),
    ("what about 4 cards", _PREV_FULL),
    ("那换成H100呢", _PREV_ZH),
    ("四张呢", _PREV_ZH),
    ("换成int4呢", _PREV_ZH),
    ("上下文32k呢", _PREV_INFER),
    ("那qwen2.5 14b呢", _PREV_INFER),
    ("改成qlora呢", _PREV_FT),
    ("换成A100呢", _PREV_FT),
    ("如果用lora呢", _PREV_FULL),
    ("8张卡要多久", _PREV_FULL),
    ("最便宜的方案呢", _PREV_70B),
)


def all_questions() -> list[Question]:
    """The 200 questions in a fixed, interleaved order (categories mixed, as a bot sees them)."""
    groups: list[list[Question]] = [
        [Question(t, "fit_with_card") for t in FIT_WITH_CARD],
        [Question(t, "fit_without_card") for t in FIT_WITHOUT_CARD],
        [Question(t, "finetune_side_by_side") for t in FINETUNE_SIDE_BY_SIDE],
        [Question(t, "card_facts") for t in CARD_FACTS],
        [Question(t, "compare") for t in COMPARE],
        [Question(t, "faq_scenario_help") for t in FAQ_AND_OTHER],
        [Question(t, "plan") for t in PLAN],
        [Question(t, "follow_up", previous) for t, previous in FOLLOW_UPS],
    ]
    mixed: list[Question] = []
    longest = max(len(g) for g in groups)
    for index in range(longest):
        mixed.extend(group[index] for group in groups if index < len(group))
    return mixed


QUESTIONS = all_questions()
assert len(QUESTIONS) == 200, len(QUESTIONS)


# -- a question new to the process for every user (benchmark 5) ----------------------------------------------

_TYPED_CARDS = (
    "4090", "3090", "5090", "A100 80GB", "A100 40GB", "H100", "H200", "L40S", "L4", "T4", "A10G", "A6000",
    "H20", "A800", "910B", "MI300X", "V100 32GB", "3060 12GB", "4060 Ti 16GB", "RTX 6000 Ada", "L20", "B200",
    "A40", "2080 Ti", "P40",
)  # fmt: skip
_TYPED_MODELS = (
    "llama 3.1 8b", "llama 3.1 70b", "llama 2 7b", "llama 2 13b", "llama 3 70b", "llama 3.2 3b",
    "qwen2.5 7b", "qwen2.5 14b", "qwen2.5 32b", "qwen2.5 72b", "qwen2.5 1.5b", "qwen3 8b", "qwen3 14b",
    "qwen3 32b", "qwen3 30b a3b", "mistral 7b", "mixtral 8x7b", "mistral nemo 12b", "gemma 2 9b",
    "gemma 2 27b", "gemma 3 12b", "gemma 3 27b", "phi-4", "phi-3 mini", "yi 34b", "yi 6b", "baichuan2 13b",
    "glm4 9b", "chatglm3 6b", "internlm2.5 7b", "internlm2 20b", "deepseek r1 distill qwen 32b",
    "deepseek r1 distill llama 8b", "deepseek coder 33b", "deepseek v2 lite", "gpt-oss 20b", "falcon 40b",
    "opt 13b", "bloom 7b1", "qwen1.5 14b",
)  # fmt: skip
_EN_FORMS = (
    "can a {card} run {model}?",
    "lora fine-tune {model} on a {card}",
    "qlora {model} on one {card}, seq 2048",
    "full fine-tune {model} on {n}x {card}",
    "serve {model} on {n} {card} with vllm, 8k context",
    "{model} int4 inference on a {card}",
)
_ZH_FORMS = (
    "{card}能跑{model}吗",
    "{model} lora微调 单卡{card}够吗",
    "{n}张{card} 全参微调 {model} 行不行",
    "{model} qlora 微调，{card}，显存够吗",
    "用{n}张{card}部署{model}，并发20",
    "{model} int8 推理 {card}",
)


def fresh_questions(count: int, seed: int = 13) -> list[str]:
    """`count` different texts (the 200 above first, then model × card × phrasing in both languages),
    shuffled with a fixed seed so answer kinds interleave: each user of benchmark 5 asks one never seen."""
    import random

    generated: list[str] = []
    rng = random.Random(seed)
    combos = [(m, c) for m in _TYPED_MODELS for c in _TYPED_CARDS]
    rng.shuffle(combos)
    for index, (model, card) in enumerate(combos):
        forms = _ZH_FORMS if index % 2 else _EN_FORMS
        form = forms[(index // 2) % len(forms)]
        generated.append(form.format(model=model, card=card, n=2 + index % 3 * 2))
    texts = list(dict.fromkeys([q.text for q in QUESTIONS] + generated))
    if count > len(texts):
        raise ValueError(f"only {len(texts)} different questions, {count} asked for")
    chosen = texts[:count]
    rng.shuffle(chosen)
    return chosen
