"""File helpers that know nothing of plans: crash-safe writes (atomic.py) and reads that
never block or read too much (regular.py). A leaf: its modules import only the standard
library, so the file store and the server's own state files (the Claude Code hook's)
share them without the server reaching below the seam."""
