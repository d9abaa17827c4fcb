"""``python -m sueca.arena.cli``: the same as the ``sueca-arena`` command."""

import sys

from sueca.arena.cli import main

sys.exit(main())
