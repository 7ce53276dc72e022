"""The MCP surface over planning_core: the server object (app), its tools, resources and prompts,
the notices it sends, the board as an MCP App, and the one place the SDK's private parts are
reached (sdk). Below the transports that carry it; never imports them or the command line."""
