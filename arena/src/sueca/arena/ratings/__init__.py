"""Ratings, pure (no Redis): the rating of record and the live columns.

* :mod:`.fit`: the rating of record, an order-free Bradley–Terry fit over the whole results log
  with 95% intervals, each bot version rated apart; the leaderboard ranks by it (a bot as its
  current version) and the ladder pairs by it.
* :mod:`.live`: the live Elo and OpenSkill columns, a fold over the results log in log order.
* :mod:`.standings`: a tournament's table from its results.

The store (:mod:`sueca.arena.store.ratings`) keeps their state in Redis: the live fold's
ratings and cursor, the fit's matchup counts and cached fit, and the checkpoint retention
trims the log behind.
"""
