"""``cyclone workflows``: the registered workflow definitions and their graphs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import click

from cyclone_py.cli.common import Settings, json_option, pass_settings
from cyclone_py.cli.output import echo_json, echo_table, short


@click.command("workflows")
@json_option
@pass_settings
def workflows(settings: Settings, as_json: bool) -> None:
    """List the registered workflow definitions."""
    defs = settings.client().workflows()
    if as_json:
        echo_json([{"name": name, "definition": d} for name, d in defs.items()])
        return

    def node(n: Mapping[str, Any]) -> str:
        kind, name = n.get("kind", "task"), short(str(n["name"]))
        if kind == "wait":
            return f"{name}[wait:{short(str(n.get('signal', n['name'])))}]"
        if kind == "child":
            return f"{name}[child:{short(str(n.get('workflow')))}]"
        return name

    def graph(nodes: Sequence[Mapping[str, Any]]) -> str:
        """Each edge as ``dep -> node``; a node with no edge at all on its own."""
        shown = {str(n["name"]): node(n) for n in nodes}
        edges = [f"{shown.get(d, short(d))} -> {shown[str(n['name'])]}" for n in nodes for d in n.get("deps", [])]
        linked = {d for n in nodes for d in n.get("deps", [])} | {str(n["name"]) for n in nodes if n.get("deps")}
        alone = [shown[name] for name in shown if name not in linked]
        return ", ".join(edges + alone)

    echo_table(
        ["workflow", "nodes", "graph"],
        [(short(name), len(d.get("nodes", [])), graph(d.get("nodes", []))) for name, d in defs.items()],
        empty="no workflows",
    )


COMMANDS = (workflows,)
