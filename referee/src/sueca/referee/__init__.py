"""The Sueca referee: the gRPC service that hosts bot sessions and runs authoritative matches
(clocks, faults, limits, spectators) on the SDK's rules engine (:mod:`sueca.engine`) and wire
codec (:mod:`sueca.codec`).

It needs no league: the token check and heartbeat arrive through small Protocols it owns
(:class:`sueca.referee.auth.Authenticator`), so ``pip install ./sdk ./referee`` is a referee
without Celery, a Redis client, the web stack or numpy. Importing this package imports nothing.
"""
