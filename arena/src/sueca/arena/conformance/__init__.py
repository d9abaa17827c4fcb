"""The conformance kit (``sueca-arena conformance``): holds a bot, or a referee, to the wire
protocol of ``proto/sueca/v1/sueca.proto`` as docs/protocol.md describes it.

* Bot direction: a scripted referee (:mod:`.wire`, :mod:`.games`) plays real games through
  the engine with one bot and follows a script (:mod:`.bot_script`) that checks what the bot
  must do; :mod:`.kit` starts the bot or waits for it.
* Referee direction (:mod:`.referee_script`): hostile-bot scripts run as a client against a
  referee, checking what it promises (refusals, faults, reconnection, drain).
* :mod:`.report`: check results, the table and the JSON object.
"""
