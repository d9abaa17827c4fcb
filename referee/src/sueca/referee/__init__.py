"""Sueca referee: the pure rules engine (:mod:`sueca.engine`) and the gRPC service around it.

Importing this package imports nothing: the engine must stay free of grpc, redis, celery and
prometheus so that bots, tools and tests can use it alone.
"""
