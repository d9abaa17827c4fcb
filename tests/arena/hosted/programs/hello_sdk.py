"""Imports the SDK and plays one random card: a Python bot's code runs in the sandbox."""
import os
import sys

from sueca.engine import Card  # noqa: F401 - the SDK's engine must import inside

print("py", sys.version_info[:2], "uid", os.getuid(), "cwd", os.getcwd(),
      "env", ",".join(sorted(os.environ)))
