"""Benchmark 4b: cold start of `gpufit ask "<q>"`, a fresh process each time, as a user runs it.

Measured honestly: with PYTHONDONTWRITEBYTECODE=1 (so a run never profits from bytecode an earlier run of the
benchmark wrote; what is there is what `make` compiled), wall time and the process's own CPU time (wall time
grows with the machine's load, CPU time much less), the load average, and whether gpufit's own modules have
compiled bytecode and whether the templates are precompiled (`make bytecode`: bot.render.precompile). Over the
target, `python -X importtime` names the imports that cost most.
"""

from __future__ import annotations

import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import ROOT, Row, env_for_children

RUNS = 5
TARGET_S = 1.0
ASK_SCRIPT = "import sys; from bot.cli import main; sys.exit(main())"
QUESTIONS = ("两张4090跑qwen2.5 72b int4够不够", "can a 4090 run llama 2 13b?")


def gpufit_command() -> list[str]:
    script = Path(sys.executable).parent / "gpufit"
    return [str(script)] if script.exists() else [sys.executable, "-m", "core"]


def _env() -> dict[str, str]:
    return env_for_children() | {"PYTHONDONTWRITEBYTECODE": "1", "HF_HUB_OFFLINE": "1"}


def time_once(question: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one `gpufit ask`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [*gpufit_command(), "ask", question],
        cwd=ROOT,
        env=_env(),
        check=True,
        capture_output=True,
        timeout=60,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def compiled_share() -> float:
    """The share of core/ and bot/ modules whose bytecode is there and up to date (`make bytecode`)."""
    sources = [p for package in ("core", "bot") for p in (ROOT / package).rglob("*.py")]
    fresh = 0
    for source in sources:
        cached = Path(importlib.util.cache_from_source(str(source)))
        fresh += cached.exists() and cached.stat().st_mtime >= source.stat().st_mtime
    return fresh / len(sources) if sources else 0.0


def templates_precompiled() -> float:
    """The share of (language, template) pairs precompiled under the current fingerprint."""
    from jinja2.bccache import Bucket

    from bot.render import COMPILED_DIR, LANGS, PrecompiledTemplates, _templates_of, environment

    pairs = found = 0
    for lang in LANGS:
        cache = PrecompiledTemplates(lang, COMPILED_DIR)
        env = environment(lang)
        for name in _templates_of(env, lang):
            pairs += 1
            bucket = Bucket(env, cache.get_cache_key(name), "")
            found += cache._path(bucket).exists()
    return found / pairs if pairs else 0.0


def import_offenders(question: str, top: int = 12) -> list[tuple[float, str]]:
    """Own import time summed per top-level package of `gpufit ask`, from `-X importtime` (seconds)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", ASK_SCRIPT, "ask", question],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    by_package: dict[str, float] = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        own, _, name = line.removeprefix("import time:").split("|", 2)
        if not own.strip().isdigit():
            continue
        package = name.strip().split(".")[0]
        by_package[package] = by_package.get(package, 0.0) + int(own) / 1e6
    return sorted(((s, p) for p, s in by_package.items()), reverse=True)[:top]


def run(*, verbose: bool = True) -> list[Row]:
    share = compiled_share()
    templates = templates_precompiled()
    load = os.getloadavg()[0]
    runs = [time_once(QUESTIONS[i % len(QUESTIONS)]) for i in range(RUNS)]
    times = [wall for wall, _ in runs]
    cpu = statistics.median(c for _, c in runs)
    best, median = min(times), statistics.median(times)
    if verbose:
        print(f"== 4b. cold start: {' '.join(gpufit_command())} ask …, {RUNS} fresh processes")
        print(
            f"   PYTHONDONTWRITEBYTECODE=1; gpufit bytecode compiled: {share:.0%}; templates precompiled:"
            f" {templates:.0%}; load average {load:.1f}"
        )
        print(
            "   "
            + ", ".join(f"{t * 1e3:.0f} ms" for t in times)
            + f"; min {best * 1e3:.0f} ms, median {median * 1e3:.0f} ms; CPU median {cpu * 1e3:.0f} ms"
        )
        offenders = import_offenders(QUESTIONS[0])
        print("   import time by top-level package (own time summed, -X importtime):")
        for seconds, package in offenders:
            print(f"     {seconds * 1e3:7.0f} ms  {package}")
    return [
        Row(
            "4 cold start",
            "gpufit ask, median of 5",
            f"< {TARGET_S:.0f} s",
            f"{median * 1e3:.0f} ms (min {best * 1e3:.0f} ms; CPU {cpu * 1e3:.0f} ms; load {load:.1f})",
            median < TARGET_S,
        )
    ]


if __name__ == "__main__":
    from benchmarks.common import print_table

    print_table(run())
