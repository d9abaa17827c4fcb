"""The Celery broker's own keys in Redis (kombu's, under ``celery:``), read only: which match
tasks wait in a queue or are held by a worker, and how long the queue is. The recovery
(:mod:`sueca.arena.recovery`) and the metrics (:mod:`sueca.arena.metrics`) read them here."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterable, Mapping
from typing import Any

from sueca.arena.store.client import StoreBase, text

__all__ = ["BrokerStore", "Held"]

#: match id -> [(age in seconds, task id)] of its messages a worker holds unacknowledged
Held = dict[str, list[tuple[float, str]]]


def _match_id(message: Mapping[str, Any]) -> tuple[str | None, str]:  # kombu's JSON
    """(match id, task id) of a kombu message as stored in Redis; (None, "") if not ours."""
    try:
        headers = message.get("headers") or {}
        body = message["body"]
        if message.get("properties", {}).get("body_encoding") == "base64":
            body = base64.b64decode(body)
        args = json.loads(body)[0]
        return (str(args[0]) if args else None), str(headers.get("id") or "")
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return None, ""


class BrokerStore(StoreBase):
    """The broker's queues and unacknowledged messages, as the arena's tasks left them."""

    def broker_messages(self, queues: Iterable[str]) -> tuple[set[str], Held]:
        """Match ids with a message waiting in ``queues``, and match id -> [(age in seconds,
        task id)] of messages delivered to a worker but not acknowledged (kombu's ``unacked``
        hash and its ``unacked_index`` of delivery times), both under the arena's Celery key
        prefix."""
        prefix = self.keys.celery_prefix()
        pipe = self.r.pipeline(transaction=False)
        names = list(queues)
        for q in names:
            pipe.lrange(prefix + q, 0, -1)
        pipe.hgetall(prefix + "unacked")
        pipe.zrange(prefix + "unacked_index", 0, -1, withscores=True)
        *lists, unacked, index = pipe.execute()
        waiting: set[str] = set()
        for items in lists:
            for raw in items:
                try:
                    mid, _ = _match_id(json.loads(raw))
                except ValueError:
                    continue
                if mid:
                    waiting.add(mid)
        delivered = {text(tag): float(score) for tag, score in index}
        t = time.time()
        held: Held = {}
        for tag, raw in unacked.items():
            try:
                mid, task = _match_id(json.loads(raw)[0])
            except (ValueError, IndexError, TypeError, KeyError):
                continue
            if mid:
                age = t - delivered.get(text(tag), t)
                held.setdefault(mid, []).append((age, task))
        return waiting, held

    def queue_depth(self, queue: str) -> int:
        """Match tasks waiting in ``queue``: kombu keeps one list per priority step (QUEUE,
        QUEUE\\x06\\x163, ...), all counted."""
        base = self.keys.celery_prefix() + queue
        pipe = self.r.pipeline(transaction=False)
        for name in [base] + [f"{base}\x06\x16{p}" for p in (3, 6, 9)]:
            pipe.llen(name)
        return int(sum(pipe.execute()))
