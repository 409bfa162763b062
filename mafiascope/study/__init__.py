"""Studies: a spec of arms (line-up x rules x battery x language), a plan with a cost estimate,
a resumable ledger, a budget, and one runner on the Arena's local or Ray executor (docs/studies.md).

* :mod:`.spec`      -- the study YAML (pydantic; errors name file and field)
* :mod:`.schedule`  -- every game of every arm: id, seed, seating, game config
* :mod:`.estimate`  -- calls, tokens, money and duration per arm, with a 90 % interval
* :mod:`.calibrate` -- measures the bundled estimate profiles (defaults.json) from bot games
* :mod:`.ledger`    -- the append-only, flock-guarded ledger (claims, states, dead runners)
* :mod:`.usage`     -- one game's calls and tokens per backend from its logs, and its price
* :mod:`.run`       -- preflight, plan, ``run_study``
* :mod:`.status`    -- status (spend, faults, estimate vs actual) and the per-arm report
"""
