"""The MCP layer of planning-mcp: tools, resources and prompts over planning_core."""

__version__ = "0.1.0"
