"""Learning agents for Sueca (the SDK's ``rl`` extra: ``pip install "./sdk[rl]"``).

- :func:`env` / :func:`raw_env`: the PettingZoo AEC environment, four learning seats;
- :class:`SuecaGymEnv`: one learning seat for Gymnasium, the other three played by bots;
- :class:`VectorSuecaEnv`: thousands of matches stepped at once on numpy arrays (Gymnasium's
  vector API), for learning at scale;
- :func:`encode`: the observation array of any :class:`sueca.engine.Observation`, the very
  array the environments give;
- :class:`PolicyBot`: a function (observation array, action mask) -> card as a
  :class:`sueca.sdk.Bot`, for self-play, ``duel``, ``loadtest`` and the network.

See docs/rl.md. The plain SDK never imports this package, so it needs none of numpy,
PettingZoo or Gymnasium.
"""

from . import _extra  # noqa: F401  # first: a clear message when the rl extra is missing
from .aec import AGENTS, SuecaEnv, env, raw_env
from .encoding import LAYOUT, OBS_SIZE, SeatEncoder, encode, mask_array
from .match import REWARDS, EncodedMatch, IllegalActionError, RewardError
from .policy import PolicyBot, PolicyError
from .single import GYM_ID, SuecaGymEnv
from .vector import VectorSuecaEnv

__all__ = ["AGENTS", "GYM_ID", "LAYOUT", "OBS_SIZE", "REWARDS", "EncodedMatch", "IllegalActionError",
           "PolicyBot", "PolicyError", "RewardError", "SeatEncoder", "SuecaEnv", "SuecaGymEnv",
           "VectorSuecaEnv",
           "encode", "env", "mask_array", "raw_env"]
