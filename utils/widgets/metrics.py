"""Panel of notebook 06 (performance metrics): is batch-B decode memory- or compute-bound?"""
from __future__ import annotations

import html

from ..perf import BENCH_CONFIGS, decode_bound
from ..plots import format_bytes, plot_decode_bound
from ..sizing import MODEL_PRESETS, cache_bytes_for
from . import Panel, dropdown


# Published peak memory bandwidth, GB/s (theoretical; real kernels reach a large fraction of it).
HARDWARE_BANDWIDTH_GBPS: dict[str, float] = {
    "laptop, 2 x DDR5-5600": 89.6,  # 2 channels x 8 bytes x 5600 MT/s
    "Apple M2 Max": 400.0,
    "NVIDIA A100 80GB SXM (HBM2e)": 2039.0,
    "NVIDIA H100 SXM (HBM3)": 3350.0,
}
BATCH_CHOICES = [2**i for i in range(9)]  # 1 .. 256
CONTEXT_CHOICES = [128, 256, 512, 1024, 2048, 4096, 8192, 32768, 131072]


class DecodeBoundPanel(Panel):
    """The memory-bandwidth limit of decode: model, dtype, B, T and hardware -> bytes per step,
    the fastest possible TPOT and the most tokens/s (``utils.perf.decode_bound``).

    ``measured_GBps``: this machine's bandwidth (e.g. the ``limit_Bps`` that
    ``utils.perf.decode_vs_bandwidth`` measures), offered as the first hardware choice.
    """

    title = "Decode is memory-bound: bytes per step / bandwidth = fastest TPOT"

    def __init__(self, measured_GBps: float | None = None, model: str = "Llama-3-8B", dtype: str = "bfloat16",
                 B: int = 1, T: int = 4096, hardware: str | None = None) -> None:
        self.models = {**{f"bench {k}": v for k, v in BENCH_CONFIGS.items()}, **MODEL_PRESETS}
        self.hardware = dict(HARDWARE_BANDWIDTH_GBPS)
        if measured_GBps is not None:
            self.hardware = {f"this machine (measured, {measured_GBps:.1f} GB/s)": float(measured_GBps),
                             **self.hardware}
        hardware = hardware or list(self.hardware)[0]
        controls = {
            "model": dropdown("model", list(self.models), model),
            "dtype": dropdown("dtype (weights and cache)", ["float32", "bfloat16", "float16", "int8"], dtype),
            "B": dropdown("B (rows decoded together)", BATCH_CHOICES, B),
            "T": dropdown("T (tokens per row so far)", CONTEXT_CHOICES, T),
            "hardware": dropdown("memory bandwidth of", list(self.hardware), hardware),
        }
        super().__init__(controls)

    def compute(self, model: str, dtype: str, B: int, T: int, hardware: str) -> dict:
        cfg = self.models[model]
        bandwidth = self.hardware[hardware] * 1e9  # bytes/s
        bound = decode_bound(cfg, B, T, bandwidth, dtype)
        sweep = [{"B": b, **decode_bound(cfg, b, T, bandwidth, dtype)} for b in BATCH_CHOICES]
        return {**bound, "model": model, "dtype": dtype, "B": B, "T": T, "hardware": hardware,
                "bandwidth_GBps": bandwidth / 1e9, "n_params": cfg.n_params,
                "kv_memory": cache_bytes_for(cfg, B, T, dtype), "max_context": cfg.max_seq_len,
                "kv_share": (bound["kv_read"] + bound["kv_write"]) / bound["total"], "sweep": sweep}

    def render(self, s: dict) -> str:
        warn = ""
        if s["T"] > s["max_context"]:
            warn = f"<br><b style='color:#b00'>T is beyond what {html.escape(s['model'])} reads ({s['max_context']:,})</b>"
        return (
            "<div class='decode-bound'><table>"
            f"<tr><td>weights read per step</td><td>{format_bytes(s['weights'])}</td></tr>"
            f"<tr><td>K/V cache read per step (B × T positions)</td><td>{format_bytes(s['kv_read'])}</td></tr>"
            f"<tr><td>bytes per step / per new token</td><td>{format_bytes(s['total'])} / "
            f"{format_bytes(s['bytes_per_token'])}</td></tr>"
            f"<tr><td>fastest possible TPOT</td><td><b>{s['tpot_min_s'] * 1e3:,.2f} ms</b></td></tr>"
            f"<tr><td>most tokens/s (all rows)</td><td><b>{s['max_tokens_per_s']:,.0f}</b></td></tr>"
            f"<tr><td>K/V share of the bytes read</td><td>{s['kv_share']:.0%}</td></tr>"
            f"<tr><td>KV cache memory</td><td>{format_bytes(s['kv_memory'])}</td></tr>"
            f"</table>{warn}</div>"
        )

    def plot(self, s: dict):
        return plot_decode_bound(s)
