"""Many users at once, double taps, two members of one group, and acknowledged answers surviving kill -9."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import textwrap
import time
from pathlib import Path

from bot.store import SessionStore
from core import checklist as ck

ANSWERS = ("ft_lora", "p:7", "bf16", "s:2048:4", "t:100000000", "b:none", "c:rtx-4090:1")


async def _answer_all(store: SessionStore, chat_id: int, user_id: int) -> int:
    """One user walks the whole checklist the way the bot does: read, answer, compare-and-set."""
    await store.save_checklist(chat_id, user_id, ck.start("en"))
    commits = 1
    for answer in ANSWERS:
        state = await store.get_checklist(chat_id, user_id)
        assert state is not None
        moved, error = ck.answer_step(state, answer)
        assert error is None
        assert await store.save_checklist(chat_id, user_id, moved, expected_step=state.step)
        commits += 1
    return commits


async def test_500_users_answer_concurrently(tmp_path: Path) -> None:
    store = await SessionStore.open(tmp_path / "s.db")
    started = time.perf_counter()
    commits = await asyncio.gather(*(_answer_all(store, 1000 + n, 1000 + n) for n in range(500)))
    elapsed = time.perf_counter() - started
    for n in range(500):
        state = await store.get_checklist(1000 + n, 1000 + n)
        assert state is not None and state.done
        assert state.answers.card == "rtx-4090" and state.answers.tokens == 1e8
    total = sum(commits)
    print(
        f"\n500 users × {len(ANSWERS) + 1} commits: {total} commits in {elapsed:.2f} s"
        f" = {total / elapsed:.0f} commits/s"
    )
    await store.close()


async def test_double_tap_is_applied_once(tmp_path: Path) -> None:
    store = await SessionStore.open(tmp_path / "s.db")
    await store.save_checklist(5, 5, ck.start("en"))
    state = await store.get_checklist(5, 5)
    assert state is not None

    async def tap(choice: str) -> bool:
        moved, error = ck.answer_step(state, choice)
        assert error is None
        return await store.save_checklist(5, 5, moved, expected_step=state.step)

    results = await asyncio.gather(tap("infer"), tap("infer"), tap("ft_lora"), tap("pretrain"))
    assert sorted(results) == [False, False, False, True]
    stored = await store.get_checklist(5, 5)
    assert stored is not None and stored.step == 1
    await store.close()


async def test_two_members_of_one_group_do_not_mix(tmp_path: Path) -> None:
    store = await SessionStore.open(tmp_path / "s.db")
    group = -1001234567890

    async def walk(user_id: int, answers: tuple[str, ...]) -> None:
        await store.save_checklist(group, user_id, ck.start("en"))
        for answer in answers:
            state = await store.get_checklist(group, user_id)
            assert state is not None
            moved, error = ck.answer_step(state, answer)
            assert error is None, answer
            assert await store.save_checklist(group, user_id, moved, expected_step=state.step)
            await asyncio.sleep(0)

    await asyncio.gather(
        walk(1, ("infer", "m:qwen2.5-72b", "int4")),
        walk(2, ("ft_qlora", "13B", "nf4", "4096, batch 2")),
    )
    first = await store.get_checklist(group, 1)
    second = await store.get_checklist(group, 2)
    assert first is not None and second is not None
    assert (first.step, first.answers.model, first.answers.job) == (3, "qwen2.5-72b", ck.Job.INFERENCE)
    assert (second.step, second.answers.params_b, second.answers.seq) == (4, 13.0, 4096)
    await store.close()


_WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from bot.store import SessionStore
    from core import checklist as ck

    async def main(path):
        store = await SessionStore.open(path)
        n = 0
        while True:
            n += 1
            state = ck.start("en").model_copy(update={"prompt_message_id": n})
            await store.save_checklist(1, 1, state)
            print(n, flush=True)  # acknowledged: the commit returned

    asyncio.run(main(sys.argv[1]))
    """
)


REPO = Path(__file__).resolve().parents[1]


async def test_acknowledged_answers_survive_kill_9(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _WRITER,
        str(path),
        stdout=asyncio.subprocess.PIPE,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert process.stdout is not None
    acknowledged = 0
    try:
        while acknowledged < 40:
            line = await asyncio.wait_for(process.stdout.readline(), timeout=30)
            if not line:
                break
            acknowledged = int(line)
    finally:
        process.send_signal(signal.SIGKILL)
        await process.wait()
    assert acknowledged >= 40, "the writer did not get going"
    store = await SessionStore.open(path)
    state = await store.get_checklist(1, 1)
    await store.close()
    assert state is not None and state.prompt_message_id is not None
    assert state.prompt_message_id >= acknowledged  # nothing acknowledged was lost
