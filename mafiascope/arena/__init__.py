"""The Arena: rosters of models, balanced or fixed ten-seat schedules, a resumable ledger, leaderboards.

* :mod:`.roster`   -- roster YAML (label -> backend entry, optional ``seating:`` of ten labels);
  the bot presets form the default roster
* :mod:`.schedule` -- balanced random seating (every model about equally often, in every role),
  or fixed seating (the same backend per seat in every game; roles dealt by the engine)
* :mod:`.ledger`   -- the run's JSONL ledger of scheduled/finished game ids (resume)
* :mod:`.run`      -- batches through the local (asyncio) or Ray executor
* :mod:`.scoring`  -- leaderboards, pairs and rule-set measures computed from recorded events only
"""
