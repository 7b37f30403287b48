"""Panel of notebook 11 (continuous batching): the engine's iterations over time, for the arrival rate,
token budget and prefill chunk you choose.

``EngineTimelinePanel`` serves a workload on the real engine (``utils.serving.PagedEngine`` on the
course model) when it is built, with two settings, and fits a ``StepCostModel`` to the two runs. Every
slider step then replays the same scheduler with that cost model (``PagedEngine(cfg, ..., costs=...)``):
the same decisions (decode first, chunks within the budget, blocks, preemption), no model, a few
milliseconds.
"""
from __future__ import annotations

from ..i18n import tr
from ..plots.serving import plot_engine_timeline
from ..serving import PagedEngine, StepCostModel, Workload, poisson_arrivals, serve
from ..serving.costs import gpu_like_costs
from .base import Panel, check_option, dropdown, selection_slider

RATE_CHOICES = [25, 50, 100, 200, 400, 800, 1600]  # requests per second
BUDGET_CHOICES = [8, 16, 32, 64, 128, 256]  # max_batch_tokens: tokens one iteration may run
CHUNK_CHOICES = [0, 4, 8, 16, 32, 64]  # prefill_chunk; 0 is "off": a prompt in one piece, if the budget allows


FIT_SETTINGS = {"chunks of 16 in a budget of 32": (32, 16), "whole prompts in a budget of 256": (256, None)}
MACHINES = ("cpu", "gpu")  # the replay's costs: fitted to this CPU, or a GPU-like roofline (GPU_COSTS)
GPU_COSTS = gpu_like_costs()  # Llama-2-7B in bfloat16 on an A100: one pass, bound by the weight read up to ~150 tokens


def fit_step_costs(model, workload: Workload, *, rate: float = 200.0, seed: int = 0, n_blocks: int = 64,
                   block_size: int = 16, max_batch: int = 8) -> tuple[StepCostModel, dict]:
    """Serve ``workload`` on the real engine with each of ``FIT_SETTINGS`` (budget, chunk) and fit one
    ``StepCostModel`` to both runs: small and large prefills, mixed and decode-only iterations, so the
    replay holds across the sliders. Returns the costs and the measured runs (name -> ``Run``). A short
    run first, thrown away: a fresh engine's first iterations pay one-off costs."""
    warm = PagedEngine(model, n_blocks=n_blocks, block_size=block_size, max_batch=max_batch)
    serve(warm, Workload(workload.prompts[:4], workload.max_new_tokens[:4]), [0.0] * min(4, len(workload)))
    arrival = poisson_arrivals(len(workload), rate, seed)
    runs = {name: serve(PagedEngine(model, n_blocks=n_blocks, block_size=block_size, max_batch_tokens=budget,
                                    prefill_chunk=chunk, max_batch=max_batch), workload, arrival)
            for name, (budget, chunk) in FIT_SETTINGS.items()}
    return StepCostModel.fit(runs.values()), runs


class EngineTimelinePanel(Panel):
    """Requests arriving at ``rate`` per second (``poisson_arrivals(len(workload), rate, seed)``), served by
    the engine's scheduler with the chosen ``max_batch_tokens`` and ``prefill_chunk`` (0: off), on step
    costs fitted to a real run (``costs``: a ``StepCostModel``; None fits one now on ``model``), or with
    ``machine="gpu"`` on ``GPU_COSTS``, a GPU-like roofline where prefill tokens ride along with the decodes.
    ``state``: the settings, ``steps`` (the iterations), ``schedule`` (``Run.schedule()``), ``summary``
    (``Run.summary()``), ``n_preempted``, ``longest_ms`` (the longest iteration), ``max_chunk``.
    ``fit_runs``: the real runs the costs were fitted to, at ``rate`` (``FIT_SETTINGS``), to compare."""

    title = "The engine's iterations over time: continuous batching with chunked prefill"

    def __init__(self, model, workload: Workload, *, seed: int = 0, costs: StepCostModel | None = None,
                 n_blocks: int = 64, block_size: int = 16, max_batch: int = 8, rate: int = 200,
                 max_batch_tokens: int = 32, prefill_chunk: int | None = 16, machine: str = "cpu") -> None:
        if not isinstance(workload, Workload) or not len(workload):
            raise ValueError(f"workload must be a non-empty utils.serving.Workload, got {workload!r}")
        # checked before the costs are fitted (seconds of real runs): a value the sliders do not offer
        check_option("rate", rate, RATE_CHOICES)
        check_option("max_batch_tokens", max_batch_tokens, BUDGET_CHOICES)
        check_option("prefill_chunk", prefill_chunk or 0, [0, *CHUNK_CHOICES[1:]])
        check_option("machine", machine, MACHINES)
        self.fit_runs = {}  # the real runs the costs were fitted to (none when costs are given)
        if costs is None:
            costs, self.fit_runs = fit_step_costs(model, workload, rate=rate, seed=seed, n_blocks=n_blocks,
                                                  block_size=block_size, max_batch=max_batch)
        self.costs = costs
        self.cfg = getattr(model, "cfg", model)
        self.workload, self.seed = workload, seed
        self.engine_args = dict(n_blocks=n_blocks, block_size=block_size, max_batch=max_batch)
        chunks = [(tr("off"), 0)] + [(str(c), c) for c in CHUNK_CHOICES[1:]]
        controls = {
            "rate": selection_slider(tr("arrival rate (requests/s)"), RATE_CHOICES, rate),
            "max_batch_tokens": selection_slider(tr("max_batch_tokens (tokens per iteration)"), BUDGET_CHOICES,
                                                 max_batch_tokens),
            "prefill_chunk": selection_slider(tr("prefill_chunk (tokens per chunk)"), chunks, prefill_chunk or 0),
            "machine": dropdown(tr("costs (the machine the replay models)"),
                                [(tr("this CPU (fitted)"), "cpu"),
                                 (tr("GPU-like: {machine} (roofline)", machine=GPU_COSTS.machine), "gpu")], machine),
        }
        super().__init__(controls)

    def compute(self, rate: int, max_batch_tokens: int, prefill_chunk: int, machine: str = "cpu") -> dict:
        check_option("machine", machine, MACHINES)
        chunk = prefill_chunk or None
        costs = GPU_COSTS if machine == "gpu" else self.costs
        engine = PagedEngine(self.cfg, max_batch_tokens=max_batch_tokens, prefill_chunk=chunk, costs=costs,
                             **self.engine_args)
        run = serve(engine, self.workload, poisson_arrivals(len(self.workload), rate, self.seed))
        return {"rate": rate, "max_batch_tokens": max_batch_tokens, "prefill_chunk": chunk, "machine": machine,
                "steps": run.steps,
                "schedule": run.schedule(), "summary": run.summary(),
                "n_preempted": sum(r.n_preempted for r in run.requests),
                "longest_ms": max(s["end_s"] - s["start_s"] for s in run.steps) * 1e3,
                "max_chunk": max((n for s in run.steps for _, n in s["prefill"]), default=0)}

    def render(self, s: dict) -> str:
        r = s["summary"]
        cells = [("TTFT p50 / p95", f"{r['ttft_p50_s'] * 1e3:,.1f} / {r['ttft_p95_s'] * 1e3:,.1f} ms"),
                 ("TPOT p50 / p95", f"{r['tpot_p50_s'] * 1e3:,.2f} / {r['tpot_p95_s'] * 1e3:,.2f} ms"),
                 ("ITL p50 / p95", f"{r['itl_p50_s'] * 1e3:,.2f} / {r['itl_p95_s'] * 1e3:,.2f} ms"),
                 (tr("tokens/s"), f"{r['tokens_per_s']:,.0f}"), (tr("requests/s"), f"{r['requests_per_s']:,.1f}"),
                 (tr("iterations"), f"{len(s['steps']):,}"),
                 (tr("the longest iteration"), f"{s['longest_ms']:,.2f} ms"),
                 (tr("largest prefill chunk"), tr("{n} tokens", n=s["max_chunk"])),
                 (tr("preemptions"), f"{s['n_preempted']:,}")]
        head = "".join(f"<th>{name}</th>" for name, _ in cells)
        row = "".join(f"<td>{value}</td>" for _, value in cells)
        c = self.costs
        if s.get("machine") == "gpu":
            g = GPU_COSTS
            note = tr("times replayed from GPU-like step costs ({machine}, bfloat16, a roofline, not a measurement): one "
                      "forward pass per iteration takes the longer of reading every weight once ({weights:.2f} ms) and "
                      "its tokens' FLOPs ({token:.4f} ms per token), so up to {ridge:.0f} tokens an iteration costs the "
                      "same; + {row:.4f} ms per decode row (its K/V) + {fixed:.2f} ms per iteration; percentiles: "
                      "numpy's default (linear interpolation)", machine=g.machine, weights=g.weight_read * 1e3,
                      token=g.per_token * 1e3, ridge=g.ridge_tokens, row=g.per_row * 1e3, fixed=g.fixed * 1e3)
            return f"<div class='engine-timeline'><table><tr>{head}</tr><tr>{row}</tr></table><small>{note}</small></div>"
        note = tr("times replayed from step costs fitted to real runs on this machine: a decode-only or prefill-only "
                  "iteration of a measured size costs its measured mean, any other {fixed:.3f} ms per iteration + "
                  "{forward:.3f} ms per forward pass + {row:.4f} ms per decode row + {token:.4f} ms per prefill "
                  "token; percentiles: numpy's default (linear interpolation)",
                  fixed=c.fixed * 1e3, forward=c.per_forward * 1e3, row=c.per_row * 1e3, token=c.per_token * 1e3)
        return f"<div class='engine-timeline'><table><tr>{head}</tr><tr>{row}</tr></table><small>{note}</small></div>"

    keeps_figures = True  # a setting seen before shows its timeline again without drawing it

    def plot(self, s: dict):
        key = (s["rate"], s["max_batch_tokens"], s["prefill_chunk"], s["machine"])
        return self.kept_figure(key, lambda: plot_engine_timeline(s))
