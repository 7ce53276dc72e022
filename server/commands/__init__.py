"""The `planning-mcp` subcommands, one module a command (the board's own web server is
server/board/web.py, the Claude Code hook server/claude_code/claude_hook.py); server/cli.py
builds the parser from them."""
