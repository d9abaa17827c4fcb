"""Short-lived locks (``lock:{name}``, SET NX PX): one ladder tick, one retention run at a
time. Only the holder of a lock's token renews or releases it."""

from __future__ import annotations

import secrets

from sueca.arena.store.client import StoreBase

__all__ = ["LockStore"]

# KEYS: lock   ARGV: token, ttl ms.   Extend the lock only if we still hold it.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
else return 0 end
"""

# KEYS: lock   ARGV: token.   Compare-and-delete: only the holder releases it.
_UNLOCK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1])
else return 0 end
"""


class LockStore(StoreBase):
    """Taking, renewing and releasing named locks."""

    def lock(self, name: str, ttl: float) -> str | None:
        """Take lock ``name`` for ``ttl`` seconds; returns the token to release it, or None."""
        token = secrets.token_hex(8)
        if self.r.set(self.keys.lock(name), token, nx=True, px=max(1, int(ttl * 1000))):
            return token
        return None

    def renew_lock(self, name: str, token: str, ttl: float) -> bool:
        """Extend lock ``name`` by ``ttl`` seconds if we still hold it (a long job's heartbeat)."""
        return bool(self.script(_RENEW)(keys=[self.keys.lock(name)],
                                        args=[token, max(1, int(ttl * 1000))]))

    def unlock(self, name: str, token: str) -> bool:
        """Release a lock only if we still hold it (a compare-and-delete)."""
        return bool(self.script(_UNLOCK)(keys=[self.keys.lock(name)], args=[token]))

    def lock_key(self, name: str) -> str:
        """The key of lock ``name`` (to name it in a message)."""
        return self.keys.lock(name)
