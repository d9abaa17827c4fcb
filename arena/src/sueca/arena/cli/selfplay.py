"""``sueca-arena selfplay``: the SDK's ``sueca-bot selfplay``, same options, same output.

One implementation (:mod:`sueca.sdk.cli.selfplay` and :mod:`sueca.sdk.selfplay`) so that a bot
author with the SDK alone and an operator with the whole arena see the same numbers for the same
seed; the names below stay importable from here.
"""

from __future__ import annotations

from sueca.sdk.cli.selfplay import add_parser, run, summary_table
from sueca.sdk.selfplay import bot_labels, match_seed, selfplay, wilson

__all__ = ["add_parser", "bot_labels", "match_seed", "run", "selfplay", "summary_table", "wilson"]
