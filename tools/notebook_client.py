"""nbclient's NotebookClient, with the kernel's replies read in short slices so that none is left waiting.

Why: nbclient reads the kernel's messages through jupyter_client's asyncio channels, whose
``get_msg(timeout)`` awaits pyzmq's asyncio ``poll`` once for the whole timeout. On a busy machine
that poll sometimes misses the wake-up of a message that has already arrived (ZeroMQ signals its
file descriptor on an edge, and the asyncio loop can miss it): the message sits in the socket until
the timeout fires, when pyzmq polls once more, finds it, and the run goes on as if nothing happened.
The result was a notebook run that sat idle for the whole cell timeout (300 s in the tests), the
kernel idle too, with no error. Measured on this 2-core machine with both cores loaded: of 17
notebook runs with every cell executed twice, 9 lost 60 s (the timeout used) or more, with
ipykernel 7.4 and with ipykernel 6.31 alike (the kernel answered another client at once); with
the slices below, 15 runs took 5-11 s each, and 21 replies were found by a slice's final poll.

The fix: read in slices of ``SLICE_S`` seconds. pyzmq polls the socket once more at the end of
every slice, so a missed wake-up costs at most one slice. The timeout a caller asked for still
holds, measured over all slices. nbval is not affected: it uses the blocking client, whose poll
is a real ``zmq_poll``.
"""
from __future__ import annotations

import time
from queue import Empty

from nbclient import NotebookClient

SLICE_S = 0.25  # seconds: the most a missed wake-up can cost


def _in_slices(get_msg):
    """Wrap an asyncio channel's ``get_msg`` so that it polls at most ``SLICE_S`` at a time."""
    async def get_msg_in_slices(timeout: float | None = None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            step = SLICE_S if deadline is None else max(0.0, min(SLICE_S, deadline - time.monotonic()))
            try:
                return await get_msg(timeout=step)
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise
    return get_msg_in_slices


class SteadyNotebookClient(NotebookClient):
    """A NotebookClient whose shell and IOPub reads cannot stall on a missed wake-up."""

    async def async_start_new_kernel_client(self):
        kc = await super().async_start_new_kernel_client()
        for channel in (kc.shell_channel, kc.iopub_channel):
            channel.get_msg = _in_slices(channel.get_msg)
        return kc
