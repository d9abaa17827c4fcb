"""Bots and bot programs for the tests, started in their own processes: by path
(``sueca-bot run tests/kits/bots/faulty.py:HookRaises``, ``python tests/kits/bots/broken_client.py``)
or by module name (``kits.bots.slow:SlowBot``, with ``tests/`` on the child's ``PYTHONPATH``)."""

from pathlib import Path

#: this folder, where a test finds a bot file to name by path
DIR = Path(__file__).resolve().parent
