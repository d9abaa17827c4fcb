"""The store's errors: problems with the records that the user can act on; each message says
what, and quotes the id or URL it is about."""

from __future__ import annotations

__all__ = ["StoreError", "StoreUnavailable", "TotalsLost", "TournamentConflict", "UnknownMatch",
           "LeaseHeld", "RatingsError"]


class StoreError(Exception):
    """A problem with the records that the user can act on; the message says what."""


class StoreUnavailable(StoreError):
    """Redis cannot be reached at the given URL."""


class TotalsLost(StoreError):
    """The per-bot totals cannot be folded again: retention trimmed the results log behind a
    checkpoint that kept none (made by an older version)."""


class TournamentConflict(StoreError):
    """A tournament id that already exists with a different specification."""


class UnknownMatch(StoreError):
    """No match with this id is stored."""

    def __init__(self, mid: str) -> None:
        super().__init__(f"unknown match {mid!r}")
        self.mid = mid


class LeaseHeld(StoreError):
    """Another attempt holds the match's lease: it is being played elsewhere right now."""

    def __init__(self, mid: str, owner: str) -> None:
        super().__init__(f"match {mid!r} is being played by {owner!r}")
        self.mid, self.owner = mid, owner


class RatingsError(ValueError):
    """A rating operation the stored data cannot support; the message says what and why."""
