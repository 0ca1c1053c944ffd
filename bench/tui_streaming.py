"""TUI responsiveness: keystroke-to-screen latency while a long answer streams, the time to paint a
1,000-message session, and frame times while 200 tokens/s stream into a 2,000-message session.
Prints a table; asserts nothing.

    .venv/bin/python bench/tui_streaming.py [--deltas 3000] [--keys 60] [--messages 1000]
        [--frame-messages 2000] [--rate 200] [--seconds 8]

A keystroke is posted to the app the way the terminal driver posts it; it counts as shown when the
prompt holds the character and the screen has refreshed after that.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from textual import events

from agent_cli.agent.api import CommandSpec, SessionInfo
from agent_cli.core.events import ContextStatus, ContextUpdate, Event, TextDelta, TurnFinished
from agent_cli.core.types import Block, Message
from agent_cli.tui.app import AgentApp, create_app

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._args import count  # noqa: E402

PARAGRAPH = (
    "The parser splits each line on commas, then **drops empty fields**, which is why a trailing "
    "comma vanishes. `split_fields` should keep them; the callers that relied on the old behaviour "
    "are `parse_header` and `load_rows`.\n\n"
)


class StreamingBackend:
    """Streams `deltas` small fragments of Markdown, one every `interval` seconds."""

    session_id = "bench"
    model = "bench-model"
    permission_mode = "ask"

    def __init__(self, deltas: int, interval: float, conversation: list[Message] | None = None) -> None:
        self.deltas = deltas
        self.interval = interval
        self._conversation = conversation or []
        self._stop = asyncio.Event()
        self.streamed = 0

    def status(self) -> ContextStatus:
        return ContextStatus(used=42_000)

    async def submit(self, text: str) -> AsyncIterator[Event]:
        self._stop = asyncio.Event()
        words = PARAGRAPH.split(" ")
        for i in range(self.deltas):
            if self._stop.is_set():
                break
            yield TextDelta(text=words[i % len(words)] + " ")
            self.streamed += 1
            if i % 50 == 0:
                yield ContextUpdate(status=ContextStatus(used=42_000 + i * 3))
            await asyncio.sleep(self.interval)
        yield TurnFinished(stop_reason="end_turn")

    def interrupt(self) -> None:
        self._stop.set()

    def commands(self) -> list[CommandSpec]:
        return []

    def breakdown(self) -> dict[str, int]:
        return {}

    def sessions(self) -> list[SessionInfo]:
        return []

    def cost(self) -> dict[str, Any]:
        return {}

    def conversation(self) -> list[Message]:
        return list(self._conversation)


def big_conversation(count: int) -> list[Message]:
    out: list[Message] = []
    for i in range(count // 2):
        out.append(Message("user", (Block.text_block(f"step {i}: look at module {i} and fix what fails"),)))
        blocks = [Block.text_block(f"### Step {i}\n\n" + PARAGRAPH)]
        if i % 3 == 0:
            blocks.append(Block.tool_use(f"t{i}", "read_file", {"path": f"src/mod_{i}.py"}))
        out.append(Message("assistant", tuple(blocks)))
        if i % 3 == 0:
            out.append(Message("user", (Block.tool_result(f"t{i}", "line\n" * 40),)))
            out.append(Message("assistant", (Block.text_block("Done."),)))
    return out[:count]


class PaintProbe:
    """Records when the compositor last asked the prompt's TextArea for a line (i.e. painted it)."""

    def __init__(self, app: AgentApp) -> None:
        area = app.prompt.text_area
        original = area.render_line
        self.last = 0.0

        def render_line(y: int) -> Any:
            self.last = time.perf_counter()
            return original(y)

        area.render_line = render_line  # type: ignore[method-assign]


async def shown(app: AgentApp, probe: PaintProbe, char: str, before: str) -> None:
    while app.prompt.text != before + char:
        await asyncio.sleep(0)
    changed = time.perf_counter()
    while probe.last < changed:
        await asyncio.sleep(0.0005)


async def keystroke_latency(deltas: int, keys: int, interval: float) -> tuple[list[float], int, float]:
    backend = StreamingBackend(deltas, interval)
    app = create_app(backend=backend)
    latencies: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        probe = PaintProbe(app)
        if deltas:
            await app.handle_input("write a long explanation")
            while backend.streamed < 20:
                await pilot.pause()
        start = time.perf_counter()
        for i in range(keys):
            char = "abcdefghijklmnopqrstuvwxyz"[i % 26]
            before = app.prompt.text
            t0 = time.perf_counter()
            event = events.Key(char, char)
            event.set_sender(app)
            app.post_message(event)
            await shown(app, probe, char, before)
            latencies.append((time.perf_counter() - t0) * 1000)
            await asyncio.sleep(0.02)
        elapsed = time.perf_counter() - start
        streamed = backend.streamed
        backend.interrupt()
        await app.workers.wait_for_complete()
    return latencies, streamed, elapsed


async def paint_session(count: int) -> tuple[float, float, int]:
    messages = big_conversation(count)
    app = create_app(backend=StreamingBackend(0, 0, messages))
    t0 = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        startup = (time.perf_counter() - t0) * 1000
        widgets = len(app.transcript.entries) + app.transcript.hidden_count
        await app.transcript.clear()
        await pilot.pause()
        t1 = time.perf_counter()
        assert app.renderer is not None
        await app.renderer.paint_conversation(messages)
        await pilot.pause()
        repaint = (time.perf_counter() - t1) * 1000
        t2 = time.perf_counter()
        await app.transcript.show_earlier()
        await pilot.pause()
        everything = (time.perf_counter() - t2) * 1000
    return startup, repaint, everything, widgets


class RateBackend(StreamingBackend):
    """Streams at `rate` deltas a second by the clock (catching up in bursts when the loop lags)."""

    def __init__(self, rate: float, seconds: float, conversation: list[Message]) -> None:
        super().__init__(int(rate * seconds), 1 / rate, conversation)
        self.rate = rate

    async def submit(self, text: str) -> AsyncIterator[Event]:
        self._stop = asyncio.Event()
        words = PARAGRAPH.split(" ")
        start = time.perf_counter()
        while self.streamed < self.deltas and not self._stop.is_set():
            due = min(self.deltas, int((time.perf_counter() - start) * self.rate) + 1)
            while self.streamed < due:
                yield TextDelta(text=words[self.streamed % len(words)] + " ")
                self.streamed += 1
            await asyncio.sleep(self.interval)
        yield TurnFinished(stop_reason="end_turn")


async def frame_times(
    messages: int, rate: float, seconds: float
) -> tuple[list[float], list[float], list[float], float]:
    """While `rate` deltas/s stream into a session of `messages` messages: the time Textual spends
    on each screen update (layout + compositor render; wall clock, and CPU time of the thread, which
    other processes on a loaded machine do not inflate), and how late a 5 ms heartbeat wakes up
    (anything that blocks the event loop: Markdown parsing, mounting, our own handlers)."""
    backend = RateBackend(rate, seconds, big_conversation(messages))
    app = create_app(backend=backend)
    frames: list[float] = []
    cpu: list[float] = []
    lags: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        original = screen._on_timer_update

        def timed_update() -> None:
            t0, c0 = time.perf_counter(), time.thread_time()
            original()
            frames.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.thread_time() - c0) * 1000)

        screen._on_timer_update = timed_update  # type: ignore[method-assign]
        screen._update_timer._callback = timed_update  # the timer holds the bound method
        running = True

        async def heartbeat() -> None:
            while running:
                t0 = time.perf_counter()
                await asyncio.sleep(0.005)
                lags.append(max(0.0, (time.perf_counter() - t0) * 1000 - 5))

        beat = asyncio.create_task(heartbeat())
        start = time.perf_counter()
        await app.handle_input("stream a long answer")
        await app.workers.wait_for_complete()
        elapsed = time.perf_counter() - start
        running = False
        await beat
    return frames, cpu, lags, backend.streamed / elapsed


def _triple(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} / {p95(values):.1f} / {max(values):.1f} ms"


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=count, default=3000)
    parser.add_argument("--interval", type=float, default=0.002, help="seconds between deltas")
    parser.add_argument("--keys", type=count, default=60)
    parser.add_argument("--messages", type=count, default=1000)
    parser.add_argument("--frame-messages", type=count, default=2000, help="session size for frame times")
    parser.add_argument("--rate", type=float, default=200, help="deltas (tokens) per second")
    parser.add_argument("--seconds", type=float, default=8)
    args = parser.parse_args()

    frames, cpu, lags, achieved = await frame_times(args.frame_messages, args.rate, args.seconds)

    idle, _, _ = await keystroke_latency(0, args.keys, args.interval)
    latencies, streamed, elapsed = await keystroke_latency(args.deltas, args.keys, args.interval)
    startup, repaint, everything, widgets = await paint_session(args.messages)

    rows = [
        ("keystroke → screen when idle, median", f"{statistics.median(idle):.1f} ms"),
        ("keystroke → screen while streaming, median", f"{statistics.median(latencies):.1f} ms"),
        ("keystroke → screen while streaming, p95", f"{p95(latencies):.1f} ms"),
        ("keystroke → screen while streaming, max", f"{max(latencies):.1f} ms"),
        ("keystrokes measured", str(len(latencies))),
        ("deltas streamed meanwhile", f"{streamed} ({streamed / elapsed:.0f}/s)"),
        (f"start-up with a {args.messages}-message session", f"{startup:.0f} ms ({widgets} entries)"),
        (f"paint a {args.messages}-message session (last page)", f"{repaint:.0f} ms"),
        ("then show one earlier page", f"{everything:.0f} ms"),
        (
            f"frame time streaming {achieved:.0f} tokens/s into {args.frame_messages:,} messages, "
            "median / p95 / max",
            _triple(frames),
        ),
        ("the same frames in CPU time, median / p95 / max", _triple(cpu)),
        ("frames measured", str(len(frames))),
        ("event-loop lag meanwhile, median / p95 / max", _triple(lags)),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"{'metric':<{width}}  value")
    print(f"{'-' * width}  {'-' * 24}")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    asyncio.run(main())
