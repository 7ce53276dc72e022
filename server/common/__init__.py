"""What every layer of the server stands on: which store a command uses and where (store_choice,
default_root), following its changes (changes), the command line's exit codes and options
(cli_common), and who may reach the HTTP endpoints (exposure). Imports nothing of server above it."""
