"""A bare MCP server over stdio (JSON-RPC lines, no SDK), for tools/list
answers an SDK would not send: broken input schemas, and many tools.

Usage: raw_server.py [COUNT]

Lists the tools of SCHEMAS below, then COUNT tools `t0`, `t1`, ... (0 when
not given). Every tool call answers the called tool's name.
"""

import json
import sys

OBJECT = {"type": "object", "properties": {"text": {"type": "string"}}}

SCHEMAS = {
    "good": OBJECT,
    # Repaired: a top-level type that is not "object" (here null).
    "null_type": {"type": None},
    "string_root": {"type": "string"},
    # Repaired: ["string", "null"] becomes "string" with nullable.
    "nullable_list": {
        "type": "object",
        "properties": {"x": {"type": ["string", "null"]}},
    },
    # Repaired: a default beside a $ref is dropped.
    "ref_default": {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/P", "default": {"x": 1}}},
        "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}}},
    },
    # Not usable: a recursive $ref, and a $ref to a missing definition.
    "recursive": {
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"next": {"$ref": "#/$defs/Node"}},
            }
        },
    },
    "dangling": {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/Missing"}},
    },
}


def tools(count):
    listed = [
        {"name": name, "description": f"raw tool {name}", "inputSchema": schema}
        for name, schema in SCHEMAS.items()
    ]
    listed += [
        {"name": f"t{i}", "description": f"numbered tool {i}", "inputSchema": OBJECT}
        for i in range(count)
    ]
    return listed


def answer(msg_id, result):
    line = json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result})
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method = msg.get("method")
        msg_id = msg.get("id")
        if msg_id is None:
            continue
        if method == "initialize":
            answer(
                msg_id,
                {
                    "protocolVersion": msg["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "raw", "version": "0"},
                },
            )
        elif method == "tools/list":
            answer(msg_id, {"tools": tools(count)})
        elif method == "tools/call":
            name = msg["params"]["name"]
            answer(msg_id, {"content": [{"type": "text", "text": name}]})
        else:
            answer(msg_id, {})


if __name__ == "__main__":
    main()
