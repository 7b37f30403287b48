"""Chinese for notebook 14 (the numerics of cached inference): summation orders, settings, batches, paths."""
from __future__ import annotations

MESSAGES = {
    # utils/numerics/ulp.py: sum_in_orders
    "left to right": "从左到右",
    "right to left": "从右到左",
    "smallest first": "小的先加",
    "shuffled": "随机打乱",
    "pairwise": "两两成对",
    "torch.sum": "torch.sum",
    # utils/numerics/settings.py: SETTINGS
    "float32, SDPA (baseline)": "float32，SDPA（基线）",
    "float32, explicit softmax": "float32，显式 softmax",
    "float32, 2 threads": "float32，2 个线程",
    "float32, deterministic mode": "float32，确定性模式",
    "bfloat16": "bfloat16",
    "float16": "float16",
    # utils/numerics/batches.py: compositions and PATHS
    "alone": "单独运行",
    "beside a longer prompt": "排在更长的提示旁",
    "in a batch of 8": "8 个提示的批中",
    "standard": "标准路径",
    "batch-invariant": "批不变路径",
    # notebook 14, section 5: what a cached run is compared with
    "uncached": "不用缓存",
    "sums reordered": "求和换序",
}
