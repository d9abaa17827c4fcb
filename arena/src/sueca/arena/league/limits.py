"""The read model's bounds and filter values, in a module of their own so that a command's
parser can name them without importing the read model (which imports Redis and the ratings)."""

from __future__ import annotations

from sueca.engine.game import ABORTED, FAULT_ENDS, NORMAL, End

__all__ = ["MAX_PAGE_SIZE", "MAX_PAGE", "MATCH_ENDS", "MAX_DETAIL"]

MAX_PAGE_SIZE = 200  # rows a page (and `matches --limit`) holds at most
MAX_PAGE = 10**9  # Redis ranges are 64-bit: a larger offset would be its error, not ours
#: the ends a recorded match can have (``/matches?end=``, ``matches --end``)
MATCH_ENDS: tuple[End, ...] = (NORMAL, *FAULT_ENDS, ABORTED)
MAX_DETAIL = 300  # characters of a fault's detail shown (the referee caps it too)
