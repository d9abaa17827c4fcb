"""Load-testing one bot (``sueca-arena loadtest``): :mod:`.generator` makes the load and
measures it, :mod:`.private_arena` starts the arena a bot given by name is loaded on, and
:mod:`.report` writes the HTML report."""
