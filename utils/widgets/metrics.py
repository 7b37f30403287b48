"""Panels of notebook 06 (performance metrics): the roofline of batch-B decode, and requests
arriving over time, served three ways."""
from __future__ import annotations

import html

from ..perf.timers import BENCH_CONFIGS
from ..i18n import Names, tr
from ..plots.metrics import model_label, plain_number as _num, plot_decode_bound
from ..plots.serving import plot_schedules
from ..roofline import GPU_ROOFS, Roofs, decode_bound, ridge_batch
from ..serving import POLICIES, PaddedBatchEngine, StepCostModel, Workload, poisson_arrivals, serve
from ..sizing import MODEL_PRESETS, cache_bytes_for
from ..validate import check_int
from .base import KEPT_FIGURES, Panel, dropdown, selection_slider

_A100, _H100 = GPU_ROOFS

# Published peak memory bandwidth, GB/s (theoretical; real kernels reach a large fraction of it).
HARDWARE_BANDWIDTH_GBPS: dict[str, float] = {
    "laptop, 2 x DDR5-5600": 89.6,  # 2 channels x 8 bytes x 5600 MT/s
    "Apple M2 Max": 400.0,
    "NVIDIA A100 80GB SXM (HBM2e)": _A100.bandwidth / 1e9,
    "NVIDIA H100 SXM (HBM3)": _H100.bandwidth / 1e9,
}
# Published dense peaks, FLOP/s per dtype (int8: operations/s), from the makers' datasheets. A
# hardware or dtype missing here has no compute roof in the panel: its limit is memory only.
HARDWARE_PEAK_FLOPS: dict[str, dict[str, float]] = {
    "Apple M2 Max": {"float32": 13.6e12},  # the 38-core GPU
    "NVIDIA A100 80GB SXM (HBM2e)": {"float32": 19.5e12, "bfloat16": _A100.peak_flops, "float16": _A100.peak_flops,
                                     "int8": 624e12},
    "NVIDIA H100 SXM (HBM3)": {"float32": 67e12, "bfloat16": _H100.peak_flops, "float16": _H100.peak_flops,
                               "int8": 1979e12},
}
# Published memory of each GPU, bytes (decimal, as the datasheets give it): weights + cache must fit.
HARDWARE_MEMORY_BYTES: dict[str, float] = {"NVIDIA A100 80GB SXM (HBM2e)": 80e9, "NVIDIA H100 SXM (HBM3)": 80e9}
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "int8": 1}
BATCH_CHOICES = [2**i for i in range(9)]  # 1 .. 256
CONTEXT_CHOICES = [128, 256, 512, 1024, 2048, 4096, 8192, 32768, 131072]


def _ms(seconds: float) -> str:
    """Milliseconds in the table's one format: 6,085 ms, 12.5 ms, 0.0123 ms."""
    return f"{_num(seconds * 1e3)} ms"


def _decimal_bytes(n: float) -> str:
    """Bytes in decimal units (kB, MB, GB, TB), as the notebook prints them."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:,.0f} B"


def _choices(labels: dict) -> list:
    """Dropdown options from ``value -> label``: ``(label, value)`` pairs, or the values themselves
    when every label is its value (English), so that ``options`` lists the values as it always did."""
    if all(label == value for value, label in labels.items()):
        return list(labels)
    return [(label, value) for value, label in labels.items()]


class DecodeBoundPanel(Panel):
    """The roofline of decode: model, dtype, B, T and hardware -> bytes and FLOPs per step, the
    fastest possible TPOT = max(bytes / bandwidth, FLOPs / peak), the most tokens/s and the ridge
    batch where the two roofs cross (``utils.roofline.decode_bound``, ``utils.roofline.ridge_batch``).

    ``measured_GBps`` (and ``measured_GFLOPS``, float32): this machine's roofs, e.g. from
    ``utils.perf.measure_machine``, offered as the first hardware choice.
    """

    title = "The roofline of decode: fastest TPOT = max(bytes / bandwidth, FLOPs / peak)"

    def __init__(self, measured_GBps: float | None = None, model: str = "Llama-3-8B", dtype: str = "bfloat16",
                 B: int = 1, T: int = 4096, hardware: str | None = None, measured_GFLOPS: float | None = None) -> None:
        self.models = {**{f"bench {k}": v for k, v in BENCH_CONFIGS.items()}, **MODEL_PRESETS}
        self.hardware = dict(HARDWARE_BANDWIDTH_GBPS)
        self.peaks = {name: dict(p) for name, p in HARDWARE_PEAK_FLOPS.items()}
        hardware_labels = {name: tr(name) for name in self.hardware}  # the names stay the values
        if measured_GBps is not None:
            name = f"this machine (measured, {measured_GBps:.1f} GB/s"
            name += f", {measured_GFLOPS:.0f} GFLOP/s float32)" if measured_GFLOPS else ")"
            self.hardware = {name: float(measured_GBps), **self.hardware}
            hardware_labels[name] = (
                tr("this machine (measured, {bandwidth:.1f} GB/s, {flops:.0f} GFLOP/s float32)",
                   bandwidth=measured_GBps, flops=measured_GFLOPS) if measured_GFLOPS
                else tr("this machine (measured, {bandwidth:.1f} GB/s)", bandwidth=measured_GBps))
            if measured_GFLOPS:
                self.peaks[name] = {"float32": measured_GFLOPS * 1e9}
        hardware = hardware or list(self.hardware)[0]
        controls = {
            "model": dropdown(tr("model"), _choices({name: model_label(name) for name in self.models}), model),
            "dtype": dropdown(tr("dtype (weights and cache)"), ["float32", "bfloat16", "float16", "int8"], dtype),
            "B": dropdown(tr("B (rows decoded together)"), BATCH_CHOICES, B),
            "T": dropdown(tr("T (tokens per row so far)"), CONTEXT_CHOICES, T),
            "hardware": dropdown(tr("hardware"), _choices({name: hardware_labels[name] for name in self.hardware}),
                                 hardware),
        }
        super().__init__(controls)

    def compute(self, model: str, dtype: str, B: int, T: int, hardware: str) -> dict:
        cfg = self.models[model]
        bandwidth = self.hardware[hardware] * 1e9  # bytes/s
        peak = self.peaks.get(hardware, {}).get(dtype)  # FLOP/s, or None: not published for this dtype
        bound = decode_bound(cfg, B, T, bandwidth, dtype, peak)
        sweep = [{"B": b, **decode_bound(cfg, b, T, bandwidth, dtype, peak)} for b in BATCH_CHOICES]
        ridge = ridge_batch(cfg, T, Roofs(hardware, peak, bandwidth), dtype) if peak else None
        return {**bound, "model": model, "dtype": dtype, "B": B, "T": T, "hardware": hardware,
                "bandwidth_GBps": bandwidth / 1e9, "peak_flops": peak, "ridge": ridge, "n_params": cfg.n_params,
                "kv_memory": cache_bytes_for(cfg, B, T, dtype), "max_context": cfg.max_seq_len,
                "weight_memory": cfg.n_params * DTYPE_BYTES[dtype], "device_memory": HARDWARE_MEMORY_BYTES.get(hardware),
                "kv_share": (bound["kv_read"] + bound["kv_write"]) / bound["total"], "sweep": sweep}

    def render(self, s: dict) -> str:
        warn = ""
        if s["T"] > s["max_context"]:
            beyond = tr("T is beyond what {model} reads ({n:,})", model=html.escape(model_label(s["model"])),
                        n=s["max_context"])
            warn = f"<br><b style='color:#b00'>{beyond}</b>"
        need = s["weight_memory"] + s["kv_memory"]
        if s["device_memory"] and need > s["device_memory"]:  # known memory only (a GPU's datasheet)
            full = tr("weights + KV cache need {need}, more than the {memory} this GPU holds: this batch does not fit",
                      need=_decimal_bytes(need), memory=_decimal_bytes(s["device_memory"]))
            warn += f"<br><b style='color:#b00'>{full}</b>"
        if s["peak_flops"]:
            ridge = "B = " + format(s["ridge"], ",") if s["ridge"] else tr("beyond B = 4,096")
            compute = [(tr("FLOPs per step / at the peak ({peak} TFLOP/s)", peak=_num(s["peak_flops"] / 1e12)),
                        f"{_num(s['flops'] / 1e9)} GFLOP / {_ms(s['compute_s'])}"),
                       (tr("ridge batch (compute-bound from)"), ridge)]
        elif s["hardware"].startswith("this machine"):  # measured in float32 only
            compute = [(tr("compute roof"), tr("not measured in {dtype} on this machine: memory roof only",
                                               dtype=html.escape(s["dtype"])))]
        else:
            compute = [(tr("compute roof"), tr("no published {dtype} peak for this hardware here: memory roof only",
                                               dtype=html.escape(s["dtype"])))]
        fastest = {"memory": tr("fastest possible TPOT (memory-bound)"),
                   "compute": tr("fastest possible TPOT (compute-bound)")}[s["bound_by"]]
        rows = [
            (tr("weights read per step"), _decimal_bytes(s["weights"])),
            (tr("K/V cache read per step (B × T positions)"), _decimal_bytes(s["kv_read"])),
            (tr("bytes per step / per new token"),
             f"{_decimal_bytes(s['total'])} / {_decimal_bytes(s['bytes_per_token'])}"),
            (tr("time to read them (memory roof)"), _ms(s["memory_s"])), *compute,
            (fastest, f"<b>{_ms(s['tpot_min_s'])}</b>"),
            (tr("most tokens/s (all rows)"), f"<b>{_num(s['max_tokens_per_s'])}</b>"),
            (tr("K/V share of the bytes read"), f"{s['kv_share']:.0%}"),
            (tr("KV cache memory"), _decimal_bytes(s["kv_memory"])),
        ]
        table = "".join(f"<tr><td>{name}</td><td>{value}</td></tr>" for name, value in rows)
        return f"<div class='decode-bound'><table>{table}</table>{warn}</div>"

    def plot(self, s: dict):
        return plot_decode_bound(s)


# policy -> its name in the current language
POLICY_NAMES = Names({"fifo": "one at a time (FIFO)", "static": "static batches", "continuous": "continuous batching"})
RATE_CHOICES = [1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000]  # requests per second: the course model serves a few
MAX_BATCH_CHOICES = [2, 4, 8, 16]
TIMEOUT_CHOICES_MS = [0, 10, 20, 50, 100, 200, 500]


class ArrivalsPanel(Panel):
    """Requests arriving at a rate you choose (``utils.serving.poisson_arrivals``), served one at a
    time, in static batches and by continuous batching (``utils.serving.PaddedBatchEngine``'s three
    policies), on iteration costs measured on this machine (``costs``, a ``StepCostModel`` fitted to
    the engine's runs) and replayed: no model runs, so a slider step takes milliseconds.

    ``prompt_lens``, ``max_new_tokens``: the requests (their order is their arrival order).
    """

    title = "Requests arriving over time, served three ways"
    keeps_figures = True  # a slider position seen before shows its picture again at once (``Panel.kept_figure``)

    def __init__(self, costs: StepCostModel, prompt_lens: list[int], max_new_tokens: list[int], seed: int = 0,
                 rate: int = 100, max_batch: int = 8, timeout_ms: int = 100) -> None:
        if len(prompt_lens) != len(max_new_tokens):
            raise ValueError(f"one prompt length per request: got {len(prompt_lens)} and {len(max_new_tokens)}")
        if not isinstance(costs, StepCostModel):
            raise ValueError(f"costs must be a utils.serving.StepCostModel, got {type(costs).__name__}")
        # a replay reads only the lengths: placeholder token ids
        prompts = [[0] * check_int("prompt_lens", n) for n in prompt_lens]
        self.costs, self.workload = costs, Workload(prompts, list(max_new_tokens))
        self.max_new_tokens, self.seed = list(max_new_tokens), seed
        controls = {
            "rate": selection_slider(tr("arrival rate (requests/s)"), RATE_CHOICES, rate),
            "max_batch": dropdown(tr("B (most rows in a batch)"), MAX_BATCH_CHOICES, max_batch),
            "timeout_ms": dropdown(tr("static: longest wait for a full batch (ms)"), TIMEOUT_CHOICES_MS, timeout_ms),
        }
        super().__init__(controls)

    def compute(self, rate: int, max_batch: int, timeout_ms: int) -> dict:
        key = (rate, max_batch, timeout_ms)
        replays = self.__dict__.setdefault("_replays", {})  # slider values -> the three schedules (small, kept)
        if key not in replays:
            arrival = poisson_arrivals(len(self.max_new_tokens), rate, self.seed)
            runs = {p: serve(PaddedBatchEngine(None, policy=p, max_batch=max_batch, timeout_s=timeout_ms / 1e3,
                                               costs=self.costs), self.workload, arrival) for p in POLICIES}
            replays[key] = {p: run.schedule() for p, run in runs.items()}
        return {"rate": rate, "max_batch": max_batch, "timeout_ms": timeout_ms, "runs": replays[key]}

    def render(self, s: dict) -> str:
        head = "".join(f"<th>{h}</th>" for h in (tr("policy"), "TTFT p50 / p95", "TPOT p50 / p95", "ITL p50 / p95",
                                                  tr("end to end p50 / p95"), tr("tokens/s"), tr("requests/s"),
                                                  tr("tokens/s while computing")))
        rows = []
        for p, r in s["runs"].items():
            ms = [f"{r[f'{k}_p50_s'] * 1e3:,.{d}f} / {r[f'{k}_p95_s'] * 1e3:,.{d}f} ms"
                  for k, d in (("ttft", 1), ("tpot", 2), ("itl", 2), ("e2e", 1))]
            cells = [POLICY_NAMES[p], *ms, f"{r['tokens_per_s']:,.0f}", f"{r['requests_per_s']:,.1f}",
                     f"{r['busy_tokens_per_s']:,.0f}"]
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        note = tr("percentiles: numpy's default (linear interpolation); times from per-iteration costs measured "
                  "on this machine (StepCostModel)")
        caption = tr("{n} requests at {rate} per second, B = {B}, static timeout {timeout} ms",
                     n=len(self.max_new_tokens), rate=s["rate"], B=s["max_batch"], timeout=s["timeout_ms"])
        return (f"<div class='arrivals'><table><caption>{caption}</caption><tr>{head}</tr>{''.join(rows)}</table>"
                f"<small>{note}</small></div>")

    def _png(self, fig, draw) -> bytes:
        """The picture of a kept figure, drawn once: these figures never change after ``plot`` (drawing
        one leaves matplotlib's ``stale`` flag set, so ``Panel._png`` would draw it again)."""
        pictures = self.__dict__.setdefault("_pictures", {})
        kept = pictures.get(id(fig))
        if kept is None or kept[0] is not fig:
            while len(pictures) >= KEPT_FIGURES:  # as many as the kept figures
                del pictures[next(iter(pictures))]
            kept = pictures[id(fig)] = (fig, draw(fig))
        return kept[1]

    def plot(self, s: dict):
        # drawing the three timelines is most of a slider step: each position's figure is drawn once, and
        # without the texts the table right above already shows (its caption, each policy's numbers):
        # every glyph costs drawing time
        return self.kept_figure((s["rate"], s["max_batch"], s["timeout_ms"]), lambda: plot_schedules(
            {POLICY_NAMES[p]: r for p, r in s["runs"].items()}, title="", stats=False))
