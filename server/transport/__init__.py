"""How MCP messages reach the server: our stdio transport (stdio, stdio_frames, stdio_ends) and
HTTP/SSE (http, eventstore), the latter with the board mounted beside /mcp."""
