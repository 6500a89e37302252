"""The console's DAG pictures (cyclone_py/console/graph.py) with the real
Graphviz ``dot``: one node per step with its state, a layout made once per
shape of a definition, names as text, nothing without ``dot``."""

from __future__ import annotations

import re

from cyclone_py.console.graph import GraphNode, Layouts, to_dot

SHOP = [GraphNode("fetch", "task", []), GraphNode("charge", "task", ["fetch"]),
        GraphNode("approve", "wait", ["charge"]), GraphNode("invoice", "child", ["charge"])]


def test_one_node_per_step_with_its_state_link_and_edges() -> None:
    layouts = Layouts()
    svg = layouts.render(SHOP, {"fetch": "completed", "charge": "discarded"}, {"invoice": "/runs/abc"})
    assert svg is not None
    groups = re.findall(r'<g id="n(\d+)" class="node step-(\w+)" data-node="(\w+)"', svg)
    assert groups == [("0", "completed", "fetch"), ("1", "discarded", "charge"), ("2", "unknown", "approve"),
                      ("3", "unknown", "invoice")]
    assert svg.count('class="edge"') == 3
    assert 'xlink:href="/runs/abc"' in svg and 'xlink:href="#step-0"' in svg
    assert ">(wait)</text>" in svg and ">(child)</text>" in svg
    assert "__node_" not in svg and "__title_" not in svg and "<!--" not in svg


def test_a_definition_is_laid_out_once_and_coloured_per_render() -> None:
    layouts = Layouts()
    first = layouts.render(SHOP, {"fetch": "running"}, {})
    second = layouts.render(SHOP, {"fetch": "completed"}, {})
    assert layouts.layouts_made == 1
    assert first is not None and second is not None and first != second
    assert 'class="node step-running"' in first and 'class="node step-completed"' in second
    layouts.render(SHOP[:2], {}, {})
    assert layouts.layouts_made == 2


def test_names_with_markup_quotes_and_backslashes_are_text() -> None:
    name = '<script>alert("x")</script> & \\ "q"'
    nodes = [GraphNode(name, "task", []), GraphNode("b", "task", [name])]
    svg = Layouts().render(nodes, {name: "discarded"}, {})
    assert svg is not None
    assert "<script" not in svg
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; \\ &quot;q&quot;</text>" in svg
    assert 'label="&lt;script&gt;' not in to_dot(nodes) and '\\\\ \\"q\\"' in to_dot(nodes)
    assert svg.count('class="edge"') == 1


def test_no_picture_without_dot() -> None:
    layouts = Layouts(dot=None)
    assert not layouts.available and layouts.render(SHOP, {}, {}) is None
    assert not Layouts(dot="no-such-dot-program").available
