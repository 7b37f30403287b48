"""The one engine API both serving engines answer, and ``serve``, which drives either.

    add_request(prompt_ids, max_new_tokens, arrival_time=0.0, eos_id=None) -> rid
    step()   one iteration; returns its record (also kept in ``steps``)
    run()    step until every request is done; returns a ``Run`` (tokens, steps, requests, metrics)
    now      the engine's clock, in seconds

The clock: each iteration advances it by the time it took, measured with ``time.perf_counter`` when
the model runs, or priced by ``costs`` (a ``StepCostModel``) when it replays without a model. When
nothing can run, the clock jumps to the next arrival: nobody sleeps while waiting for a request.
So arrivals interleave with the engine's real costs, and a replay takes microseconds.
"""
from __future__ import annotations

import math

from ..i18n import tr
from ..model import check_model
from ..validate import as_id_list, check_int, eos_set
from .arrivals import Workload, is_real
from .costs import StepCostModel
from .run import Request, Run


class ServingEngine:
    """What both engines share: the requests, the queue, the clock, and ``run``. A subclass plans and
    runs one iteration (``step``), gives a finished request's memory back (``_finish``) and may refuse a
    request it could never serve (``_check_request``)."""

    name = "engine"

    def __init__(self, model, costs: StepCostModel | None) -> None:
        if costs is None:
            check_model(model)
        elif not isinstance(costs, StepCostModel):
            raise ValueError(f"costs must be a StepCostModel (or None to run the model), got {type(costs).__name__}")
        self.model, self.costs = model, costs
        self.cfg = model.cfg if costs is None else getattr(model, "cfg", model)  # a replay needs only the config
        self.requests: list[Request] = []
        self.waiting: list[Request] = []  # not running: arrival order (preempted ones in front)
        self.running: list[Request] = []  # admission order
        self.steps: list[dict] = []
        self.now = 0.0

    # -- requests -------------------------------------------------------------------------------
    def add_request(self, prompt_ids, max_new_tokens: int, arrival_time: float = 0.0, eos_id=None) -> int:
        """Queue a request; returns its id. It can start once the clock reaches ``arrival_time``."""
        prompt = as_id_list(prompt_ids, "prompt_ids")  # text, floats, a batch: refused
        if not prompt:
            raise ValueError(tr("prompt_ids must hold at least one token, got an empty prompt"))
        check_int("max_new_tokens", max_new_tokens)
        if not is_real(arrival_time) or not math.isfinite(arrival_time) or arrival_time < 0:
            raise ValueError(tr("arrival_time must be a number of seconds >= 0, got {value!r}", value=arrival_time))
        if self.cfg is not None:
            if any(not 0 <= t < self.cfg.vocab_size for t in prompt):
                raise ValueError(f"prompt_ids must be token ids in [0, {self.cfg.vocab_size}), got {prompt}")
            total = len(prompt) + max_new_tokens
            if total > self.cfg.max_seq_len:
                raise ValueError(tr("prompt ({p}) + max_new_tokens ({n}) = {total} tokens exceeds max_seq_len={limit}",
                                    p=len(prompt), n=max_new_tokens, total=total, limit=self.cfg.max_seq_len))
        self._check_request(prompt, max_new_tokens)
        r = self._new_request(len(self.requests), prompt, max_new_tokens, float(arrival_time), eos_set(eos_id))
        self.requests.append(r)
        self.waiting.append(r)
        self.waiting.sort(key=lambda q: (q.n_preempted == 0, q.arrival_s, q.rid))
        return r.rid

    def request(self, rid: int) -> Request:
        """The request with id ``rid``."""
        if not isinstance(rid, int) or isinstance(rid, bool) or not 0 <= rid < len(self.requests):
            raise ValueError(tr("unknown request id {rid!r}: this engine has ids 0 .. {last}", rid=rid, last=len(self.requests) - 1))
        return self.requests[rid]

    def abort(self, rid: int) -> None:
        """Stop request ``rid`` now and give its memory back."""
        r = self.request(rid)
        if not r.done:
            self._finish(r, "aborted")

    def has_work(self) -> bool:
        return bool(self.waiting or self.running)

    def run(self, max_steps: int = 100_000) -> Run:
        """Step until every request is done; returns their tokens, timings and the iterations."""
        check_int("max_steps", max_steps)
        while self.has_work():
            if len(self.steps) >= max_steps:
                raise RuntimeError(f"not done after {max_steps} iterations")
            self.step()
        return Run(self.name, list(self.requests), list(self.steps))

    # -- what each engine does ------------------------------------------------------------------------
    def step(self) -> dict:
        raise NotImplementedError

    def _new_request(self, rid: int, prompt: list[int], max_new_tokens: int, arrival_s: float,
                     eos: set[int]) -> Request:
        return Request(rid, prompt, max_new_tokens, arrival_s, eos)

    def _check_request(self, prompt: list[int], max_new_tokens: int) -> None:
        """Raise ValueError for a request this engine could never serve (the paged engine: too few blocks)."""

    def _finish(self, r: Request, why: str) -> None:
        raise NotImplementedError

    def _got_token(self, r: Request, token: int, when: float) -> None:
        """``r``'s next token exists at ``when``; it is done at its EOS or its ``max_new_tokens``-th token."""
        r.out.append(token)
        r.token_times.append(when)
        if token in r.eos:
            self._finish(r, "eos")
        elif len(r.out) >= r.max_new_tokens:
            self._finish(r, "length")


def serve(engine: ServingEngine, workload: Workload, arrival_s) -> Run:
    """Queue every request of ``workload`` at its arrival time (``arrival_s``, seconds) and run ``engine``."""
    arrival_s = list(arrival_s)
    if len(arrival_s) != len(workload):
        raise ValueError(tr("arrival_s must hold one time per request: {n} requests, got {m} times",
                            n=len(workload), m=len(arrival_s)))
    for prompt, n, t in zip(workload.prompts, workload.max_new_tokens, arrival_s):
        engine.add_request(prompt, n, arrival_time=t)
    return engine.run()
