"""`python -m bot.charts.demo [--out DIR] [--all]`: draw charts of real answers as PNG files.

Without `--all` it writes the README's picture (docs/chart.png, a comparison, and docs/chart-zh.png, the
same in Chinese); with `--all` one chart of every kind in both languages, for looking at them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.answer import answer
from bot.charts import render_png
from core.paths import ROOT

README_QUESTION = "L40S vs A100 80GB vs H100 vs RTX 4090 for serving Qwen2.5-32B to 20 users"
README_QUESTION_ZH = "L40S、A100 80GB、H100 和 4090 哪个部署 Qwen2.5-32B 给 20 个用户并发更划算"
# One question per chart kind, in English and in Chinese.
QUESTIONS: dict[str, tuple[str, str]] = {
    "fit": ("LoRA fine-tune Qwen2.5 14B on an RTX 4090", "4090 能 LoRA 微调 Qwen2.5 14B 吗"),
    "fit_no": ("full fine-tune Llama 3.1 8B on a 4090", "4090 全参微调 Llama 3.1 8B 行吗"),
    "methods": ("can I fine-tune a 13B model on a 4090?", "两张3090能做微调130亿参数的模型吗"),
    "serve": ("serve qwen2.5-72b with 32k context on 2x H100", "2张H100部署qwen2.5-72b，32k上下文"),
    "compare": (README_QUESTION, README_QUESTION_ZH),
    "plan": ("cheapest way to serve Llama 3.1 70B", "部署 Llama 3.1 70B 最便宜的方案"),
    "plan_run": (
        "cheapest card to LoRA Qwen2.5 7B on 50k rows of ~800 tokens, 3 epochs",
        "用5万条、每条约800 token的数据LoRA微调Qwen2.5 7B训练3轮，哪张卡最便宜",
    ),
    "largest": ("What's the biggest model I can LoRA on two 3090s?", "两张3090最大能LoRA多大的模型"),
    "cards_needed": ("How many H100s to serve Llama 3.1 405B?", "跑 Qwen2.5-72B 要几张 L20"),
    "vision": ("FLUX.1 dev fp8 1024x1024 on a 4090", "4090 能跑 FLUX.1 dev fp8 1024x1024 吗"),
    "vision_plan": ("generate 1024x1024 images with SDXL", "用 SDXL 生成 1024x1024 的图片"),
    "largest_one": ("What's the largest model I can run on a 4090?", "1张4090最大能跑多大的模型"),
    "cards_usual": ("How many cards to serve Llama 3.1 405B?", "部署 Llama 3.1 405B 要几张卡"),
}


def write(question: str, lang: str, path: Path) -> bool:
    reply = answer(question, lang=lang)
    if reply.chart is None:
        print(f"no chart for {question!r} ({reply.kind})")
        return False
    path.write_bytes(render_png(reply.chart, lang))
    print(f"{path}: {reply.kind}/{reply.chart.kind}, {path.stat().st_size:,} bytes")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot.charts.demo")
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    parser.add_argument("--all", action="store_true", help="every chart kind, both languages")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.all:
        ok = write(README_QUESTION, "en", args.out / "chart.png")
        ok = write(README_QUESTION_ZH, "zh", args.out / "chart-zh.png") and ok
        return 0 if ok else 1
    for name, (en, zh) in QUESTIONS.items():
        write(en, "en", args.out / f"{name}-en.png")
        write(zh, "zh", args.out / f"{name}-zh.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
