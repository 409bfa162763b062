"""Playing games: the one game loop (:mod:`.game`), a new game's seating (:mod:`.seating`), and the
one runner every multi-game front end goes through (:mod:`.runner`: jobs, the flock-guarded
ledger in :mod:`.ledger`, the local and Ray executors in :mod:`.executors`, what a game cost in
:mod:`.usage`); :mod:`.batch` is ``mafiascope batch`` over that runner and :mod:`.conformance`
checks a played game against the engine's invariants."""
