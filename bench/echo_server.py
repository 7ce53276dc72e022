"""The floor: the smallest MCPServer on the same SDK, one `echo` tool, served over stdio.

Every figure of planning-mcp in BENCHMARKS.md is also given as a ratio to this
server measured in the same run, so noise from a busy machine mostly cancels out.
"""

from mcp.server.mcpserver import MCPServer

server = MCPServer("echo", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    server.run("stdio")
