"""The event loop ``async def`` handlers run on: :class:`EventLoop`.

One asyncio loop in one thread, owned by a worker (or a test harness) for its
whole life, so that what a handler caches on the loop (a client session, a
connection pool) outlives one step. The worker hands a claimed async step to
it from a handler thread (:class:`cyclone_py.runtime.HandlerPool`), or on
the loop's own thread when an async step's end passes its concurrency slot
to the next, holding the slot until the coroutine ends; the coroutine itself is
:func:`cyclone_py.execution.execute_async`, which turns the step's
cancellation into ``task.cancel()``. Nothing here talks to the database.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["EventLoop", "is_async_handler"]

# The worker's threads log as the worker (docs/python.md).
logger = logging.getLogger("cyclone_py.worker")

T = TypeVar("T")


def is_async_handler(fn: Callable[..., Any]) -> bool:
    """True for an ``async def`` function (also behind ``functools.partial``,
    or an object whose ``__call__`` is one): its call returns a coroutine to
    run on the loop."""
    if inspect.iscoroutinefunction(fn):  # unwraps functools.partial
        return True
    call = getattr(type(fn), "__call__", None)  # noqa: B004 - the class's __call__, to see if it is async
    return call is not None and inspect.iscoroutinefunction(call)


class EventLoop:
    """An asyncio loop running in its own daemon thread, started on first use.

    :meth:`submit` schedules a coroutine from any thread and returns a
    :class:`concurrent.futures.Future`; :meth:`close` cancels what still
    runs, stops the loop and closes it.
    """

    def __init__(self, name: str = "cyclone-aio") -> None:
        self.name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        self._spawned: list[tuple[Coroutine[Any, Any, Any], Callable[[Any], object]]] = []
        self._wake_pending = False
        self._ident: int | None = None  # the loop's thread

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise RuntimeError("the event loop is closed")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()
                thread = threading.Thread(target=self._serve, args=(loop, ready), name=self.name, daemon=True)
                thread.start()
                ready.wait()
                self._loop, self._thread, self._ident = loop, thread, thread.ident
            return self._loop

    @staticmethod
    def _serve(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        try:
            loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coro`` on the loop (from any thread but the loop's own); its
        future, to wait for."""
        try:
            loop = self._started()
        except RuntimeError:
            coro.close()
            raise
        return asyncio.run_coroutine_threadsafe(coro, loop)

    def spawn(self, coro: Coroutine[Any, Any, T], done: Callable[[asyncio.Task[T]], object]) -> None:
        """Run ``coro`` as a task on the loop and call ``done(task)`` on the
        loop's thread when it ends: :meth:`submit` without a second future
        (the worker's hot path). Coroutines spawned while the loop has not
        yet started the previous ones share one wake-up of the loop. ``done``
        must not block. Called on the loop's own thread (a step's end
        starting the next, :class:`cyclone_py.runtime.HandlerPool`), it makes
        the task at once."""
        try:
            loop = self._started()
        except RuntimeError:
            coro.close()
            raise
        if threading.get_ident() == self._ident:
            loop.create_task(coro).add_done_callback(done)
            return
        with self._lock:
            self._spawned.append((coro, done))
            wake = not self._wake_pending
            self._wake_pending = True
        if wake:
            loop.call_soon_threadsafe(self._start_spawned, loop)

    def _start_spawned(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            spawned, self._spawned = self._spawned, []
            self._wake_pending = False
        for coro, done in spawned:
            loop.create_task(coro).add_done_callback(done)

    def close(self, timeout: float = 1.0) -> int:
        """Cancel the tasks still running, give them ``timeout`` seconds to
        end, stop the loop; returns how many tasks did not end. Idempotent."""
        with self._lock:
            self._closed = True
            loop, thread = self._loop, self._thread
            self._loop = None
        if loop is None or thread is None:
            return 0

        async def cancel_all() -> int:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            if not tasks:
                return 0
            _, pending = await asyncio.wait(tasks, timeout=timeout)
            return len(pending)

        left = 0
        try:
            left = asyncio.run_coroutine_threadsafe(cancel_all(), loop).result(timeout + 1.0)
        except Exception:
            logger.exception("event loop: cancelling its tasks failed")
        if left:
            logger.warning("event loop closed with %d task(s) ignoring cancellation", left)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout + 1.0)
        with self._lock:  # spawned after the loop last woke: never started
            never, self._spawned = self._spawned, []
        for coro, _ in never:
            coro.close()
        return left + len(never)
