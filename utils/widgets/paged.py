"""Panel of notebook 10 (paged KV blocks and prefix caching): which request holds which block of the
pool, step by step, while a small serving engine (``utils.serving.PagedEngine``) serves requests that share
a system prompt, arrive over time and finish.

The run is a **replay**: the engine schedules as it always does, but with ``costs`` (a
``StepCostModel`` with fixed coefficients) no model runs and its clock advances by the modelled time
of each step. The tokens it "generates" are placeholders; blocks, tables, prefix hits and preemptions
are exactly those of a real run whose steps took the modelled times (with measured times, arrivals can
land in other steps and the map can differ). One run takes milliseconds, so changing ``block_size`` or
``n_blocks`` simply replays the script again.
"""
from __future__ import annotations

import html

from ..i18n import in_language, tr
from ..plots.paged import plot_block_map
from ..serving import PagedEngine, StepCostModel
from .base import Panel, check_option, dropdown, int_slider

BLOCK_SIZES = (4, 8, 16)
POOL_SIZES = (12, 16, 24, 32, 48)
# Seconds per iteration: fixed, per forward pass, per decode row, per prefill token (the order of the
# course model on a laptop CPU). Fixed numbers: the replay is the same on every machine.
REPLAY_COSTS = StepCostModel(fixed=2e-4, per_forward=6e-4, per_row=1e-4, per_token=2e-5)
# The replay's engine (notebook 11): prompts prefilled in chunks of at most PREFILL_CHUNK tokens, at most
# MAX_BATCH_TOKENS tokens (decodes and chunks) per step.
PREFILL_CHUNK, MAX_BATCH_TOKENS = 16, 32
# The system prompt of notebook 10's section 6, in the notebook's language (20 tokens in both).
SYSTEM_PROMPTS = {"en": "<BOS> he really likes dogs . she really likes fish . I really like cats . you like rabbits .",
                  "zh": "<BOS> 他 很 喜欢 猫 。 她 很 喜欢 狗 。 我 很 喜欢 鱼 。 你 喜欢 鸟 。"}
# The script: (True = the system prompt comes first, then this text; False = this text alone),
# new tokens, arrival in ms. A first wave, a pause in which everything finishes, a second wave. The two
# languages' texts have the same number of tokens, so the block map is the same in both.
SCRIPTS = {
    "en": [(True, "they have two small", 14, 0), (True, "we also like", 8, 1), (False, "<BOS> we like birds . they have", 10, 2),
           (True, "she has a small", 12, 6), (True, "you don't like", 6, 9), (False, "<BOS> she has two white", 12, 14),
           (True, "he has three small dogs", 10, 16), (True, "I also like", 8, 60), (True, "they really like", 6, 62),
           (False, "<BOS> we have a small", 6, 63)],
    "zh": [(True, "他们 有 两 只", 14, 0), (True, "我们 也 喜欢", 8, 1), (False, "<BOS> we like birds . they have", 10, 2),
           (True, "她 有 一 条", 12, 6), (True, "你 不 喜欢", 6, 9), (False, "<BOS> she has two white", 12, 14),
           (True, "他 有 三 只 小", 10, 16), (True, "我 也 喜欢", 8, 60), (True, "他们 很 喜欢", 6, 62),
           (False, "<BOS> 我们 有 一 只", 6, 63)],
}


def block_map_workload(tok) -> dict:
    """The script, in the current language, as token ids: ``prompts``, ``max_new_tokens`` and ``arrival_s``
    (one per request)."""
    system, script = tok.encode(in_language(SYSTEM_PROMPTS)), in_language(SCRIPTS)
    return {"prompts": [(system if shared else []) + tok.encode(text) for shared, text, _, _ in script],
            "max_new_tokens": [n for _, _, n, _ in script], "arrival_s": [ms / 1e3 for *_, ms in script]}


def _snapshot(engine: PagedEngine, rec: dict | None, prev: dict | None, started: set, done: set) -> dict:
    """The pool after one step: owners per block, cached free blocks, what happened in the step."""
    pool, running = engine.pool, engine.running
    owners = [tuple(sorted(o)) for o in pool.owners({r.rid: r.table for r in running})]
    key_of = dict(pool.key_of)
    frame = {"owners": owners, "cached": frozenset(pool.cached_free), "keyed": frozenset(key_of),
             "key_of": key_of, "ref": list(pool.ref), "tables": {r.rid: list(r.table) for r in running},
             "held": {r.rid: r.n_cached for r in running},
             "waiting": sum(r.arrival_s <= engine.now for r in engine.waiting),  # arrived, not running
             "to_come": sum(r.arrival_s > engine.now for r in engine.waiting),
             "time_ms": engine.now * 1e3, "decode": [], "prefill": [], "preempted": [], "joined": [],
             "resumed": [], "finished": [], "found": [], "reused": [], "evicted": []}
    if rec is None:
        return frame
    frame.update(decode=rec["decode"], prefill=rec["prefill"], preempted=rec["preempted"])
    # the blocks a preempted request held alone before this step: given back to the pool (shared ones stay held)
    frame["evicted"] = [(b, rid) for rid in rec["preempted"] for b in prev["tables"].get(rid, [])
                        if prev["owners"][b] == (rid,)]
    for r in engine.requests:
        if r.start_s is not None and r.rid not in started:
            frame["joined"].append((r.rid, r.hit_tokens, len(r.prompt)))
        elif r in running and r.rid not in prev["tables"]:
            frame["resumed"].append(r.rid)
        if r.done and r.rid not in done:
            frame["finished"].append(r.rid)
    for b, now in enumerate(owners):
        before = prev["owners"][b]
        if not now or before:  # only blocks that were free (empty or cached) before this step
            continue
        if b in prev["cached"] and prev["key_of"].get(b) == key_of.get(b):
            frame["found"].append(b)  # a cached prefix found again: its K/V are reused as they are
        elif prev["last_owner"].get(b) is not None:
            frame["reused"].append((b, prev["last_owner"][b]))  # freed by an earlier request, written anew
    return frame


def replay_block_map(cfg, workload: dict, block_size: int, n_blocks: int, costs: StepCostModel = REPLAY_COSTS,
                     max_batch_tokens: int = MAX_BATCH_TOKENS, prefill_chunk: int = PREFILL_CHUNK) -> list[dict]:
    """Serve ``workload`` (``block_map_workload``) with prefix caching, replayed with ``costs``; one
    frame per step (frame 0: before the first step). Raises ValueError if a request can never fit."""
    engine = PagedEngine(cfg, n_blocks=n_blocks, block_size=block_size, max_batch_tokens=max_batch_tokens,
                         prefill_chunk=prefill_chunk, costs=costs)
    for prompt, n, arrival in zip(workload["prompts"], workload["max_new_tokens"], workload["arrival_s"]):
        engine.add_request(prompt, n, arrival_time=arrival)
    frames = [_snapshot(engine, None, None, set(), set())]
    last_owner: dict[int, int] = {}
    while engine.has_work():
        if len(frames) > 1000:
            raise RuntimeError("the replay did not finish within 1000 steps")
        started = {r.rid for r in engine.requests if r.start_s is not None}
        done = {r.rid for r in engine.requests if r.done}
        prev = {**frames[-1], "last_owner": dict(last_owner)}
        frames.append(_snapshot(engine, engine.step(), prev, started, done))
        for b, owners in enumerate(frames[-1]["owners"]):
            if owners:
                last_owner[b] = owners[-1]
    hit = looked_up = 0  # the hit rate so far: prompt tokens found in the cache / prompt tokens of admitted requests
    for f in frames:
        hit += sum(h for _, h, _ in f["joined"])
        looked_up += sum(n for _, _, n in f["joined"])
        f["hit_tokens"], f["prompt_tokens"] = hit, looked_up
    return frames


def block_counts(frames: list[dict], n_blocks: int) -> dict:
    """Per step: blocks held by one request, shared, cached free and free (they add up to n_blocks)."""
    out = {"single": [], "shared": [], "cached": [], "free": []}
    for f in frames:
        single = sum(len(o) == 1 for o in f["owners"])
        shared = sum(len(o) > 1 for o in f["owners"])
        out["single"].append(single)
        out["shared"].append(shared)
        out["cached"].append(len(f["cached"]))
        out["free"].append(n_blocks - single - shared - len(f["cached"]))
    return out


def _rids(rids) -> str:
    return " ".join(f"r{r}" for r in rids) if rids else "—"


class BlockMapPanel(Panel):
    """10 · The block map: a scripted serving run with prefix caching, one step at a time.

    ``BlockMapPanel(model_or_cfg, tok)`` serves ``block_map_workload(tok)`` (or ``workload=``, the same
    dict) for every choice of ``block_size`` and ``n_blocks`` (replays, milliseconds each), then shows
    the pool after the chosen step: who holds which block, what is shared, cached or free, and what
    happened in that step.
    """

    title = "The block pool of a small serving run, step by step"

    def __init__(self, model, tok=None, *, workload: dict | None = None, costs: StepCostModel = REPLAY_COSTS,
                 block_size: int = 4, n_blocks: int = 24, step: int = 12) -> None:
        if workload is None and tok is None:
            raise ValueError("BlockMapPanel needs the tokenizer (to build its script) or workload=")
        check_option("block_size", block_size, BLOCK_SIZES)
        check_option("n_blocks", n_blocks, POOL_SIZES)
        self.cfg = getattr(model, "cfg", model)
        self.workload = workload if workload is not None else block_map_workload(tok)
        self.runs: dict[tuple[int, int], list[dict] | str] = {}
        w = self.workload
        for size in BLOCK_SIZES:
            for n in POOL_SIZES:
                need = [-(-(len(p) + m) // size) for p, m in zip(w["prompts"], w["max_new_tokens"])]
                if max(need) > n:  # a request longer than the whole pool could never finish: said in the panel
                    rid = need.index(max(need))
                    self.runs[size, n] = tr("request r{rid} needs up to {need} blocks of {size} tokens, and the whole "
                                            "pool has {n}", rid=rid, need=need[rid], size=size, n=n)
                    continue
                frames = replay_block_map(self.cfg, w, size, n, costs)
                self.runs[size, n] = (frames, block_counts(frames, n))
        longest = max((len(r[0]) - 1 for r in self.runs.values() if not isinstance(r, str)), default=1)
        super().__init__({
            "step": int_slider(tr("step"), min(step, longest), 0, longest, continuous_update=False),
            "block_size": dropdown(tr("block_size (tokens per block)"), list(BLOCK_SIZES), block_size),
            "n_blocks": dropdown(tr("n_blocks (blocks in the pool)"), list(POOL_SIZES), n_blocks),
        })

    def compute(self, step: int, block_size: int, n_blocks: int) -> dict:
        check_option("block_size", block_size, BLOCK_SIZES)
        check_option("n_blocks", n_blocks, POOL_SIZES)
        run = self.runs[block_size, n_blocks]
        base = {"block_size": block_size, "n_blocks": n_blocks, "asked": step}
        if isinstance(run, str):
            return {**base, "problem": run, "step": step}
        frames, counts = run
        i = min(step, len(frames) - 1)
        f = frames[i]
        single, shared, cached = counts["single"][i], counts["shared"][i], counts["cached"][i]
        return {**base, "step": i, "n_steps": len(frames) - 1, "frame": f, "counts": counts,
                "used": single + shared, "shared": shared, "cached": cached, "free": counts["free"][i],
                "hit_rate": f["hit_tokens"] / f["prompt_tokens"] if f["prompt_tokens"] else 0.0,
                "n_preempted": sum(len(g["preempted"]) for g in frames),
                "n_reused": sum(len(g["reused"]) for g in frames[:i + 1])}

    def render(self, s: dict) -> str:
        if "problem" in s:
            return "<p style='color:#b00'>" + tr("This pool cannot serve the script: {problem}",
                                                  problem=html.escape(s["problem"])) + "</p>"
        f = s["frame"]
        head = tr("<b>Step {step} of {n}</b> (clock {ms:.1f} ms)", step=s["step"], n=s["n_steps"], ms=f["time_ms"])
        if s["asked"] > s["step"]:
            head += " " + tr("(the run ended at step {n})", n=s["n_steps"])
        joined = ", ".join(tr("r{rid} (prefix hit: {hit} of {n} prompt tokens)", rid=rid, hit=hit, n=n)
                           for rid, hit, n in f["joined"]) or "—"
        reused = ", ".join(tr("block {b} (last held by r{rid})", b=b, rid=rid) for b, rid in f["reused"]) or "—"
        found = ", ".join(str(b) for b in f["found"]) or "—"
        prefill = ", ".join(tr("r{rid} ({n} tokens)", rid=rid, n=n) for rid, n in f["prefill"]) or "—"
        events = [(tr("decode"), _rids(f["decode"])), (tr("prefill"), prefill), (tr("joined"), joined),
                  (tr("resumed after preemption"), _rids(f["resumed"])), (tr("finished"), _rids(f["finished"])),
                  (tr("preempted"), _rids(f["preempted"])), (tr("cached blocks found again"), found),
                  (tr("freed blocks reused"), reused)]
        rows = "".join(f"<tr><td>{name}</td><td>{value}</td></tr>" for name, value in events)
        tables = "".join(
            f"<tr><td>r{rid}</td><td>{f['held'][rid]}</td><td>{' '.join(map(str, t))}</td></tr>"
            for rid, t in sorted(f["tables"].items())) or f"<tr><td colspan='3'>{tr('no request running')}</td></tr>"
        counts = tr("Blocks: <b>{used}</b> held ({shared} shared), <b>{cached}</b> cached and free, <b>{free}</b> "
                    "empty, of {n}. Requests waiting: {waiting}; still to arrive: {to_come}. Prefix hit rate so far: "
                    "<b>{rate:.0%}</b>. Over the whole run: {pre} preemptions.", used=s["used"], shared=s["shared"],
                    cached=s["cached"], free=s["free"], n=s["n_blocks"], waiting=f["waiting"], to_come=f["to_come"],
                    rate=s["hit_rate"], pre=s["n_preempted"])
        head_row = "".join(f"<th>{h}</th>" for h in (tr("request"), tr("tokens held"), tr("block table")))
        return (f"<div class='block-map'><p>{head}</p><table>{rows}</table><p>{counts}</p>"
                f"<table><tr>{head_row}</tr>{tables}</table></div>")

    keeps_figures = True  # a step seen before shows its map again without drawing it

    def plot(self, s: dict):
        if "problem" in s:
            return None
        return self.kept_figure((s["step"], s["block_size"], s["n_blocks"]), lambda: plot_block_map(s))
