"""The test suite's kits, one module for each thing they give, imported as ``kits.NAME``.

``arena`` (league worker processes, ``sueca-arena`` as a subprocess), ``serve`` (``sueca-arena
serve`` as a subprocess), ``seed`` (a league of really recorded matches), ``net`` (a referee
process, SDK bot processes, a raw gRPC bot), ``net_fixtures`` (the network tests' fixtures),
``deals`` (decks and deals built from the rules as written), ``wait`` (the one way to wait),
``fresh_venv`` (a fresh virtual environment with part of the repository installed), and
``bots`` (bots and programs that tests start in their own processes, by path or module name).

pytest's ``pythonpath`` puts ``tests/`` on the path of the tests; child processes that import a
bot by module name get it from :data:`kits.arena.TESTS`.
"""
