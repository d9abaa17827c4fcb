"""Hosted bots: authors' code run by the arena on its own hosts, each bot contained as a hostile
program (:mod:`.sandbox`), speaking to the referee only through ``sueca-bot run`` and ``exec:``."""
