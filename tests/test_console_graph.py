"""The console's DAG pictures (cyclone_py/console/graph.py) with the real
Graphviz ``dot``: one node per step with its state, a layout made once per
shape of a definition, names as text, nothing without ``dot``; user text is
never substituted into (issue 30, finding 10); a page never waits long for
``dot``, and a graph too large for a picture gets none (finding 7)."""

from __future__ import annotations

import os
import re
import shutil
import stat
import time
from pathlib import Path

import pytest

from cyclone_py.console.graph import GraphNode, Layouts, Refused, compile_svg, condition_label, to_dot

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
    assert "<title>charge: discarded</title>" in svg and 'xlink:title="charge: discarded"' in svg
    assert ">(wait)</text>" in svg and ">(child)</text>" in svg
    assert "__node_" not in svg and "__title_" not in svg and "<!--" not in svg and "<!DOCTYPE" not in svg


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
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; \\ &#34;q&#34;</text>" in svg
    assert 'label="&lt;script&gt;' not in to_dot(nodes) and '\\\\ \\"q\\"' in to_dot(nodes)
    assert svg.count('class="edge"') == 1


def test_names_that_look_like_placeholders_are_drawn_as_themselves() -> None:
    """The layout's per-run parts were markers (``__node_i__``, ``__title_i__``)
    replaced over the whole SVG text, node labels included: a node named
    ``__node_1__`` was drawn with node 1's link as its label, a title holding
    ``__title_0__`` showed node 0's title. Each node's label, link and title
    are its own now."""
    nodes = [GraphNode("__node_1__", "task", []), GraphNode("b __title_0__ __node_0__", "task", ["__node_1__"])]
    states = {"__node_1__": "completed", "b __title_0__ __node_0__": "running"}
    svg = Layouts().render(nodes, states, {"b __title_0__ __node_0__": "/runs/child"})
    assert svg is not None
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert texts == ["__node_1__", "b __title_0__ __node_0__"]
    assert re.findall(r"<title>([^<]*)</title>", svg) == [
        "run", "__node_1__: completed", "b __title_0__ __node_0__: running", "n0-&gt;n1"]
    assert re.findall(r'xlink:href="([^"]*)"', svg) == ["#step-0", "/runs/child"]
    assert re.findall(r'data-node="([^"]*)"', svg) == ["__node_1__", "b __title_0__ __node_0__"]


def test_a_drawing_with_anything_but_a_dot_drawing_is_refused() -> None:
    """The SVG is rebuilt from its elements, and only those a ``dot`` drawing
    uses are kept: anything else refuses the picture (whatever ``dot`` did)."""
    nodes = [GraphNode("a", "task", [])]
    good = ('<svg xmlns="http://www.w3.org/2000/svg" width="1pt"><g id="graph0" class="graph">'
            '<g id="n0" class="node"><title>n0</title><text x="1">a</text></g></g></svg>')
    assert len([p for p in compile_svg(good, nodes) if isinstance(p, tuple)]) == 5
    for bad in [good.replace("<text", "<script>alert(1)</script><text"),
                good.replace('<text x="1">', '<text x="1" onclick="alert(1)">'),
                good.replace("<text", '<image href="x"/><text'),
                good.replace('<g id="n0" class="node">', '<g id="n0" class="node"><a href="javascript:x">').replace(
                    "</text></g>", "</text></a></g>"),
                good.replace('id="n0"', 'id="n7"'),
                good.replace('<g id="n0" class="node"><title>n0</title><text x="1">a</text></g>', ""),
                good[:-6]]:
        with pytest.raises(Refused):
            compile_svg(bad, nodes)


def test_no_picture_without_dot() -> None:
    layouts = Layouts(dot=None)
    assert not layouts.available and layouts.render(SHOP, {}, {}) is None
    assert layouts.picture(SHOP, {}, {}).status == "no-dot"
    assert not Layouts(dot="no-such-dot-program").available


def test_a_graph_past_the_node_or_edge_bound_gets_no_picture_and_no_dot() -> None:
    chain = [GraphNode(f"n{i}", "task", [f"n{i - 1}"] if i else []) for i in range(301)]
    layouts = Layouts()
    big = layouts.picture(chain, {}, {})
    assert (big.status, big.svg) == ("too-large", None) and "301 nodes" in big.detail
    assert layouts.picture(chain[:300], {}, {}).status == "drawn"
    dense = [GraphNode(f"n{i}", "task", [f"n{j}" for j in range(i)]) for i in range(40)]  # 780 edges
    assert layouts.picture(dense, {}, {}).status == "too-large"
    assert layouts.layouts_made == 1


def slow_dot(tmp_path: Path, seconds: float) -> str:
    """A ``dot`` that sleeps ``seconds`` before it runs the real one."""
    real = shutil.which("dot")
    assert real is not None
    path = tmp_path / "dot"
    path.write_text(f"#!/bin/sh\nsleep {seconds}\nexec {real} \"$@\"\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return os.fspath(path)


def test_a_page_waits_for_dot_at_most_its_wait_and_shows_the_picture_once_made(tmp_path: Path) -> None:
    layouts = Layouts(slow_dot(tmp_path, 1.5), wait=0.2)
    try:
        start = time.monotonic()
        first = layouts.picture(SHOP, {}, {})
        assert time.monotonic() - start < 1.0
        assert (first.status, first.svg) == ("pending", None) and "being laid out" in first.detail
        again = layouts.picture(SHOP, {}, {})  # the same layout, not a second dot
        assert again.status == "pending"
        time.sleep(2.0)
        assert layouts.picture(SHOP, {}, {}).status == "drawn" and layouts.layouts_made == 1
    finally:
        layouts.close()


def test_dot_past_its_timeout_is_killed_and_the_shape_remembered_without_a_picture(tmp_path: Path) -> None:
    layouts = Layouts(slow_dot(tmp_path, 3), timeout=0.5, wait=2.0)
    try:
        start = time.monotonic()
        failed = layouts.picture(SHOP, {}, {})
        assert time.monotonic() - start < 2.0
        assert failed.status == "failed" and "more than 0.5 s" in failed.detail
        assert layouts.picture(SHOP, {}, {}).status == "failed" and layouts.layouts_made == 1
    finally:
        layouts.close()


def test_a_note_follows_a_nodes_state_in_its_title() -> None:
    """SPEC 16: a map node is drawn once; its title counts its items."""
    layouts = Layouts()
    nodes = [GraphNode("list", "task", []), GraphNode("resize", "map", ["list"])]
    svg = layouts.render(nodes, {"resize": "waiting"}, {}) or ""
    assert "<title>resize: waiting</title>" in svg
    noted = layouts.picture(nodes, {"resize": "waiting"}, {}, {"resize": "2 of 3 items done"}).svg or ""
    assert "<title>resize: waiting (2 of 3 items done)</title>" in noted


def test_a_condition_labels_the_edges_into_its_node_and_is_part_of_the_shape() -> None:
    """SPEC 16's when/unless on the edges into the node (a root's in its own label), cut to 40 characters;
    the same graph with another condition is another layout."""
    assert condition_label(None) == condition_label({"over": "input.x"}) == ""
    assert condition_label({"when": {"input": {"go": True}}}) == "when input.go = true"
    assert condition_label({"when": {"deps": {"a": {"ok": 1, "n": [1]}}}, "unless": {"input": {}}}) == (
        "when deps.a.ok = 1, deps.a.n = [1]; unl…")
    nodes = [GraphNode("a", "task", [], condition_label({"unless": {"input": {"off": True}}})),
             GraphNode("b", "event", ["a"], condition_label({"when": {"input": {"go": True}}})),
             GraphNode("c", "await", ["a", "b"], "when input.go = true")]
    layouts = Layouts()
    svg = layouts.render(nodes, {}, {}) or ""
    edges = re.findall(r'<g id="edge\d+" class="edge">(.*?)</g>', svg, re.DOTALL)
    assert [re.findall(r"<text[^>]*>([^<]*)</text>", e) for e in edges] == [["when input.go = true"]] * 3
    assert re.findall(r'data-node="([^"]*)"', svg) == ["a", "b", "c"]
    assert ">unless input.off = true</text>" in svg  # a root's condition: in its own label
    assert ">(event)</text>" in svg and ">(await)</text>" in svg
    assert "shape=cds" in to_dot(nodes) and "shape=octagon" in to_dot(nodes)
    assert layouts.layouts_made == 1
    layouts.render([*nodes[:2], GraphNode("c", "await", ["a", "b"], "when input.go = false")], {}, {})
    assert layouts.layouts_made == 2


def test_a_condition_holding_markup_quotes_and_backslashes_is_text() -> None:
    hostile = condition_label({"when": {"input": {"x": '<script>"q" & \\'}}})
    nodes = [GraphNode("a", "task", []), GraphNode("b", "task", ["a"], hostile)]
    svg = Layouts().render(nodes, {}, {}) or ""
    assert "<script" not in svg and svg.count('class="edge"') == 1
    assert ">when input.x = &#34;&lt;script&gt;\\&#34;q\\&#34; &amp; \\\\&#34;</text>" in svg
    assert re.findall(r'data-node="([^"]*)"', svg) == ["a", "b"]
