"""Session.write_loop's wake-ups, unit level: a fake stream write that can be held open shows
what leaves when (the wire-level behaviour is test_sessions.py's, on a real referee)."""

from __future__ import annotations

import asyncio

from sueca.referee.sessions import MAX_BATCH, Session


class HeldWrite:
    """An async write that records each message and, while ``hold`` is clear, does not return."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.hold = asyncio.Event()
        self.hold.set()
        self.entered = asyncio.Event()

    async def __call__(self, msg: bytes) -> None:
        self.sent.append(msg)
        self.entered.set()
        await self.hold.wait()


async def _settle() -> None:
    """Let every ready task run a few steps: yields to the loop, no time passes."""
    for _ in range(5):
        await asyncio.sleep(0)


def test_push_sends_at_once_and_lazy_events_wait_for_the_next_push() -> None:
    async def main() -> list[bytes]:
        s = Session("bot", 1)
        write = HeldWrite()
        task = asyncio.create_task(s.write_loop(write))
        await _settle()
        assert write.sent == []  # nothing queued: the writer sleeps
        s.push_lazy(b"E1")
        await _settle()
        assert write.sent == []  # a lazy event alone never leaves
        s.push(b"T1")
        await _settle()
        assert write.sent == [b"E1T1"]
        # a push while a write is in flight leaves right after it, a lazy one does not
        write.hold.clear()
        s.push(b"T2")
        await _settle()
        s.push_lazy(b"E2")
        s.push(b"T3")
        s.push_lazy(b"E3")
        await _settle()
        assert write.sent == [b"E1T1", b"T2"]
        write.hold.set()
        await _settle()
        assert write.sent == [b"E1T1", b"T2", b"E2T3E3"]
        # lazy events queued during the last write wait: no message of their own
        write.hold.clear()
        s.push(b"T4")
        await _settle()
        s.push_lazy(b"E4")
        write.hold.set()
        await _settle()
        assert write.sent[-1] == b"T4" and s.out == [b"E4"]
        s.close()
        await asyncio.wait_for(task, 1)  # closing wakes the writer, which sends what is left
        return write.sent

    assert asyncio.run(main())[-1] == b"E4"


def test_more_than_a_batch_goes_on_without_a_new_wake_up() -> None:
    async def main() -> list[bytes]:
        s = Session("bot", 1)
        write = HeldWrite()
        task = asyncio.create_task(s.write_loop(write))
        for _ in range(MAX_BATCH + 3):
            s.push(b"x")
        await _settle()
        assert [len(m) for m in write.sent] == [MAX_BATCH, 3]  # before any other wake-up
        s.close()
        await asyncio.wait_for(task, 1)
        return write.sent

    sent = asyncio.run(main())
    assert [len(m) for m in sent] == [MAX_BATCH, 3]
