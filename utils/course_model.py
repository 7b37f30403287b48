"""The course model: a small Llama-style decoder trained on ``utils.corpus``, shipped with the package.

    model, tok = load_course_model()             # eval mode, weights from utils/data/
    ids = tok.encode("<BOS> 我 喜欢")              # [1, 3, 10]
    generate(model, ids, 8, eos_id=tok.eos_id, tokenizer=tok).texts   # ['猫 。 <EOS>']

Shape (``COURSE_CONFIG``): L=4 blocks, C=128, H=4 query heads sharing H_kv=2 K/V heads (GQA),
d_h=32, SwiGLU d_ff=344, max_seq_len=256, V = the tokenizer's 64 words. About 0.74 M parameters.

``python -m utils.course_model --train`` retrains it from scratch (about 140 s of CPU time on one
thread, bit for bit the same weights every time), prints the held-out loss next to two references (a unigram model and the
grammar's own entropy, the best any model can do) and rewrites the files in ``utils/data/``:
``course_model.safetensors`` (weights), ``course_tokenizer.json`` (vocabulary) and
``course_model_training.json`` (the loss curve).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

import torch
import torch.nn.functional as F

from .config import ModelConfig
from .corpus import entropy_per_token, make_splits, vocabulary
from .i18n import tr
from .model import Decoder
from .tokenizer import Tokenizer
from .validate import check_int

DATA_DIR = Path(__file__).resolve().parent / "data"
WEIGHTS_PATH = DATA_DIR / "course_model.safetensors"
TOKENIZER_PATH = DATA_DIR / "course_tokenizer.json"
TRAINING_LOG_PATH = DATA_DIR / "course_model_training.json"
DRAFT_WEIGHTS_PATH = DATA_DIR / "course_draft.safetensors"  # the small draft of speculative decoding

COURSE_CONFIG = ModelConfig(
    vocab_size=len(vocabulary()),
    n_layers=4,
    n_heads=4,
    n_kv_heads=2,
    d_model=128,
    d_ff=344,
    max_seq_len=256,
)

# The draft model of notebook 12 (speculative decoding): the same tokenizer and corpus, one block, a
# quarter of the width. About 1/15 of the course model's parameters; trained by the same recipe
# (``python -m utils.course_model --train --draft``).
DRAFT_CONFIG = ModelConfig(
    vocab_size=len(vocabulary()),
    n_layers=1,
    n_heads=2,
    n_kv_heads=1,
    d_model=64,
    d_ff=172,
    max_seq_len=256,
)

# Training recipe of the shipped weights (``train()``'s defaults).
STEPS = 1500
BATCH_SIZE = 64
LR = 3e-3
N_TRAIN_DOCS = 40_000
N_HELDOUT_DOCS = 2_000
EVAL_EVERY = 100
# The thread count is fixed because it changes the order of float sums, hence the exact weights.
# One thread: a model this small gains little from two, and on two cores shared with anything
# else, two threads spin-wait for each other and run several times slower.
THREADS = 1


def course_tokenizer() -> Tokenizer:
    """The tokenizer of the course model, built from the grammar's vocabulary."""
    return Tokenizer(vocabulary())


def _pad_right(rows: list[list[int]], pad_id: int) -> torch.Tensor:
    T = max(len(r) for r in rows)
    return torch.tensor([r + [pad_id] * (T - len(r)) for r in rows], dtype=torch.long)  # (B, T)


def _lm_loss(model: Decoder, batch: torch.Tensor, pad_id: int, reduction: str = "mean") -> torch.Tensor:
    """Next-token cross-entropy of a right-padded batch ``[B, T]``; padding is never a target.

    Documents are right-padded, so every document starts at position 0 exactly as a prompt does
    at inference, and causal attention keeps the padding after a document out of its tokens' view.
    """
    logits = model(batch[:, :-1])  # (B, T-1, V)
    targets = batch[:, 1:]  # (B, T-1): token t+1 is the answer at position t
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=pad_id, reduction=reduction)


@torch.no_grad()
def heldout_loss(model: Decoder, docs: list[str], tokenizer: Tokenizer, batch_size: int = 500) -> float:
    """Mean next-token loss (nats per token, every token after ``<BOS>``) of ``model`` on ``docs``."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for i in range(0, len(docs), batch_size):
        batch = _pad_right([tokenizer.encode(d) for d in docs[i : i + batch_size]], tokenizer.pad_id)
        total += float(_lm_loss(model, batch, tokenizer.pad_id, reduction="sum"))
        count += int((batch[:, 1:] != tokenizer.pad_id).sum())
    model.train(was_training)
    return total / count


def unigram_loss(train_docs: list[str], heldout_docs: list[str], tokenizer: Tokenizer) -> float:
    """Loss of the unigram baseline: every token predicted with its training frequency, ignoring context.

    Fitted on the training targets (all tokens after ``<BOS>``), add-one smoothed.
    """
    counts = Counter(i for d in train_docs for i in tokenizer.encode(d)[1:])
    total = sum(counts.values()) + tokenizer.vocab_size
    targets = [i for d in heldout_docs for i in tokenizer.encode(d)[1:]]
    return -sum(math.log((counts[i] + 1) / total) for i in targets) / len(targets)


@contextmanager
def _deterministic(threads: int):
    """Fixed thread count and deterministic kernels while training; restores the caller's settings."""
    old_threads, old_det = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(old_threads)
        torch.use_deterministic_algorithms(old_det)


def train(
    steps: int = STEPS,
    seed: int = 0,
    progress: bool = True,
    *,
    batch_size: int = BATCH_SIZE,
    lr: float = LR,
    n_train_docs: int = N_TRAIN_DOCS,
    n_heldout_docs: int = N_HELDOUT_DOCS,
    eval_every: int = EVAL_EVERY,
    cfg: ModelConfig = COURSE_CONFIG,
    threads: int = THREADS,
) -> tuple[Decoder, dict]:
    """Train a fresh course model from ``seed``; returns ``(model in eval mode, history)``.

    AdamW, linear warm-up then cosine decay, gradient clipping at 1.0; each step is a batch of
    ``batch_size`` whole documents, right-padded. Same seed and same ``threads``: bit-identical
    weights (torch's deterministic kernels; another thread count sums floats in another order).

    ``history`` holds ``step``/``train_loss`` (every step), ``eval_step``/``heldout_loss``
    (every ``eval_every`` steps and at the end), ``unigram_heldout_loss``,
    ``grammar_entropy`` (the best possible loss on the held-out set), ``seconds`` (wall clock)
    and ``cpu_seconds``.
    """
    check_int("steps", steps)
    tok = course_tokenizer()
    if cfg.vocab_size != tok.vocab_size:
        raise ValueError(f"cfg.vocab_size={cfg.vocab_size} but the tokenizer has {tok.vocab_size} words")
    train_docs, heldout_docs = make_splits(n_train_docs, n_heldout_docs, seed)
    encoded = [tok.encode(d) for d in train_docs]
    history = {
        "step": [], "train_loss": [], "eval_step": [], "heldout_loss": [],
        "unigram_heldout_loss": unigram_loss(train_docs, heldout_docs, tok),
        "grammar_entropy": entropy_per_token(heldout_docs),
    }
    warmup = max(1, min(100, steps // 10))

    def lr_at(step: int) -> float:  # linear warm-up, then cosine down to 10% of lr
        if step < warmup:
            return lr * (step + 1) / warmup
        t = (step - warmup) / max(1, steps - warmup)
        return lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))

    with _deterministic(threads):
        torch.manual_seed(seed)
        model = Decoder(cfg).train()
        opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.01)
        gen = torch.Generator().manual_seed(seed)
        order, cursor = torch.randperm(len(encoded), generator=gen), 0
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=steps, desc="training the course model", unit="step")
        t0, cpu0 = time.perf_counter(), time.process_time()
        for step in range(steps):
            if cursor + batch_size > len(order):  # next epoch, new order
                order, cursor = torch.randperm(len(encoded), generator=gen), 0
            batch = _pad_right([encoded[i] for i in order[cursor : cursor + batch_size].tolist()], tok.pad_id)
            cursor += batch_size
            for group in opt.param_groups:
                group["lr"] = lr_at(step)
            loss = _lm_loss(model, batch, tok.pad_id)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            history["step"].append(step)
            history["train_loss"].append(round(loss.item(), 5))
            if (step + 1) % eval_every == 0 or step + 1 == steps:
                history["eval_step"].append(step + 1)
                history["heldout_loss"].append(round(heldout_loss(model, heldout_docs, tok), 5))
            if bar is not None:
                bar.update(1)
                if history["heldout_loss"]:
                    bar.set_postfix(loss=f"{history['train_loss'][-1]:.3f}", heldout=f"{history['heldout_loss'][-1]:.3f}")
        if bar is not None:
            bar.close()
        history["seconds"] = round(time.perf_counter() - t0, 1)  # wall clock
        history["cpu_seconds"] = round(time.process_time() - cpu0, 1)  # this process's CPU time, all threads
        history["threads"] = threads
    return model.eval(), history


def save_course_model(model: Decoder, history: dict | None = None, data_dir: str | Path = DATA_DIR,
                      draft: bool = False) -> None:
    """Write the weights (safetensors), the vocabulary and the training log into ``data_dir``
    (``draft=True``: the draft model's weights only)."""
    from safetensors.torch import save_file

    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}  # fp32: ~3 MB
    weights = data_dir / (DRAFT_WEIGHTS_PATH if draft else WEIGHTS_PATH).name
    if draft:
        meta = {"config": json.dumps(asdict(model.cfg)), "history": json.dumps(history or {})}
        save_file(state, str(weights), metadata=meta)
        weights.chmod(0o644)
        return
    save_file(state, str(weights), metadata={"config": json.dumps(asdict(model.cfg))})
    weights.chmod(0o644)  # safetensors creates the file owner-only; a shipped file must be world-readable
    course_tokenizer().to_json(data_dir / TOKENIZER_PATH.name)
    if history is not None:
        log = {**history, "torch_version": torch.__version__, "config": asdict(model.cfg)}
        (data_dir / TRAINING_LOG_PATH.name).write_text(json.dumps(log) + "\n")


def load_course_model(data_dir: str | Path = DATA_DIR) -> tuple[Decoder, Tokenizer]:
    """The trained course model (eval mode) and its tokenizer, read from the package's data files.

    Weights are read with ``safetensors`` only: no pickle, so loading runs no code from the file.
    """
    from safetensors import safe_open
    from safetensors.torch import load_file

    data_dir = _data_dir(data_dir, "load_course_model")
    path = data_dir / WEIGHTS_PATH.name
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; run `python -m utils.course_model --train` to create it")
    tok = Tokenizer.from_json(data_dir / TOKENIZER_PATH.name)
    with safe_open(str(path), framework="pt") as f:
        saved_cfg = json.loads((f.metadata() or {}).get("config", "{}"))
    wanted = asdict(COURSE_CONFIG)
    differ = {k: (v, wanted[k]) for k, v in saved_cfg.items() if k in wanted and wanted[k] != v}
    if differ:
        raise ValueError(f"{path} does not fit COURSE_CONFIG: (saved, expected) = {differ}")
    if tok.vocab_size != COURSE_CONFIG.vocab_size:
        raise ValueError(f"tokenizer has {tok.vocab_size} words, COURSE_CONFIG.vocab_size={COURSE_CONFIG.vocab_size}")
    model = Decoder(COURSE_CONFIG)
    model.load_state_dict(load_file(str(path)), strict=True)
    return model.eval(), tok


def load_draft_model(data_dir: str | Path = DATA_DIR) -> tuple[Decoder, Tokenizer]:
    """The small draft model of speculative decoding (eval mode) and its tokenizer, the course model's:
    ``draft, tok = load_draft_model()``, as ``model, tok = load_course_model()``."""
    from safetensors.torch import load_file

    data_dir = _data_dir(data_dir, "load_draft_model")
    path = data_dir / DRAFT_WEIGHTS_PATH.name
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; run `python -m utils.course_model --train --draft` to create it")
    model = Decoder(DRAFT_CONFIG)
    model.load_state_dict(load_file(str(path)), strict=True)
    return model.eval(), Tokenizer.from_json(data_dir / TOKENIZER_PATH.name)


def _data_dir(data_dir, caller: str) -> Path:
    """``data_dir`` as a Path; anything else (a model passed by habit) is named."""
    if not isinstance(data_dir, (str, os.PathLike)):
        raise ValueError(tr("{caller}(data_dir) takes the folder of the weights (a str or pathlib.Path; the default is "
                            "the package's), got {type}: call {caller}() with no argument", caller=caller,
                            type=type(data_dir).__name__))
    return Path(data_dir)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", action="store_true", help="train from scratch and rewrite utils/data/")
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=THREADS, help="torch threads while training")
    parser.add_argument("--draft", action="store_true", help="the small draft model of notebook 12 instead")
    args = parser.parse_args(argv)
    if args.train and args.draft:
        model, hist = train(steps=args.steps, seed=args.seed, threads=args.threads, cfg=DRAFT_CONFIG)
        save_course_model(model, hist, draft=True)
        print(f"draft model: {model.cfg.n_params:,} parameters, held-out loss {hist['heldout_loss'][-1]:.4f} "
              f"nats/token (unigram {hist['unigram_heldout_loss']:.4f}), {hist['seconds']:.1f} s; "
              f"{DRAFT_WEIGHTS_PATH.stat().st_size:,} bytes -> {DRAFT_WEIGHTS_PATH}")
        return
    if not args.train:
        model, tok = load_course_model()
        print(f"course model: {model.cfg.n_params:,} parameters, V={tok.vocab_size}; pass --train to retrain")
        return
    model, hist = train(steps=args.steps, seed=args.seed, threads=args.threads)
    save_course_model(model, hist)
    loss, base, floor = hist["heldout_loss"][-1], hist["unigram_heldout_loss"], hist["grammar_entropy"]
    print(f"held-out loss     {loss:.4f} nats/token   perplexity {math.exp(loss):.3f}")
    print(f"unigram baseline  {base:.4f} nats/token   perplexity {math.exp(base):.3f}")
    print(f"grammar entropy   {floor:.4f} nats/token   perplexity {math.exp(floor):.3f}  (the best possible)")
    print(f"training time     {hist['seconds']:.1f} s for {args.steps} steps "
          f"({hist['cpu_seconds']:.1f} s of CPU time, {args.threads} thread(s))")
    print(f"weights           {WEIGHTS_PATH.stat().st_size:,} bytes -> {WEIGHTS_PATH}")


if __name__ == "__main__":
    main()
