"""Words the game is played in, shared by every layer above the logs: role labels and their
codes (labels.py), the Russian spellings of the default name pool (names.py). Pure data and
pure functions; nothing here imports another mafiascope package."""
