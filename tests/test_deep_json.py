"""A JSON value the Python runtime cannot decode (issue 30, finding 1).

``SELECT cyclone.submit('wf', (repeat('[',5000) || repeat(']',5000))::jsonb)``
killed every worker that claimed the step (RecursionError while psycopg
decoded the claim rows), and crashed ``cyclone runs``. The engine now refuses
such values at the door; these tests store one as the tables' owner, with a
direct UPDATE, as a value stored before that limit existed would be: the
runtime must hold whatever is stored.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from click.testing import Result
from helpers import FAST, WorkerProcess, one_line_error, start, step_of, wait_for

from cyclone_py import Worker, Workflow, errors
from cyclone_py.client import MAX_JSON_DEPTH, Client, Undecodable, load_json
from cyclone_py.context import StepContext
from cyclone_py.testing import Env

Conn = psycopg.Connection[tuple[object, ...]]

#: The attack of the issue, inside an object (a run input is an object).
DEEP = '{"a": ' + "[" * 5000 + "]" * 5000 + "}"


def nested(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


def store(conn: Conn, table: str, column: str, text: str, **where: Any) -> None:
    """As the tables' owner: ``UPDATE cyclone.<table> SET <column> = text::jsonb WHERE ...``."""
    cond = " AND ".join(f"{k} = %({k})s" for k in where)
    n = conn.execute(f"UPDATE cyclone.{table} SET {column} = %(v)s::jsonb WHERE {cond}", {"v": text, **where}).rowcount
    assert n >= 1


def test_load_json_stands_an_undecodable_in_for_a_value_nested_too_deeply() -> None:
    assert load_json(nested(MAX_JSON_DEPTH)) == json.loads(nested(MAX_JSON_DEPTH))
    for levels in (MAX_JSON_DEPTH + 1, 900, 5000, 100_000):
        marker = load_json(nested(levels))
        assert isinstance(marker, Undecodable), levels
        assert f"nested deeper than {MAX_JSON_DEPTH} levels" in str(marker)
        assert f"{2 * levels:,} bytes" in str(marker)
    assert isinstance(load_json(b'{"a": ' + nested(MAX_JSON_DEPTH) + b"}"), Undecodable)
    # Many brackets, little depth: decoded (the depth is measured, not guessed from the count).
    wide = json.dumps([{"k": [i, {"l": []}], "s": "[[[{{{" * 100} for i in range(2000)]).encode()
    assert load_json(wide) == json.loads(wide)
    assert isinstance(load_json(b"{not json"), Undecodable)
    assert load_json('{"str": [1]}') == {"str": [1]}


def test_load_json_decodes_utf8_and_gives_each_empty_object_its_own_dict() -> None:
    text = '{"name": "Zoë", "n": [1, 2.5, null, true]}'
    assert load_json(text.encode()) == load_json(text) == json.loads(text)
    assert isinstance(load_json(b'{"a": "\xff"}'), Undecodable)  # not UTF-8: refused, never raised
    first, second = load_json(b"{}"), load_json(b"{}")
    first["k"] = 1  # a handler may change its deps or input: the next step's must stay empty
    assert second == {} and load_json("{}") == {}


def test_a_step_whose_input_is_too_deep_fails_permanently_and_the_worker_goes_on(
    dsn: str, conn: Conn, client: Client, workers: list[Worker]
) -> None:
    wf = Workflow("deep_input")
    ran: list[Any] = []

    @wf.step()
    def a(ctx: StepContext) -> Any:
        ran.append(ctx.input)
        return "ok"

    client.define_workflow(wf.name, wf.definition())
    bad = client.submit(wf, {"a": 1})
    store(conn, "cyclone_steps", "input", DEEP, run_id=bad)
    store(conn, "cyclone_runs", "input", DEEP, id=bad)
    good = client.submit(wf, {"n": 1})
    w = start(workers, wf, dsn)
    step = wait_for(lambda: (s := step_of(client, bad, "a")).state == "discarded" and s, what="the deep step to fail")
    assert (step.error_kind, step.attempt) == ("permanent", 1)
    assert step.error is not None
    assert "its input cannot be decoded" in step.error and f"deeper than {MAX_JSON_DEPTH} levels" in step.error
    assert wait_for(lambda: client.get_run(good).terminal and client.get_run(good)).state == "completed"
    # The worker is alive and claims what comes next, by its main loop and its listener.
    later = client.submit(wf, {"n": 2})
    assert wait_for(lambda: client.get_run(later).terminal and client.get_run(later)).state == "completed"
    assert w.error is None and w._thread is not None and w._thread.is_alive()
    assert ran == [{"n": 1}, {"n": 2}]
    assert client.step(step.id).state == "discarded"  # and the step stays failed


def test_a_step_whose_dependency_output_is_too_deep_fails_permanently_in_the_harness(
    dsn: str, conn: Conn
) -> None:
    wf = Workflow("deep_deps")

    @wf.step()
    def a(ctx: StepContext) -> Any:
        return {"small": True}

    @wf.step(deps=[a])
    def b(ctx: StepContext) -> Any:
        raise AssertionError("b must not run")

    with Env(dsn, wf) as env:
        run_id = env.submit(wf)
        assert env.run_once() is not None  # a
        store(conn, "cyclone_steps", "output", DEEP, run_id=run_id, node="a")
        run = env.run_until_complete(run_id)
        assert (run.state, run.error_kind) == ("failed", "permanent")
        [discard] = env.discards
        assert (discard.node, discard.error_kind) == ("b", "permanent")
        assert discard.error is not None and "its dependencies' outputs (deps) cannot be decoded" in discard.error
        with pytest.raises(errors.UndecodableValue, match="the output of step"):
            env.steps(run_id)  # a's output: a read shows the error


def test_every_client_read_of_a_too_deep_value_raises_one_clear_error(dsn: str, conn: Conn, client: Client) -> None:
    wf = Workflow("deep_reads")

    @wf.step()
    def a(ctx: StepContext) -> Any:
        return None

    client.define_workflow(wf.name, wf.definition())
    run_id = client.submit(wf)
    store(conn, "cyclone_runs", "input", DEEP, id=run_id)
    store(conn, "cyclone_steps", "output", DEEP, run_id=run_id)
    reads: dict[str, Callable[[], object]] = {
        "get_run": lambda: client.get_run(run_id),
        "get_run_row": lambda: client.get_run_row(run_id),
        "list_runs": lambda: client.list_runs(),
        "steps": lambda: client.steps(run_id),
        "run_steps": lambda: client.run_steps(run_id),
    }
    for name, read in reads.items():
        with pytest.raises(errors.UndecodableValue) as caught:
            read()
        message = str(caught.value)
        assert f"of run {run_id}" in message, (name, message)
        assert f"nested deeper than {MAX_JSON_DEPTH} levels" in message, (name, message)
    assert "the input of run" in str(pytest.raises(errors.UndecodableValue, client.get_run, run_id).value)
    assert "the output of step" in str(pytest.raises(errors.UndecodableValue, client.steps, run_id).value)
    # What carries no payload reads as before; so does every other run.
    assert [r.id for r in client.runs_page().rows] == [run_id]
    assert client.step_counts(run_id) == {"available": 1}
    other = client.submit(wf, {"fine": True})
    assert client.get_run(other).input == {"fine": True}


def test_the_cli_shows_the_error_of_a_too_deep_value_in_one_line(
    dsn: str, conn: Conn, client: Client, invoke: Callable[..., Result]
) -> None:
    wf = Workflow("deep_cli")

    @wf.step()
    def a(ctx: StepContext) -> Any:
        return None

    client.define_workflow(wf.name, wf.definition())
    run_id = client.submit(wf)
    store(conn, "cyclone_runs", "input", DEEP, id=run_id)
    for args in (("runs",), ("runs", "--json"), ("run", str(run_id)), ("run", str(run_id), "--json"),
                 ("steps", str(run_id))):
        line = one_line_error(invoke(*args))
        assert f"nested deeper than {MAX_JSON_DEPTH} levels" in line and str(run_id) in line, (args, line)


def test_a_worker_process_survives_a_too_deep_input(dsn: str, conn: Conn, client: Client, tmp_path: Any) -> None:
    """The issue's case end to end: the worker process claimed the step and
    exited 1; now the step fails and the process serves the next run."""
    from apps.basic import basic as wf

    client.define_workflow(wf.name, wf.definition())
    bad = client.submit(wf, {"x": 1})
    store(conn, "cyclone_steps", "input", DEEP, run_id=bad)
    proc = WorkerProcess(["--dsn", dsn, "worker", "--app", "apps.basic:app", "--poll-interval", "0.2"],
                         tmp_path / "worker.log")
    try:
        first = wait_for(lambda: next((s for s in client.steps(bad) if s.state == "discarded"), None),
                         what="the deep step to fail")
        assert first.error_kind == "permanent"
        good = client.submit(wf, {"x": 2})
        assert wait_for(lambda: client.get_run(good).terminal and client.get_run(good)).state == "completed"
        assert proc.p.poll() is None, proc.text()
        assert proc.stop() == 0
        assert "RecursionError" not in proc.text()
    finally:
        proc.close()


def test_a_claim_keeps_the_other_steps_of_its_batch(dsn: str, conn: Conn, client: Client,
                                                    workers: list[Worker]) -> None:
    """One claim leases several steps; the undecodable one fails, the others run."""
    wf = Workflow("deep_batch")
    done = threading.Event()
    seen: list[int] = []

    @wf.step()
    def a(ctx: StepContext) -> Any:
        seen.append(ctx.input["i"])
        if len(seen) == 4:
            done.set()

    client.define_workflow(wf.name, wf.definition())
    ids = client.submit_many(wf, [{"i": i} for i in range(5)])
    store(conn, "cyclone_steps", "input", DEEP, run_id=ids[2])
    start(workers, wf, dsn, **{**FAST, "concurrency": 5})
    assert done.wait(20)
    assert sorted(seen) == [0, 1, 3, 4]
    assert wait_for(lambda: step_of(client, ids[2], "a").state == "discarded")


def test_an_output_the_engine_refuses_fails_its_step_and_not_its_batch(
    dsn: str, conn: Conn, client: Client, workers: list[Worker]
) -> None:
    """complete_many refuses a whole batch for one output over the engine's
    limits (22023, nothing written): the worker completes the others alone
    and fails that step as permanent with the engine's message, instead of
    leaving them all to their leases (and the bad one to come back forever)."""
    wf = Workflow("deep_output")
    together = threading.Barrier(3)

    @wf.step()
    def a(ctx: StepContext) -> Any:
        together.wait(10)
        i = ctx.input["i"]
        return json.loads(nested(150)) if i == 1 else i

    client.define_workflow(wf.name, wf.definition())
    ids = client.submit_many(wf, [{"i": i} for i in range(3)])
    start(workers, wf, dsn, concurrency=3, lease_ttl=60.0)
    runs = [wait_for(lambda r=r: client.get_run(r).terminal and client.get_run(r), what="run to finish") for r in ids]
    assert [(r.state, r.output) for r in (runs[0], runs[2])] == [("completed", {"a": 0}), ("completed", {"a": 2})]
    assert (runs[1].state, runs[1].error_kind) == ("failed", "permanent")
    assert runs[1].error is not None and "the engine refused the handler's output" in runs[1].error
    assert "nested deeper than 100 levels" in runs[1].error
    assert step_of(client, ids[1], "a").attempt == 1
