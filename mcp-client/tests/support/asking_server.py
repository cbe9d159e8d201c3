"""An MCP server (official Python SDK) whose tools ask the client back:
sampling/createMessage, elicitation/create, roots/list. Each tool answers
JSON saying what came back, or {"error": ...} with the client's JSON-RPC
error. Usage: asking_server.py (stdio).
"""

import json

from mcp.server.fastmcp import Context, FastMCP
from mcp.shared.exceptions import McpError
from mcp.types import (
    ModelHint,
    ModelPreferences,
    SamplingMessage,
    TextContent,
    Tool,
)

mcp = FastMCP("asking-server")


def _error(e: McpError) -> str:
    return json.dumps({"error": e.error.message, "code": e.error.code})


@mcp.tool()
async def ask_model(ctx: Context, prompt: str, max_tokens: int = 100000, hint: str = "",
                    with_tools: bool = False) -> str:
    """Asks the client's model (sampling/createMessage)."""
    prefs = ModelPreferences(hints=[ModelHint(name=hint)]) if hint else None
    tools = None
    if with_tools:
        tools = [Tool(name="lookup", description="Looks a word up.",
                      inputSchema={"type": "object", "properties": {"word": {"type": "string"}}})]
    try:
        r = await ctx.session.create_message(
            messages=[SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
            max_tokens=max_tokens,
            system_prompt="You answer for a tool.",
            model_preferences=prefs,
            tools=tools,
            related_request_id=ctx.request_id,
        )
    except McpError as e:
        return _error(e)
    return json.dumps(r.model_dump(mode="json", exclude_none=True))


@mcp.tool()
async def ask_user(ctx: Context, question: str, name_default: str = "") -> str:
    """Asks the user (elicitation/create, form mode) for a name (required;
    with a default when name_default is given) and an age (default 30)."""
    name = {"type": "string", "description": "Your name"}
    if name_default:
        name["default"] = name_default
    schema = {
        "type": "object",
        "properties": {"name": name, "age": {"type": "integer", "default": 30}},
        "required": ["name"],
    }
    try:
        r = await ctx.session.elicit_form(question, schema, related_request_id=ctx.request_id)
    except McpError as e:
        return _error(e)
    return json.dumps(r.model_dump(mode="json", exclude_none=True))


@mcp.tool()
async def roots(ctx: Context) -> str:
    """Lists the client's roots."""
    try:
        r = await ctx.session.list_roots()
    except McpError as e:
        return _error(e)
    return json.dumps([{"uri": str(x.uri), "name": x.name} for x in r.roots])


@mcp.tool()
async def capabilities(ctx: Context) -> str:
    """The capabilities the client advertised at initialize."""
    caps = ctx.session.client_params.capabilities
    return json.dumps(caps.model_dump(mode="json", exclude_none=True))


if __name__ == "__main__":
    mcp.run("stdio")
