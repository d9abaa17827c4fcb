"""``python -m sueca.sdk.cli``: the same as ``sueca-bot``."""

import sys

from sueca.sdk.cli import main

sys.exit(main())
