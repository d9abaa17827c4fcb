"""Competitions: seasons with a lifecycle (draft, open, frozen, final, closed), entries, bot
versions that play in them, and the rules their ladders and finals follow.

:mod:`.model` is the pure part (rules, times, which move is due), :mod:`.divisions` the
divisions' (split, promotion cycles, placement); the records live in
:mod:`sueca.arena.store.competitions`, the moves are made by :mod:`sueca.arena.competition_moves`
and the ladders played by :mod:`sueca.arena.competition_ladder`.
"""
