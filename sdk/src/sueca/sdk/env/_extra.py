"""Stops ``import sueca.sdk.env`` with one clear message when the SDK's ``rl`` extra is missing,
instead of a bare ``No module named 'numpy'`` from deep inside."""

import importlib.util

MISSING = [m for m in ("numpy", "pettingzoo", "gymnasium") if importlib.util.find_spec(m) is None]
if MISSING:
    raise ModuleNotFoundError(
        f"sueca.sdk.env needs {', '.join(MISSING)}, which the plain SDK does not install: "
        "pip install 'sueca-sdk[rl]' (from a checkout: pip install './sdk[rl]')",
        name=MISSING[0])
