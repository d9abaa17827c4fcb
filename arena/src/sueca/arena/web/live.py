"""Live spectating: a running match's public events, from the referee's spectator stream
(``Watch``), passed on to the browser as server-sent events.

Only what the referee streams to any spectator goes out — the seats, each deal's dealer and
turned trump, each card as it is played, trick and deal results — never a hand. And, as for
replays, not a duplicate half whose twin is still to be played: its cards would be the twin's
decks (:meth:`~sueca.arena.league.view.LeagueView.match` says so in ``hidden``).

The referee running the match is not in Redis until the result is, so each known replica
(``SUECA_REFEREES`` and the replicas' heartbeats) is asked in turn; the one that does not answer
NOT_FOUND has it. The stream is a ``grpc.aio`` call in the server's event loop (no thread held
per spectator) and at most :data:`MAX_STREAMS` are open at once.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Sequence
from typing import TYPE_CHECKING, Any

import grpc

from sueca.codec import event_to_dict
from sueca.referee import control

if TYPE_CHECKING:
    from sueca.v1 import sueca_pb2 as pb

MAX_STREAMS = 32


class NotLive(LookupError):
    """The match is not running on any known referee (finished, queued, or unknown there)."""


class TooMany(RuntimeError):
    """Every spectator slot is taken."""


class Slots:
    """Spectator streams open now, per app (all touched from the one event loop thread)."""

    def __init__(self, limit: int = MAX_STREAMS) -> None:
        self.limit = limit
        self.open = 0


async def _first(call: grpc.aio.UnaryStreamCall[pb.WatchRequest, pb.MatchEvent],
                 ) -> pb.MatchEvent | None:
    async for event in call:
        return event
    return None


async def open_watch(slots: Slots, addresses: Sequence[str],  # Any: a referee event as JSON
                     match_id: str) -> AsyncGenerator[dict[str, Any], None]:
    """The match's events as dicts (``sueca.codec.event_to_dict``), from its first on; raises
    :class:`NotLive` before yielding anything when no replica runs it."""
    if slots.open >= slots.limit:
        raise TooMany(f"{slots.limit} spectators are watching already; try again shortly")
    slots.open += 1
    try:
        for address in addresses:
            channel = control.aio_channel(address)
            try:
                call = control.watch_async(channel, match_id)
                try:
                    first = await asyncio.wait_for(_first(call), 5.0)
                except (grpc.aio.AioRpcError, TimeoutError):
                    call.cancel()
                    continue  # NOT_FOUND there, or that replica is gone: ask the next
                if first is None:
                    continue
                yield event_to_dict(first)
                async for event in call:
                    yield event_to_dict(event)
                return
            finally:
                await channel.close()
        raise NotLive(f"match {match_id!r} is not running on any known referee "
                      f"({', '.join(addresses) or 'none known'})")
    finally:
        slots.open -= 1


def sse(event: dict[str, Any]) -> bytes:  # Any: a referee event as JSON (open_watch's)
    """One server-sent event: the event's type as its name, the event as JSON data."""
    data = json.dumps(event, separators=(",", ":"))
    return f"event: {event.get('type', 'message')}\ndata: {data}\n\n".encode()


__all__ = ["open_watch", "sse", "Slots", "NotLive", "TooMany", "MAX_STREAMS"]
