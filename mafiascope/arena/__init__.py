"""The Arena: rosters of models, balanced ten-seat schedules, a resumable ledger, leaderboards.

* :mod:`.roster`   -- roster YAML (label -> backend entry); the bot presets form the default roster
* :mod:`.schedule` -- balanced random seating (every model about equally often, in every role)
* :mod:`.ledger`   -- the run's JSONL ledger of scheduled/finished game ids (resume)
* :mod:`.run`      -- batches through the local (asyncio) or Ray executor
* :mod:`.scoring`  -- leaderboards, pairs and rule-set measures computed from recorded events only
"""
