"""The `gpufit` command line: estimate, vision, cards, models, ask, plan, and the bot / console chat."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, get_args

from bot.cli_args import OneLineParser, float_of, int_of, quantity_of, tokens_of
from core.catalog import load_catalog
from core.estimator import UnknownCardError, UnknownModelError, estimate
from core.query import KvCacheDtype, LoraTargets, Method, Precision, Query, Task
from core.registry import load_registry
from core.runtimes import load_runtimes

if TYPE_CHECKING:
    from bot.charts.spec import ChartSpec
    from bot.hub.lookup import HubLookup
    from core.advisor import Plan
    from core.parser import Parsed
    from core.vision import VisionJob

P = ParamSpec("P")


def _unknown_names_exit_2(command: Callable[P, int]) -> Callable[P, int]:
    """A command that names an unknown model or card exits 2, saying the closest names."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> int:
        from core.vision import UnknownVisionModelError

        try:
            return command(*args, **kwargs)
        except (UnknownModelError, UnknownVisionModelError) as err:
            _unknown("model", err.name, err.suggestions)
        except UnknownCardError as err:
            _unknown("card", err.name, err.suggestions)
        return 2

    return run


_TASKS = {
    "inference": (Task.INFERENCE, None),
    "full": (Task.FINETUNE, Method.FULL),
    "lora": (Task.FINETUNE, Method.LORA),
    "qlora": (Task.FINETUNE, Method.QLORA),
    "freeze": (Task.FINETUNE, Method.FREEZE),
    "pretrain": (Task.PRETRAIN, Method.FULL),
}


def _model_id(name: str | None) -> str | None:
    """Registry id for a typed name ('llama2 13b', 'ds r1 distill 32b'), a Hub id or URL ('Qwen/Qwen3-8B',
    'https://hf-mirror.com/…', 'https://modelscope.cn/models/…') looked up on the Hub; an unknown name is
    kept so the error can name the closest ones."""
    if name is None:
        return None
    match = load_registry().resolve(name)
    if match is not None:
        return match.model.id
    from bot.hub.reference import find_reference
    from core.parser import model_id_for

    ref = find_reference(name)
    if ref is not None:  # a Hub id or URL: the registry's entry for that repo, else the Hub's
        shipped = load_registry().resolve(ref.repo_id)
        return shipped.model.id if shipped else (_looked_up(name) or name)
    return model_id_for(name) or _looked_up(name) or name


def _hub_lookup() -> HubLookup:
    """The command line's lookups: settings from the environment, the cache in the user's cache directory."""
    from bot.hub.cache import DirectoryCache
    from bot.hub.lookup import HubLookup
    from bot.hub.settings import HubSettings, default_cache_dir

    return HubLookup(HubSettings.from_env(), DirectoryCache(default_cache_dir(os.environ)))


def _looked_up(name: str) -> str | None:
    """A model the registry lacks, from the Hub (or the cache); why not, on stderr, when it fails."""
    from bot.answer.hub import learn
    from bot.hub.reference import find_reference
    from bot.render import html_to_terminal, render

    lookup = _hub_lookup()
    ref = find_reference(name) or lookup.search(name)
    if ref is None:
        return None
    result = lookup.lookup(ref)
    model = learn(result)
    if model is None or result.fallback:
        note = render(
            "hub_lookup",
            "en",
            status=result.status.value,
            repo=ref.repo_id,
            site=ref.site,
            date=result.fetched_at.date().isoformat() if result.fetched_at else "",
        )
        print(f"gpufit: {html_to_terminal(note).strip()}", file=sys.stderr)
    return model.id if model else None


_LORA_TARGET_SPELLINGS: dict[str, LoraTargets] = {
    "all-linear": "all-linear",
    "all": "all-linear",
    "all_linear": "all-linear",
    "attention": "attention",
    "attn": "attention",
    "q,k,v,o": "attention",
    "q_proj,k_proj,v_proj,o_proj": "attention",
    "q,v": "q,v",
    "qv": "q,v",
    "q_proj,v_proj": "q,v",
}


def _lora_targets(text: str) -> LoraTargets:
    """What people write for the adapted layers: 'q,v', 'qv', 'q_proj,v_proj', 'attention', 'all-linear'."""
    key = text.strip().lower().replace(" ", "").replace("+", ",")
    if key in _LORA_TARGET_SPELLINGS:
        return _LORA_TARGET_SPELLINGS[key]
    raise argparse.ArgumentTypeError(f"choose from {', '.join(get_args(LoraTargets))} (got {text!r})")


def query_from_args(args: argparse.Namespace) -> Query:
    task, method = _TASKS[args.task]
    targets = args.lora_targets
    return Query(
        task=task,
        method=method,
        model=_model_id(args.model),
        params_b=args.params,
        card=args.card,
        gpus=args.gpus,
        precision=Precision(args.precision) if args.precision else None,
        batch=args.batch,
        seq=args.seq,
        runtime=args.runtime or None,
        kv_cache_dtype=KvCacheDtype(args.kv_cache_dtype) if args.kv_cache_dtype else None,
        grad_checkpointing=args.grad_checkpointing,
        lora_rank=args.lora_rank,
        lora_targets=targets,
        tokens=args.tokens,
        master_weights=False if args.pure_bf16 else None,
    )


_JSON_HELP = "print the result as JSON (the same keys as `gpufit ask --json`)"
_LANG_HELP = "answer in English or Chinese (default: the question's language)"


def _add_estimate(sub: argparse._SubParsersAction[OneLineParser]) -> None:
    p = sub.add_parser("estimate", help="memory (and speed, cost) of one job, from flags")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--model",
        help="registry name (llama-3.1-8b, 'qwen2.5 72b'), Hub id (ibm-granite/granite-3.3-8b-instruct) "
        "or URL (huggingface.co, hf-mirror.com, modelscope.cn); honours HF_ENDPOINT, HF_TOKEN, "
        "HF_HUB_OFFLINE",
    )
    which.add_argument(
        "--params",
        type=quantity_of(Query, "params_b", "the size", scale=1e9, example="13B"),
        help="bare size, e.g. 13B (a representative dense shape)",
    )
    p.add_argument("--task", choices=list(_TASKS), default="inference", help="the job (default: inference)")
    p.add_argument(
        "--precision",
        choices=[p.value for p in Precision],
        help="weights' format (default: bf16, or what the card supports; nf4 for qlora)",
    )
    p.add_argument(
        "--batch", type=int_of(Query, "batch", "the batch"), help="sequences processed at once (default 1)"
    )
    p.add_argument(
        "--seq",
        type=tokens_of(Query, "seq", "the context"),
        help="tokens per sequence, e.g. 4096, 32k or 1m (default 2048)",
    )
    p.add_argument(
        "--grad-checkpointing",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="recompute activations in the backward pass (fine-tuning default: on)",
    )
    p.add_argument(
        "--lora-rank", type=int_of(Query, "lora_rank", "the LoRA rank"), help="LoRA rank r (default 16)"
    )
    p.add_argument(
        "--lora-targets",
        type=_lora_targets,
        metavar="TARGETS",
        help="all-linear (default), attention (q,k,v,o) or q,v (also: all, attn, qv, q_proj,v_proj)",
    )
    p.add_argument(
        "--runtime",
        choices=list(load_runtimes().by_id),
        help="an engine of data/runtimes.toml: transformers (one sequence, the default), vllm (serving), …",
    )
    p.add_argument(
        "--kv-cache-dtype",
        choices=[d.value for d in KvCacheDtype],
        help="KV cache storage: fp8 (vLLM/SGLang --kv-cache-dtype fp8), q8_0 / q4_0 (llama.cpp -ctk); "
        "default: the model's 16-bit dtype",
    )
    p.add_argument(
        "--pure-bf16",
        action="store_true",
        help="full fine-tuning with bf16 weights and optimizer states and no fp32 master copy "
        "(LLaMA-Factory pure_bf16, torchtune's default); default: mixed precision with fp32 master weights",
    )
    p.add_argument("--card", help="catalog name, e.g. 4090, a100-80gb-sxm, h20 (`gpufit cards` lists them)")
    p.add_argument(
        "--gpus", type=int_of(Query, "gpus", "the number of cards"), help="number of cards (default 1)"
    )
    p.add_argument(
        "--tokens",
        type=quantity_of(Query, "tokens", "tokens", example="2T"),
        help="training tokens, e.g. 2T or 500M (gives time and cost)",
    )
    p.add_argument("--json", action="store_true", help=_JSON_HELP)


@_unknown_names_exit_2
def _cmd_estimate(args: argparse.Namespace) -> int:
    from bot.answer.estimate_view import render_estimate
    from bot.render import html_to_terminal
    from core.report import estimate_json

    if args.pure_bf16 and (
        _TASKS[args.task][1] is not Method.FULL or args.precision not in (None, Precision.BF16.value)
    ):
        print(
            "gpufit estimate: --pure-bf16 is bf16 full fine-tuning without fp32 master weights; use it with "
            "--task full or pretrain and no other --precision (see `gpufit estimate --help`)",
            file=sys.stderr,
        )
        return 2
    result = estimate(query_from_args(args))
    if args.json:
        print(json.dumps(estimate_json(result), ensure_ascii=False, indent=2))
    else:
        print(html_to_terminal(render_estimate(result, lang="en")))
    return 0


def _add_vision(sub: argparse._SubParsersAction[OneLineParser]) -> None:
    from core.runtimes import load_vision_runtimes
    from core.vision import Offload, TrainMethod, VisionJob, VisionTask

    p = sub.add_parser("vision", help="an image / video / vision / speech / embedding job, from flags")
    p.add_argument("model", help="e.g. sdxl, flux.1-dev, wan2.1-t2v-14b, yolov8x, whisper-large-v3")
    p.add_argument("--task", choices=[t.value for t in VisionTask], help="the job (default: the model's own)")
    p.add_argument("--method", choices=[m.value for m in TrainMethod], help="training method (train only)")
    p.add_argument("--width", type=int_of(VisionJob, "width", "width"), help="image width in pixels")
    p.add_argument(
        "--height", type=int_of(VisionJob, "height", "height"), help="image height (default: the width)"
    )
    p.add_argument("--frames", type=int_of(VisionJob, "frames", "frames"), help="video frames")
    p.add_argument("--batch", type=int_of(VisionJob, "batch", "batch"), help="images per batch")
    p.add_argument("--steps", type=int_of(VisionJob, "steps", "steps"), help="denoising steps")
    p.add_argument(
        "--tokens", type=int_of(VisionJob, "tokens", "tokens"), help="text tokens (embedding models)"
    )
    p.add_argument("--precision", choices=[p.value for p in Precision], help="weights' format")
    p.add_argument(
        "--offload", choices=[o.value for o in Offload], help="CPU offload: whole models or layer by layer"
    )
    p.add_argument(
        "--runtime",
        choices=[r.id for r in load_vision_runtimes()],
        help="the pipeline engine (ComfyUI offloads by itself when the card is short)",
    )
    p.add_argument("--vae-tiling", action="store_true", help="decode the image in tiles")
    p.add_argument("--grad-checkpointing", action="store_true", help="recompute activations (training)")
    p.add_argument(
        "--audio-hours",
        type=float_of(VisionJob, "audio_hours", "audio hours"),
        help="hours of audio (speech models)",
    )
    p.add_argument("--card", help="catalog name, e.g. 4090")
    p.add_argument("--lang", choices=["en", "zh"], default="en", help=_LANG_HELP)
    p.add_argument("--json", action="store_true", help=_JSON_HELP)


@_unknown_names_exit_2
def _cmd_vision(args: argparse.Namespace) -> int:
    from bot.answer.vision import vision_answer
    from bot.render import html_to_terminal
    from core.vision import VisionJob, estimate_vision

    card = args.card
    if card and card not in load_catalog().by_id:
        match = load_catalog().resolve(card)
        card = match.card.id if match else card
    job = VisionJob(
        model=args.model,
        task=args.task,
        method=args.method,
        width=args.width,
        height=args.height or args.width,
        frames=args.frames,
        batch=args.batch,
        steps=args.steps,
        tokens=args.tokens,
        precision=Precision(args.precision) if args.precision else None,
        offload=args.offload,
        runtime=args.runtime,
        vae_tiling=True if args.vae_tiling else None,
        grad_checkpointing=True if args.grad_checkpointing else None,
        audio_hours=args.audio_hours,
        card=card,
    )
    if args.json:
        from core.cost import currency_for
        from core.vision.cost import priced_cost

        est = estimate_vision(job)
        cost = priced_cost(est, currency_for(None, args.lang).value)
        print(json.dumps(est.as_json(cost), ensure_ascii=False, indent=2))
    else:
        print(html_to_terminal(vision_answer(job, args.lang).html))
    return 0


def _unknown(kind: str, name: str, suggestions: list[str]) -> None:
    hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
    print(f"gpufit: unknown {kind} {name!r}.{hint} (`gpufit {kind}s` lists them)", file=sys.stderr)


def _cmd_cards(args: argparse.Namespace) -> int:
    catalog = load_catalog()
    if args.json:
        rows = [card.model_dump(mode="json") | {"memory_bytes": card.memory_bytes} for card in catalog.cards]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    table: list[tuple[str, ...]] = [
        (
            card.id,
            f"{card.memory_gib:g} GB",
            card.memory_type,
            f"{card.bandwidth_gb_s:g}",
            f"{card.tensor_tflops:g}",
            card.interconnect,
            card.segment.value,
        )
        for card in catalog.cards
    ]
    header = ("id", "memory", "type", "GB/s", "bf16 TF", "link", "segment")
    widths = [max(len(row[i]) for row in [header, *table]) for i in range(len(header))]
    right = {1, 3, 4}  # numbers line up on their last digit
    for row in [header, *table]:
        cells = [
            cell.rjust(w) if i in right else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        print("  ".join(cells).rstrip())
    print("\nGB here is what the card is sold as; it is GiB of capacity (24 GB = 24 × 2^30 bytes).")
    return 0


def _cmd_models(args: argparse.Namespace) -> int:
    registry = load_registry()
    if args.json:
        rows = [
            m.model_dump(mode="json") | {"total_params": m.total_params, "active_params": m.active_params}
            for m in registry.models
        ]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    print(f"{'id':<34} {'params':>9} {'active':>9}  layers  hidden  kv  vocab")
    for m in registry.models:
        print(
            f"{m.id:<34} {m.total_params / 1e9:>8.2f}B {m.active_params / 1e9:>8.2f}B  {m.layers:>6}  "
            f"{m.hidden:>6}  {m.n_kv_heads:>2}  {m.vocab}"
        )
    return 0


def _cmd_ask(args: argparse.Namespace) -> int:
    from bot.answer.service import answer_looking_up
    from bot.render import html_to_terminal

    reply = answer_looking_up(" ".join(args.question), lookup=_hub_lookup(), lang=args.lang)
    if args.json:
        print(json.dumps(reply.to_json(), ensure_ascii=False, indent=2))
    else:
        print(html_to_terminal(reply.html))
    if args.chart is not None:
        return write_chart(reply.chart, reply.lang, args.chart)
    return 0


def _cmd_plan(args: argparse.Namespace) -> int:
    return plan_command(" ".join(args.question), as_json=args.json, lang=args.lang, chart=args.chart)


def write_chart(spec: ChartSpec | None, lang: str, path: str) -> int:
    """`--chart FILE`: the answer's chart as a PNG file; what was written is said on stderr, so --json's
    output stays one document. An answer without a chart exits 1."""
    from bot.charts import render_png
    from bot.render import html_to_terminal, render

    if spec is None:
        print(html_to_terminal(render("chart_none", lang), ansi=False), file=sys.stderr)
        return 1
    png = render_png(spec, lang)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(png)
    note = render("bot_console_saved", lang, path=str(target.resolve()), size=len(png))
    print(html_to_terminal(note, ansi=False), file=sys.stderr)
    return 0


def _with_looked_up_model(question: str, parsed: Parsed) -> Query | None:
    """The parsed query, its model replaced by a Hub model when the question names one the registry lacks."""
    from bot.answer.hub import find_and_look_up, learn

    _, result = find_and_look_up(question, parsed, _hub_lookup())
    model = learn(result) if result is not None else None
    if model is None:
        return parsed.query
    return (parsed.query or Query()).model_copy(update={"model": model.id, "params_b": None})


@_unknown_names_exit_2
def plan_command(question: str, *, as_json: bool, lang: str | None, chart: str | None = None) -> int:
    """`gpufit plan "<question>"`: the ranked plans for a question in words."""
    from bot.answer.fit import plan_text
    from bot.render import html_to_terminal
    from core.advisor import SortKey, plan_json, plans
    from core.cost import currency_for
    from core.parser import parse

    parsed = parse(question)
    language = lang or parsed.lang
    if parsed.vision is not None:
        return _vision_plan_command(parsed.vision, as_json=as_json, lang=language, chart=chart)
    query = _with_looked_up_model(question, parsed)
    if query is None or (query.model is None and query.params_b is None):
        print('gpufit: which model? e.g. gpufit plan "Qwen2.5 7B LoRA fine-tune"', file=sys.stderr)
        return 2
    money = currency_for(query.currency, language)
    sort: SortKey = query.sort or "cost"
    found = plans(query, sort=sort, currency=money)
    if as_json:
        from bot.answer import query_json
        from bot.answer.fit import first_plan_facts
        from core.advisor.fit_advice import plan_job
        from core.estimator import estimate

        # the job as the plans were searched for it, filled in, as `gpufit ask --json` says it
        filled = estimate(query.model_copy(update={"card": None, "card_memory_bytes": None})).query
        payload = {
            "query": query_json(query, filled),
            "sort": sort,
            "currency": money.value,
            "plans": [plan_json(p) for p in found],
        } | first_plan_facts(plan_job(found[0], money) if found else None)
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        print(html_to_terminal(plan_text(found, language, money.value, sort)))
    if chart is not None:
        return write_chart(_plan_chart(query, found, language, money.value), language, chart)
    return 0


def _vision_plan_command(job: VisionJob, *, as_json: bool, lang: str, chart: str | None) -> int:
    """`gpufit plan` for an image / video / vision / speech job: the cards that run it, cheapest per 1,000
    items first, with the same plan keys as a language-model plan (PlanFigures) and the job understood."""
    from bot.answer.vision import vision_answer
    from bot.render import html_to_terminal
    from core.advisor import plan_json
    from core.cost import currency_for
    from core.vision import estimate_vision
    from core.vision.plans import vision_plans

    cardless = job.model_copy(update={"card": None, "card_memory_bytes": None})
    money = currency_for(job.currency, lang)
    found = vision_plans(cardless, money.value)
    if as_json:
        payload = {
            "query": estimate_vision(cardless).query_json(),
            "sort": "cost",
            "currency": money.value,
            "plans": [plan_json(p) for p in found],
        }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        print(html_to_terminal(vision_answer(cardless, "zh" if lang == "zh" else "en").html))
    if chart is not None:
        answer = vision_answer(cardless, "zh" if lang == "zh" else "en")
        return write_chart(answer.chart, lang, chart)
    return 0


def _plan_chart(query: Query, found: Sequence[Plan], lang: str, currency: str) -> ChartSpec | None:
    """The plans just printed, as the plan answer's chart draws them."""
    from bot.answer.common import model_label
    from bot.charts.adapter import plan_chart

    est = estimate(query.model_copy(update={"card": None, "card_memory_bytes": None}))
    return plan_chart(found, model_name=model_label(est, lang), query=est.query, currency=currency)


def _cmd_bot(args: argparse.Namespace) -> int:
    from bot.__main__ import run_bot

    return run_bot(webhook_url=args.webhook_url, webhook_secret=args.webhook_secret)


def _cmd_chat(args: argparse.Namespace) -> int:
    from bot.console import run_console

    return run_console()


def _cmd_start(args: argparse.Namespace) -> int:
    """The README's main command: the bot when a token is configured, the offline console chat otherwise."""
    from bot.settings import load_settings

    if load_settings(require_token=False).token is not None:
        return _cmd_bot(argparse.Namespace(webhook_url=None, webhook_secret=None))
    print("No TELEGRAM_BOT_TOKEN set: starting the offline console chat (same bot, same handlers).")
    return _cmd_chat(args)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="gpufit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    _add_estimate(sub)
    _add_vision(sub)
    for name, helptext in (("cards", "the card catalog"), ("models", "the model registry")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("--json", action="store_true", help="print it as JSON")
    for name, helptext in (
        ("ask", "answer one question as the bot would"),
        ("plan", "rank the plans that fit"),
    ):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("question", nargs="+", help="the question in words, English or Chinese")
        p.add_argument("--json", action="store_true", help=_JSON_HELP)
        p.add_argument("--lang", choices=["en", "zh"], help=_LANG_HELP)
        p.add_argument("--chart", metavar="FILE", help="also write the answer's chart as a PNG file")
    p = sub.add_parser(
        "bot",
        help="run the Telegram bot (needs TELEGRAM_BOT_TOKEN)",
        description="The Telegram bot. Needs TELEGRAM_BOT_TOKEN (the environment or .env); "
        "TELEGRAM_API_URL for a self-hosted Bot API server. Long polling unless a webhook URL is given.",
    )
    p.add_argument(
        "--webhook-url",
        help="public HTTPS URL Telegram posts updates to (also GPUFIT_WEBHOOK_URL); default: long polling",
    )
    p.add_argument(
        "--webhook-secret",
        help="secret token Telegram sends with each update (also GPUFIT_WEBHOOK_SECRET)",
    )
    sub.add_parser("chat", help="the bot in this terminal, offline")
    sub.add_parser("start", help="the bot if a token is set, else the console chat")
    return parser


_COMMANDS = {
    "estimate": _cmd_estimate,
    "vision": _cmd_vision,
    "cards": _cmd_cards,
    "models": _cmd_models,
    "ask": _cmd_ask,
    "plan": _cmd_plan,
    "bot": _cmd_bot,
    "chat": _cmd_chat,
    "start": _cmd_start,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from bot.settings import SettingsError, apply_to_core, ensure_db_path, load_settings

    try:
        settings = load_settings(require_token=False)
        problem = apply_to_core(settings)  # GPUFIT_PRICES, from the environment or .env
        if args.command in ("bot", "chat", "start"):
            ensure_db_path(settings)  # GPUFIT_DB: checked before anything starts
    except SettingsError as error:
        print(f"gpufit: {error}", file=sys.stderr)
        return 2
    if problem:
        print(f"gpufit: {problem}", file=sys.stderr)
    try:
        return _COMMANDS[args.command](args)
    except BrokenPipeError:
        # `gpufit cards | head`: the reader left; exit quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
