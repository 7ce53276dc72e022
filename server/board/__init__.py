"""The board: one self-contained page showing a plan as columns (ready, blocked, in
progress, done), served to a browser (`planning-mcp web`, and `/board` beside `/mcp`) and
as an MCP App (`ui://planning/board`) inside the chat. Data comes from planning_core only,
built once in data.py for both hosts."""
