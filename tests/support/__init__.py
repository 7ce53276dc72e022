"""What the tests share, one module per concern (import the module you need):

- seed: the contract's example plan (names, subjects, the texts it shows) and plan factories
- files: what is on disk (tree hashes, task files, hand edits, the mirror check)
- mcp: talking to a server (result text, stdio server parameters and clients)
- procs: children we start (the CLI, `serve` on a free port) and bounded waits
- raw_stdio: a stdio server spoken to in raw JSON-RPC text
- terminal: a private tmux server, for what a real terminal shows

The file auditor (bench/audit.py) and the kill -9 kit (bench/crashkit.py) live in bench/,
because bench/soak.py runs them too; tests import them from there."""
