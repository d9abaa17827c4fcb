"""Hosted bots: authors submit code, the arena runs it on its own bot hosts, each bot contained
as a hostile program, speaking to the referee only through ``sueca-bot run`` and ``exec:``.

* :mod:`.manifest`: ``sueca-bot.toml``, how a submission is started and built
* :mod:`.archive`: the checks a submission passes on arrival, and its canonical archive
* :mod:`.host`: ``sueca-arena bot-host``, the process that claims hosted bots and runs them
* :mod:`.sandbox` (and its shim :mod:`.enter`): bubblewrap, cgroups and rlimits around the
  bot's own code, its limits in ``sandbox-profile.toml``

The records (submissions, which host runs which bot, the owner's logs) are in
:mod:`sueca.arena.store.hosted`; ``docs/hosted-bots.md`` is the authors' and operators' page.
"""
