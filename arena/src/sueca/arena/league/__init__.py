"""The league's read model, used by the CLI and the web alike.

- :mod:`.view`: :class:`~.view.LeagueView`, the read-only queries (leaderboard, bots, matches,
  a match with the hidden-information rules, tournaments);
- :mod:`.rows`: the shapes it answers with, its errors (``NotFound``, ``BadQuery``) and the
  pure row builders;
- :mod:`.fold`: the fold over the results log it keeps in the process;
- :mod:`.limits`: its bounds and filter values, cheap to import (a parser names them);
- :mod:`.competition`: a competition as its page and ``competition show`` report it.

Formatting for people is :mod:`sueca.arena.format`'s. This face imports nothing, so that
``limits`` costs a command's parser nothing more than the engine.
"""
