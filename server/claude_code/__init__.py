"""Claude Code's hooks (`planning-mcp hook EVENT`): the hook itself and its per-session state.
Loads no MCP SDK and nothing of the server's MCP surface, so each hook starts fast."""
