"""Foreign code in a process of its own: :func:`call` runs ``function(*args)`` in a worker process and returns
what happened — its return value, the exception it raised, its ``sys.exit``, the end of its process, or no answer
within a time limit (the worker is then killed: a hang really stops).

A worker is a fresh ``python -m ovn_cvx.verify._worker`` (no ``fork`` of this process and its threads, no
re-import of the caller's ``__main__``), started on first use and reused by the calls after it, so that a call
costs the transfer of its arguments and answer (cloudpickle, as joblib: lambdas, local functions and functions of
``__main__`` travel by value; other functions by reference, imported in the worker with the caller's
``sys.path``). Each call runs with one BLAS/OpenMP thread, as :func:`ovn_cvx._parallel.parallel_map` runs every
call. What the function prints goes to stderr.
"""
from __future__ import annotations

import atexit
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
import time
import dataclasses
from dataclasses import dataclass

#: the frame header: the length of the pickled message that follows
_HEADER = struct.Struct("<Q")
#: the worker's frame that says a call is loaded and starts (its time limit starts then)
_LOADED = b""
#: seconds to wait for a worker to start and load a call (its imports), when the call's own limit is shorter
LOAD_TIME_LIMIT = 120.0


@dataclass(frozen=True)
class Outcome:
    """What became of one call: ``kind`` "returned" (``value``), "raised", "exited" (sys.exit), "died" (the
    process ended: ``os._exit``, a crash), "timeout", "unrunnable" (the call cannot be pickled here or loaded
    there) or "unsendable" (its answer cannot be pickled there or loaded here);
    ``message`` says what happened; ``seconds`` is the call's own duration (measured in the worker) or the time
    waited; ``load_seconds`` the time before the call started: the worker's start when it was new, and the
    transfer and unpickling of the call (its imports)."""

    kind: str
    value: object = None
    message: str = ""
    seconds: float = 0.0
    load_seconds: float = 0.0


def _read_frame(stream) -> bytes | None:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    body = stream.read(size)
    return body if len(body) == size else None


def _write_frame(stream, body: bytes) -> None:
    stream.write(_HEADER.pack(len(body)) + body)
    stream.flush()


class _Worker:
    """One worker process and the thread that reads its answers (so that waiting for one can time out)."""

    def __init__(self):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self.process = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, env=env)
        self.answers: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while (frame := _read_frame(self.process.stdout)) is not None:
            self.answers.put(frame)
        self.answers.put(None)  # the process ended

    def call(self, request: bytes, time_limit: float) -> Outcome:
        """Send the call; wait for it to be loaded (the worker's start and the imports its unpickling needs are
        not the call's time), then at most ``time_limit`` seconds for its answer."""
        sent = start = time.perf_counter()
        limit = max(time_limit, LOAD_TIME_LIMIT)
        message = f"its worker process did not start and load it within {limit:g} s (stopped)"
        try:
            _write_frame(self.process.stdin, request)
            frame = self.answers.get(timeout=limit)
            if frame == _LOADED:
                start, message = time.perf_counter(), f"no answer within the time limit of {time_limit:g} s (stopped)"
                frame = self.answers.get(timeout=time_limit)
        except queue.Empty:
            self.stop()
            return Outcome("timeout", message=message, seconds=time.perf_counter() - start)
        except OSError:  # the process had ended: its pipe is closed
            frame = None
        if frame is None:
            self.stop()
            return Outcome("died", message=f"its process ended (exit status {self.process.returncode})",
                           seconds=time.perf_counter() - start)
        try:
            return dataclasses.replace(pickle.loads(frame), load_seconds=start - sent)
        except Exception as err:  # noqa: BLE001 — e.g. an answer of a class this process cannot import
            return Outcome("unsendable", message=f"its answer cannot be loaded here ({type(err).__name__}: {err})",
                           seconds=time.perf_counter() - start)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.alive:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            stream.close()


#: idle workers of this process (a thread takes one, or starts one, for each call)
_IDLE: list[_Worker] = []
_LOCK = threading.Lock()


@atexit.register
def _stop_all() -> None:
    with _LOCK:
        while _IDLE:
            _IDLE.pop().stop()


def call(function, args: tuple, time_limit: float) -> Outcome:
    """Run ``function(*args)`` in a worker process, waiting at most ``time_limit`` seconds for its answer."""
    from .._parallel import cloudpickle

    try:
        request = pickle.dumps((list(sys.path), cloudpickle().dumps((function, args))))
    except Exception as err:  # noqa: BLE001 — whatever cannot be pickled cannot run in another process
        return Outcome("unrunnable", message=f"cannot be sent to a worker process ({type(err).__name__}: {err})")
    with _LOCK:
        worker = _IDLE.pop() if _IDLE else None
    worker = worker if worker is not None and worker.alive else _Worker()
    try:
        outcome = worker.call(request, time_limit)
    except BaseException:  # interrupted while waiting: the call may still be running
        worker.stop()
        raise
    if worker.alive:
        with _LOCK:
            _IDLE.append(worker)
    return outcome


def _load(request: bytes):
    """In the worker: the call ``(function, args)`` unpickled with the caller's sys.path, or the Outcome that says
    why it cannot be."""
    from .._parallel import cloudpickle

    path, payload = pickle.loads(request)
    sys.path[:] = path
    try:
        return cloudpickle().loads(payload)
    except Exception as err:  # noqa: BLE001 — e.g. its module cannot be imported here
        return Outcome("unrunnable", message=f"cannot be loaded in a worker process ({type(err).__name__}: {err})")


def _run(function, args) -> Outcome:
    """In the worker: run the call, one BLAS thread."""
    from threadpoolctl import threadpool_limits

    start = time.perf_counter()
    try:
        with threadpool_limits(limits=1):
            value = function(*args)
    except SystemExit as exc:
        return Outcome("exited", message=f"called sys.exit({exc.code!r})", seconds=time.perf_counter() - start)
    except Exception as err:  # noqa: BLE001 — the foreign code's failure is its outcome
        return Outcome("raised", message=f"{type(err).__name__}: {err}", seconds=time.perf_counter() - start)
    return Outcome("returned", value, seconds=time.perf_counter() - start)


def _serve() -> None:
    """The worker's loop: a call per frame on stdin, its :class:`Outcome` as a frame on the original stdout."""
    from .._parallel import cloudpickle

    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # the function's prints must not corrupt the frames
    while (request := _read_frame(sys.stdin.buffer)) is not None:
        call = _load(request)
        if isinstance(call, Outcome):
            outcome = call
        else:
            _write_frame(answers, _LOADED)
            outcome = _run(*call)
        try:
            reply = cloudpickle().dumps(outcome)
        except Exception as err:  # noqa: BLE001 — an answer that cannot be pickled
            reply = pickle.dumps(Outcome("unsendable", message=f"returned a {type(outcome.value).__name__} that "
                                         f"cannot be sent back ({type(err).__name__}: {err})",
                                         seconds=outcome.seconds))
        _write_frame(answers, reply)


if __name__ == "__main__":  # the worker: its Outcome must be this module's class, not __main__'s
    from ovn_cvx.verify._worker import _serve as serve

    serve()
