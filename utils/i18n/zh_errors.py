"""Chinese catalogue part: the error messages a learner meets (see utils/i18n/__init__.py).

Each ``ValueError`` of the engine's guards (utils/validate.py), the caches, the tokenizer, the sampler,
the bug lab, the exercises and the quiz is an English text passed through ``tr`` with its values named;
here is its Chinese. Argument names, values and code stay as they are (the message must still name
them); code inside a Chinese sentence sits in backticks (`ids = tok.encode(text)`).
"""

MESSAGES: dict[str, str] = {
    # --- utils/validate.py: numbers and choices ---------------------------------------------------------
    "{name} must be an int, got {value!r} ({type})": "{name} 必须是整数，实际是 {value!r}（{type}）",
    "{name} must be >= {minimum}, got {value}": "{name} 必须 >= {minimum}，实际是 {value}",
    "{name} must be <= {maximum}, got {value}": "{name} 必须 <= {maximum}，实际是 {value}",
    "{name}={value!r}; choose one of {choices}": "{name}={value!r} 无效：请从 {choices} 中选一个",
    "tol must be > 0, got {tol!r}": "tol 必须 > 0，实际是 {tol!r}",
    "dtype={dtype!r}; use a torch dtype or one of {names}": "dtype={dtype!r} 无效：请用 torch 的 dtype，或 {names} 之一",

    # --- utils/validate.py: what the model is fed -----------------------------------------------------------
    "input_ids must be a [B, T] tensor of token ids, got {shape}":
        "input_ids 必须是由 token id 组成的 [B, T] 张量，实际是 {shape}",
    "empty input: input_ids has shape {shape}; is the prompt empty? A prompt needs at least one token (e.g. <BOS>)":
        "输入为空：input_ids 的形状是 {shape}。提示词是空的吗？提示词至少要有一个 token（例如 <BOS>）",
    "input_ids must hold integer token ids, got dtype {dtype}": "input_ids 必须是整数 token id，实际的 dtype 是 {dtype}",
    "empty input: input_ids has shape {shape}; a prompt needs at least one token":
        "输入为空：input_ids 的形状是 {shape}；提示词至少要有一个 token",
    "token id {id} is outside the vocabulary [0, {last}] (vocab_size={vocab_size})":
        "token id {id} 不在词表范围 [0, {last}] 内（vocab_size={vocab_size}）",
    "sequence of {n} positions ({past} cached + {new} new) exceeds max_seq_len={max_seq_len}":
        "序列共 {n} 个位置（已缓存 {past} 个 + 新增 {new} 个），超过了 max_seq_len={max_seq_len}",
    "input_ids has batch size {B} but the cache holds {rows} rows": "input_ids 的批大小是 {B}，缓存里却有 {rows} 行",
    "cache has {cache} layers, the model {model}": "缓存有 {cache} 层，模型却有 {model} 层",
    "attention_mask must have the shape of input_ids {expected}, got {shape}":
        "attention_mask 的形状必须与 input_ids 相同，即 {expected}，实际是 {shape}",
    "attention_mask must hold only 0 (padding) and 1 (real token)": "attention_mask 只能含 0（填充）和 1（真实 token）",
    "position_ids must be [T] or [B, T] = {shape}": "position_ids 的形状必须是 [T] 或 [B, T] = {shape}",
    "position_ids must lie in [0, {last}]": "position_ids 必须落在 [0, {last}] 内",
    "attention_mask must be left-padded (last column all 1); rows {rows} end with padding":
        "attention_mask 必须是左填充（最后一列全为 1）；这些行以填充结尾：{rows}",
    "cache must be a KVCache or StaticKVCache (a utils.cache.Cache), got {type}{hint}":
        "`cache` 必须是 KVCache 或 StaticKVCache（即 utils.cache.Cache），实际是 {type}{hint}",
    ": prefill returns (logits, cache); unpack it, e.g. `logits, cache = prefill(model, ids)`":
        "：prefill 返回的是 `(logits, cache)` 二元组，要先拆开，例如 `logits, cache = prefill(model, ids)`",
    ": cache is a cache object; the string option is cache_kind= (in generate, beam_search, ...)":
        "：`cache` 要传缓存对象；字符串选项是 `cache_kind=`（generate、beam_search 等函数都有）",
    "token_ids must be a [B] tensor (one new token per row), got {shape}":
        "token_ids 必须是 [B] 张量（每行一个新 token），实际是 {shape}",
    "decode_step needs a cache filled by prefill; got an empty cache":
        "decode_step 需要一个已由 prefill 填好的缓存（`cache`），传入的却是空缓存",
    "prompt of {n} tokens + {what}={n_new} exceeds max_seq_len={max_seq_len}":
        "提示词 {n} 个 token + {what}={n_new}，超过了 max_seq_len={max_seq_len}",
    "prompt of {n} tokens + {what}={n_new} exceeds {whose} max_seq_len={max_seq_len}":
        "提示词 {n} 个 token + {what}={n_new}，超过了{whose} max_seq_len={max_seq_len}",
    # utils.validate.WHOSE: whose max_seq_len (utils/speculative.py)
    "the target's": "目标模型的",
    "the draft's": "草稿模型的",

    # --- utils/validate.py: what may be allocated --------------------------------------------------------------
    "{env}={text!r} must be a number of GB, e.g. 40": "{env}={text!r} 必须是一个 GB 数，例如 40",
    "{env}={text!r} must be a number of GB > 0": "{env}={text!r} 必须是大于 0 的 GB 数",
    "{what} would reserve {gb:,.1f} GB ({nbytes:,} bytes), over the course's limit of {limit:g} GB: is a size off "
    "by a few zeros? (To allow it, set the environment variable {env} to a number of GB.)":
        "{what} 要预留 {gb:,.1f} GB（{nbytes:,} 字节），超过了课程设定的上限 {limit:g} GB：是不是某个尺寸多写了几个 0？"
        "（确实需要的话，把环境变量 {env} 设为一个 GB 数。）",

    # --- utils/validate.py: what a cache is given, sampling and the generation loop -----------------------------
    "k and v must both be [B, H_kv, T, d_h]; got k {k} and v {v}": "k 和 v 都必须是 [B, H_kv, T, d_h]；实际 k 是 {k}，v 是 {v}",
    "reorder index must be a 1-D integer tensor, got shape {shape} {dtype}":
        "reorder 的索引必须是一维整数张量，实际形状是 {shape}，dtype 是 {dtype}",
    "reorder index {index} out of range for a batch of {B} rows": "reorder 的索引 {index} 超出了范围：这一批只有 {B} 行",
    "crop length {n!r} must be an int in [0, seq_len={seq_len}]": "crop 的长度 {n!r} 必须是 [0, seq_len={seq_len}] 内的整数",
    "logits must be a float tensor [B, V], got {shape}": "logits 必须是 [B, V] 的浮点张量，实际是 {shape}",
    "temperature must be a number >= 0 (0 = greedy), got {value!r}":
        "`temperature` 必须是 >= 0 的数（0 表示贪心解码），实际是 {value!r}",
    "top_k must be None or an int >= 1, got {value!r}": "top_k 必须是 None 或 >= 1 的整数，实际是 {value!r}",
    "top_p must be None or in (0, 1], got {value!r}": "top_p 必须是 None 或落在 (0, 1] 内的数，实际是 {value!r}",
    "these logits look like probabilities (every row is in [0, 1] and sums to 1); sampling expects logits: pass "
    "the model's logits, or torch.log(probs)":
        "这些 logits 看起来像概率（每行都在 [0, 1] 内且和为 1）；采样要的是 logits：请传入模型输出的 logits，"
        "或 `torch.log(probs)`",
    "eos_id must be an int or a list of ints (token ids), got {value!r}":
        "eos_id 必须是一个整数或整数列表（token id），实际是 {value!r}",
    "pass the model first, the tokenizer as tokenizer=...": "先传模型，分词器用 `tokenizer=...` 传入",
    "{name} must be a tokenizer with {needs}(), such as the course Tokenizer (model, tok = load_course_model()), "
    "got {type}: {usage}":
        "{name} 必须是带 {needs}() 方法的分词器，例如课程的 `Tokenizer`（`model, tok = load_course_model()`），"
        "实际是 {type}：{usage}",
    "got the text {text!r} where token ids belong: turn it into ids first, ids = tok.encode(text) (tok: the "
    "tokenizer from load_course_model())":
        "该传 token id 的地方传入了文本 {text!r}：先把它转成 id，`ids = tok.encode(text)`"
        "（`tok` 是 `load_course_model()` 返回的分词器）",
    "{name} must be token ids (ints), got a numpy array: {error}": "{name} 必须是 token id（整数），实际是一个 NumPy 数组：{error}",
    "the prompts have different lengths {lengths}: left-pad them into one batch with "
    "utils.generate.left_pad(rows, pad_id) and pass its attention_mask":
        "这些提示词长度不同 {lengths}：先用 `utils.generate.left_pad(rows, pad_id)` 把它们左填充成一批，"
        "再传入它返回的 attention_mask",
    "{name}: token ids must be ints; got {bad!r}": "{name}：token id 必须是整数，实际是 {bad!r}",
    "{name} must be token ids: a [T] or [B, T] tensor, or a list of ints; got {type} {value!r:.40}":
        "{name} 必须是 token id：[T] 或 [B, T] 张量，或整数列表；实际是 {type} {value!r:.40}",
    "{name} must be [T] or [B, T] token ids, got a tensor of shape {shape}":
        "{name} 必须是 [T] 或 [B, T] 的 token id，实际是形状为 {shape} 的张量",
    "{name} must be one prompt, one sequence of ids ([T] or [1, T]), got {rows} rows (shape {shape}): pass one row, "
    "e.g. ids[0]":
        "{name} 必须是一条提示词，即一个 id 序列（[T] 或 [1, T]），实际有 {rows} 行（形状 {shape}）：只传一行，例如 `ids[0]`",
    "{name} must hold integer token ids, got dtype {dtype}": "{name} 必须是整数 token id，实际的 dtype 是 {dtype}",
    "stop_strings need a tokenizer to turn tokens into text; pass tokenizer=...":
        "stop_strings 需要分词器把 token 转成文本：请传入 `tokenizer=...`",
    "stop_strings must be non-empty strings, got {value!r}": "stop_strings 必须是非空字符串，实际是 {value!r}",
    "pad_id={pad_id} is outside the vocabulary [0, {last}]": "pad_id={pad_id} 不在词表范围 [0, {last}] 内",

    # --- utils/tokenizer.py -------------------------------------------------------------------------------------
    "the vocabulary must start with {special}, got {first}": "词表必须以 {special} 开头，实际是 {first}",
    "the vocabulary lists these words more than once: {words}": "词表里这些词出现了不止一次：{words}",
    "words must be non-empty strings without whitespace, got {words}": "词必须是不含空白的非空字符串，实际是 {words}",
    "encode needs a string, got {type}": "`encode` 需要一个字符串，实际是 {type}",
    "unknown word {word!r}; see tokenizer.vocab for the {n} known words (words are separated by spaces, "
    "e.g. '<BOS> 我 喜欢')":
        "未知的词 {word!r}；已知的 {n} 个词见 tokenizer.vocab（词与词之间用空格分开，例如 '<BOS> 我 喜欢'）",
    "decode takes one sequence of ids, got a tensor of shape {shape}": "`decode` 只接受一个 id 序列，实际是形状为 {shape} 的张量",
    "token id {id!r} is not in the vocabulary [0, {last}]": "token id {id!r} 不在词表范围 [0, {last}] 内",
    "encode_batch needs at least one text, and no empty texts": "encode_batch 至少需要一条文本，且不能有空文本",
    "{path}: expected a JSON object with a 'vocab' list": "{path}：应是一个带 'vocab' 列表的 JSON 对象",

    # --- utils/sampling.py --------------------------------------------------------------------------------------
    "cannot sample: some rows of logits hold NaN or are all -inf (no token is possible): {error}":
        "无法采样：有些行的 logits 含 NaN 或全是 -inf（没有可选的 token）：{error}",

    # --- utils/block_pool.py and utils/paged.py -------------------------------------------------------------------
    "a paged cache needs a ModelConfig (model.cfg) or the model, got {type}":
        "分页缓存需要 ModelConfig（model.cfg）或模型本身，实际是 {type}",
    "a block pool of n_blocks={n_blocks}, block_size={block_size}": "n_blocks={n_blocks}、block_size={block_size} 的块池",
    "the block pool is full: all {n_blocks} blocks of {block_size} tokens are in use (make n_blocks larger, or run "
    "fewer requests at once)":
        "块池已满：全部 {n_blocks} 个块（每块 {block_size} 个 token）都在使用中（把 n_blocks 调大，或同时少跑几个请求）",
    "block {block!r} is not a block of this pool: block ids are ints in [0, {last}]":
        "{block!r} 不是这个块池里的块：块号是 [0, {last}] 内的整数",
    "block {block} is free: it cannot be shared (allocate() hands out a block)":
        "块 {block} 是空闲的，不能共享（块要用 `allocate()` 分配）",
    "block {block} released more times than it was held": "块 {block} 释放的次数比持有的次数还多",
    "block {block} is free: only a block you hold can be copied": "块 {block} 是空闲的：只有你持有的块才能复制",
    "PagedKVCache needs cfg and n_blocks (to make its pool), or pool= (to share one)":
        "PagedKVCache 需要 `cfg` 和 n_blocks（用来建块池），或者 `pool=`（共用一个块池）",
    "pool must be a utils.block_pool.BlockPool, got {type}": "`pool` 必须是 utils.block_pool.BlockPool，实际是 {type}",
    "the batch has {B} rows but this paged cache holds {rows}": "这一批有 {B} 行，这个分页缓存却有 {rows} 行",
    "this step needs {needed} more block(s) of {block_size} tokens but the pool has {free} free of {n_blocks}: "
    "make n_blocks larger":
        "这一步还需要 {needed} 个块（每块 {block_size} 个 token），但块池的 {n_blocks} 个块里只有 {free} 个空闲："
        "把 n_blocks 调大",
    "layer must be an int in [0, {last}], got {layer!r}": "`layer` 必须是 [0, {last}] 内的整数，实际是 {layer!r}",
    "layer {layer} updated out of order: layer {next} is next": "第 {layer} 层的更新顺序不对：下一个应是第 {next} 层",
    "layer {layer}: new k {shape} does not fit [B={B}, H_kv={H_kv}, T_new={T_new}, d_h={d_h}]":
        "第 {layer} 层：新的 k {shape} 与 [B={B}, H_kv={H_kv}, T_new={T_new}, d_h={d_h}] 不符",
    "k has dtype {dtype} but the block pool holds {held}: make the cache with the model's dtype "
    "(dtype=model.lm_head.weight.dtype)":
        "k 的 dtype 是 {dtype}，块池存的却是 {held}：请按模型的 dtype 创建缓存（`dtype=model.lm_head.weight.dtype`）",
    "reuse_prefix starts an empty cache; this one holds rows already": "reuse_prefix 只能用在空缓存上；这个缓存里已经有行了",
    "prompt_ids is empty: there is no prefix to look up": "prompt_ids 是空的：没有可查找的前缀",
    "publish_prefix: this cache holds nothing yet: prefill the prompt into it first (n = cache.reuse_prefix(prompt), "
    "then prefill prompt[n:])":
        "publish_prefix：这个缓存还是空的：先把提示词 prefill 进来（`n = cache.reuse_prefix(prompt)`，再 prefill "
        "`prompt[n:]`）",
    "publish_prefix: row {row}'s K/V were written without their token ids (update() called directly, or a serving "
    "engine's view), so its blocks cannot be named: prefill through the model (prefill(model, ids, cache=cache))":
        "publish_prefix：第 {row} 行的 K/V 写入时没有记下对应的 token id（直接调用了 `update()`，或者是服务引擎的视图），"
        "所以无法给它的块命名：请通过模型来 prefill（`prefill(model, ids, cache=cache)`）",
    "publish_prefix: prompt_ids is not what row {row} holds ({where}): the keys would name K/V of other tokens. "
    "Publish the prompt you prefilled into this cache":
        "publish_prefix：prompt_ids 与第 {row} 行存的内容不一致（{where}）：这样的键会指向别的 token 的 K/V。"
        "请发布你 prefill 进这个缓存的那条提示词",
    "token {i} is {token}, but the row holds {held} there": "第 {i} 个 token 是 {token}，而这一行在该处存的是 {held}",
    "it has {n} tokens, the row holds {held}": "它有 {n} 个 token，而这一行只存了 {held} 个",

    # --- utils/kv_quant.py --------------------------------------------------------------------------------------
    "bits must be 4 or 8, got {bits!r} (codes are stored one or two per byte)":
        "`bits` 必须是 4 或 8，实际是 {bits!r}（量化码按字节存储，每字节存一个或两个）",
    "x must be a float tensor, got {type}": "x 必须是浮点张量，实际是 {type}",
    "x must be a float tensor, got {type} of dtype {dtype}": "x 必须是浮点张量，实际是 dtype 为 {dtype} 的 {type}",
    "dim={dim!r} is not an axis of x (shape {shape}): use one of {axes}":
        "`dim={dim!r}` 不是 x 的维度（x 的形状是 {shape}）：请用 {axes} 之一",
    "4-bit codes are packed two per byte along the last axis: it needs an even size, x has shape {shape}; pad it "
    "by one value, or use bits=8":
        "4 位量化码沿最后一维每两个打包成一个字节，所以最后一维的大小必须是偶数，而 x 的形状是 {shape}：补一个值，"
        "或改用 `bits=8`",
    "codes must be the uint8 tensor quantize returned, got {got}": "量化码必须是 `quantize` 返回的 uint8 张量，实际是 {got}",
    "these codes were made with bits={made}, and dequantize was given bits={bits}: read them back with the bits "
    "that made them":
        "这些量化码是用 `bits={made}` 生成的，`dequantize` 却拿到了 `bits={bits}`：要用生成它们时的 `bits` 来还原",
    "codes {codes} (unpacked for bits={bits}) do not fit scale {scale}: were they made with other bits?":
        "量化码 {codes}（按 `bits={bits}` 解包后）与缩放系数 {scale} 对不上：它们是不是用别的 `bits` 生成的？",
    "layer must be an int in [0, {last}] (filled in order), got {layer!r}":
        "`layer` 必须是 [0, {last}] 内的整数（各层按顺序填入），实际是 {layer!r}",
    "4-bit codes are packed two per byte: d_h must be even, got {d_h}":
        "4 位量化码每两个打包成一个字节：d_h 必须是偶数，实际是 {d_h}",
    "layer {layer}: new k {shape} does not fit the cache's [B={B}, H_kv={H_kv}, T, d_h={d_h}] (only T grows): "
    "decode with the model that filled the cache":
        "第 {layer} 层：新的 k {shape} 与缓存的 [B={B}, H_kv={H_kv}, T, d_h={d_h}] 不符（只有 T 会增长）："
        "请用填充这个缓存的那个模型来解码",
    "layer {layer}: new k has dtype {dtype} but the cache holds {held}: decode with the model that filled the cache":
        "第 {layer} 层：新的 k 的 dtype 是 {dtype}，缓存存的却是 {held}：请用填充这个缓存的那个模型来解码",

    # --- utils/kv_evict.py and utils/sliding.py ------------------------------------------------------------------
    "budget ({budget}) must be at least sinks + window ({sinks} + {window}): those positions are always kept":
        "`budget`（{budget}）至少要等于 `sinks + window`（{sinks} + {window}）：这些位置总会保留",
    "EvictingKVCache does not support padded batches (attention_mask with 0s)":
        "EvictingKVCache 不支持带填充的批（attention_mask 里有 0）",
    "an evicting cache has already forgotten positions; it cannot be cropped": "淘汰式缓存已经丢掉了一些位置，不能再 crop",
    "cannot add {n} positions to {stored} stored with window={window}: once the window is full, feed one token at a "
    "time (utils.sliding.feed)":
        "`window={window}` 时，无法在已存的 {stored} 个位置上再加 {n} 个：窗口满了以后，要一次送入一个 token"
        "（utils.sliding.feed）",
    "RingWindowKVCache does not support padded batches (attention_mask with 0s)":
        "RingWindowKVCache 不支持带填充的批（attention_mask 里有 0）",
    "a RingWindowKVCache keeps its batch size: reorder index has {rows} rows, the cache {B}":
        "RingWindowKVCache 的批大小是固定的：reorder 的索引有 {rows} 行，缓存有 {B} 行",
    "cfg must be a ModelConfig (e.g. MODEL_PRESETS['Llama-2-7B']), got {type}":
        "`cfg` 必须是 ModelConfig（例如 `MODEL_PRESETS['Llama-2-7B']`），收到的是 {type}",
    "SlidingWindowKVCache does not support padded batches (attention_mask with 0s)":
        "SlidingWindowKVCache 不支持带填充的批（attention_mask 里有 0）",
    "a sliding window has already dropped old positions; it cannot be cropped": "滑动窗口已经丢掉了旧的位置，不能再 crop",

    # --- utils/cache.py -----------------------------------------------------------------------------------------
    "layer must be an int in [0, {last}] (layers are filled in order 0, 1, ...), got {layer!r}":
        "`layer` 必须是 [0, {last}] 内的整数（各层按 0, 1, ... 的顺序填入），实际是 {layer!r}",
    "layer {layer}: new k {shape} does not fit cached {cached} (B, H_kv and d_h must match; only T grows)":
        "第 {layer} 层：新的 k {shape} 与已缓存的 {cached} 不符（B、H_kv 和 d_h 必须一致，只有 T 会增长）",
    "layer {layer}: new k has dtype {dtype} but the cache holds {held}: decode with the model (and dtype) that "
    "filled the cache":
        "第 {layer} 层：新的 k 的 dtype 是 {dtype}，缓存存的却是 {held}：请用填充这个缓存的那个模型（和 dtype）来解码",
    "StaticKVCache needs a ModelConfig (model.cfg), got {type}": "StaticKVCache 需要 ModelConfig（model.cfg），实际是 {type}",
    "max_len={max_len} exceeds the model's max_seq_len={max_seq_len}":
        "max_len={max_len} 超过了模型的 max_seq_len={max_seq_len}",
    "layer {layer!r} out of range: this cache has {n} layers": "层号 {layer!r} 超出范围：这个缓存只有 {n} 层",
    "layer {layer}: new k {shape} does not fit the cache's [B={B}, H_kv={H_kv}, T, d_h={d_h}]":
        "第 {layer} 层：新的 k {shape} 与缓存的 [B={B}, H_kv={H_kv}, T, d_h={d_h}] 不符",
    "k has dtype {dtype} but this StaticKVCache was allocated as {held}: allocate it with the model's dtype "
    "(dtype=model.lm_head.weight.dtype)":
        "k 的 dtype 是 {dtype}，这个 StaticKVCache 分配时用的却是 {held}：请按模型的 dtype 分配"
        "（`dtype=model.lm_head.weight.dtype`）",
    "cannot write {n} position(s) at position {start}: StaticKVCache max_len={max_len}":
        "无法从位置 {start} 起写入 {n} 个位置：StaticKVCache 的 max_len={max_len}",
    "a StaticKVCache keeps its batch size: reorder index has {rows} rows, the cache {B}":
        "StaticKVCache 的批大小是固定的：reorder 的索引有 {rows} 行，缓存有 {B} 行",

    # --- utils/beam.py ------------------------------------------------------------------------------------------
    "eos_id={eos_id!r} is outside the vocabulary [0, {last}]": "eos_id={eos_id!r} 不在词表范围 [0, {last}] 内",

    # --- the bug lab, the exercises and the quiz ---------------------------------------------------------------------
    "unknown exercise {id!r}; the exercises are {ids}": "没有练习 {id!r}；现有的练习是 {ids}",
    "check({id!r}, fn) needs your function itself (its name, without calling it), got {fn!r:.60} ({type})":
        "`check({id!r}, fn)` 需要你的函数本身（只写函数名，不要调用它），实际传入的是 {fn!r:.60}（{type}）",
    "number must be a question number from 1 to {n}, got {number!r}": "`number` 必须是 1 到 {n} 之间的题号，实际是 {number!r}",
    "answer question {number} first: got {value!r}": "请先作答第 {number} 题：收到的是 {value!r}",
    "question {number} is a choice: answer with a letter from a to {last} or an option's text, got {value!r}":
        "第 {number} 题是选择题：请用 a 到 {last} 的字母或选项原文作答，实际是 {value!r}",
    "question {number} is true/false; got {value!r}":
        "第 {number} 题是判断题：请答“对”或“错”（也可以写 True 或 False），实际是 {value!r}",

    # --- the model, the generation loop, the loaders and the config (utils/model.py, utils/generate.py,
    # utils/course_model.py, utils/config.py, utils/flat_decode.py) ------------------------------------------------
    "{name} must be a utils.Decoder (e.g. from load_course_model()), got {type}{hint}":
        "{name} 必须是 utils.Decoder（例如 `load_course_model()` 返回的模型），实际是 {type}{hint}",
    " (that is the tokenizer: pass it as tokenizer=...)": "（这是分词器：请用 `tokenizer=...` 传入）",
    "rope must be a RopeTables (from model.rope_tables(positions, dtype)), got {type}: the layers rotate with the "
    "rolled sin table, and a plain (cos, sin) pair would silently rotate wrong":
        "`rope` 必须是 RopeTables（由 `model.rope_tables(positions, dtype)` 得到），实际是 {type}：各层用的是滚动过的 "
        "sin 表，直接传一对 `(cos, sin)` 会不声不响地转错角度",
    "Decoder needs a ModelConfig, got {type}": "`Decoder` 需要 ModelConfig，实际是 {type}",
    "Decoder builds Llama-style models; arch={arch!r} configs are for sizing only":
        "`Decoder` 只构建 Llama 式模型；`arch={arch!r}` 的配置只用于估算大小",
    "left_pad needs at least one row, and no empty rows": "left_pad 至少需要一行，且不能有空行",
    "decode_stepper needs the cache that prefill filled: logits, cache = prefill(model, ids), then step_fn = "
    "decode_stepper(model, cache)":
        "decode_stepper 需要由 prefill 填好的缓存（`cache`）：先 `logits, cache = prefill(model, ids)`，"
        "再 `step_fn = decode_stepper(model, cache)`",
    "{caller}(data_dir) takes the folder of the weights (a str or pathlib.Path; the default is the package's), got "
    "{type}: call {caller}() with no argument":
        "{caller}(data_dir) 接受的是权重所在的文件夹（`str` 或 pathlib.Path；默认用课程包自带的），实际是 {type}："
        "不带参数调用 {caller}() 即可",
    "n_kv_heads={n_kv_heads} is larger than n_heads={n_heads}; each K/V head must serve at least one query head":
        "n_kv_heads={n_kv_heads} 大于 n_heads={n_heads}：每个 K/V 头至少要服务一个查询头",
    "n_heads={n_heads} is not divisible by n_kv_heads={n_kv_heads}; in GQA every K/V head serves the same number of "
    "query heads":
        "n_heads={n_heads} 不能被 n_kv_heads={n_kv_heads} 整除：GQA 里每个 K/V 头服务的查询头一样多",
    "d_model={d_model} is not divisible by n_heads={n_heads}; pass head_dim explicitly if the heads are not C // H "
    "wide":
        "d_model={d_model} 不能被 n_heads={n_heads} 整除：如果每个头的宽度不是 C // H，请显式传入 head_dim",
    "head_dim={head_dim} must be even: RoPE rotates pairs of dimensions": "head_dim={head_dim} 必须是偶数：RoPE 把维度两两成对旋转",
    "rope_theta must be > 0, got {value}": "rope_theta 必须 > 0，实际是 {value}",
    "norm_eps must be > 0, got {value}": "norm_eps 必须 > 0，实际是 {value}",
    "dropout must be in [0, 1), got {value}": "dropout 必须落在 [0, 1) 内，实际是 {value}",
    "the flat decode step would not compute what the modules do: {reason}. Pass step=\"modules\" to run the "
    "model's modules.":
        "扁平解码步算出的结果会与逐模块运行不同：{reason}。请传入 `step=\"modules\"`，逐个模块运行模型。",
    "the model is in train mode (dropout)": "模型处于训练模式（dropout 开着）",
    "attn_impl={attn_impl!r} (the flat step runs SDPA)": "attn_impl={attn_impl!r}（扁平解码步只走 SDPA）",
    "the cache is a {type}, not a plain KVCache, StaticKVCache or PagedKVCache":
        "缓存是 {type}，不是普通的 KVCache、StaticKVCache 或 PagedKVCache",
    "a forward hook is registered for all modules": "注册了一个对所有模块生效的 `forward` 钩子",
    "module {name!r} has a forward hook": "模块 {name!r} 上挂着 `forward` 钩子",
    "module {name!r} ({type}) has its own forward": "模块 {name!r}（{type}）有自己的 `forward`",
    # utils/hub.py: a pretrained model that did not load (the cell says so instead of failing)
    "could not load {name}: {error}": "无法加载 {name}：{error}",
    # panels, cache quality, speculative decoding and the serving engines
    "{name}={value!r} is not one of this panel's choices: {name} may be one of {allowed}":
        '{name}={value!r} 不在这个面板的选项里：{name} 只能取 {allowed} 中的一个',
    "{name}={value!r} is outside this panel's slider: {name} may be from {lo} to {hi}":
        '{name}={value!r} 超出了这个面板滑块的范围：{name} 只能在 {lo} 到 {hi} 之间',
    "prompts is empty: give the panel at least one prompt, e.g. ['<BOS> I like']":
        "`prompts` 是空的：至少给面板一条提示词，例如 ['<BOS> 我 喜欢']",
    'draft_model must be the draft model (draft, tok = load_draft_model()), got {type}':
        '`draft_model` 必须是草稿模型（`draft, tok = load_draft_model()`），收到的是 {type}',
    ": unpack load_draft_model()'s pair":
        '：请先把 `load_draft_model()` 返回的二元组拆开',
    'CacheCompressionPanel needs the tokenizer (to pick held-out documents) or docs=':
        'CacheCompressionPanel 需要分词器（用来挑选留出文档）或 `docs=`',
    'docs is empty: pass at least one [1, T] document (e.g. held_out_docs(tok)), or leave docs out and pass the tokenizer':
        '`docs` 是空的：至少传入一篇 [1, T] 的文档（例如 `held_out_docs(tok)`），或者不传 `docs`、改传分词器',
    'texts is empty: pass at least one [1, T] text (e.g. held_out_docs(tok))':
        '`texts` 是空的：至少传入一段 [1, T] 的文本（例如 `held_out_docs(tok)`）',
    'make_cache must be a function that returns a new cache (e.g. KVCache, or lambda: QuantizedKVCache(bits=4)), got a {type} object: one cache would be shared by every text':
        '`make_cache` 必须是一个每次返回新缓存的函数（例如 KVCache，或 `lambda: QuantizedKVCache(bits=4)`），收到的却是一个 {type} 对象：那样所有文本会共用同一个缓存',
    'make_cache() returned a {type}, not a cache: it must return a new cache object, e.g. lambda: KVCache()':
        '`make_cache()` 返回的是 {type}，不是缓存：它必须返回一个新的缓存对象，例如 `lambda: KVCache()`',
    'make_cache() returned a cache that already holds {n} tokens: each call must make a new, empty cache (lambda: KVCache(), not lambda: cache), or every text is read after the ones before it':
        '`make_cache()` 返回的缓存里已经有 {n} 个 token：每次调用都必须新建一个空缓存（`lambda: KVCache()`，而不是 `lambda: cache`），否则每段文本都会接在前面的文本之后读',
    'draft={draft!r}: for prompt lookup pass a PromptLookup() object (from utils.speculative); for a draft model, the model (draft, tok = load_draft_model())':
        '`draft`={draft!r}：用提示词查找时请传入 `PromptLookup()` 对象（来自 utils.speculative）；用草稿模型时请传入模型本身（`draft, tok = load_draft_model()`）',
    'prompt_ids must hold at least one token, got an empty prompt':
        '`prompt_ids` 至少要有一个 token，收到的提示词是空的',
    'arrival_time must be a number of seconds >= 0, got {value!r}':
        '`arrival_time` 必须是 >= 0 的秒数，收到的是 {value!r}',
    'prompt ({p}) + max_new_tokens ({n}) = {total} tokens exceeds max_seq_len={limit}':
        '提示词（{p}）+ max_new_tokens（{n}）= {total} 个 token，超过了 `max_seq_len`={limit}',
    'unknown request id {rid!r}: this engine has ids 0 .. {last}':
        '没有编号为 {rid!r} 的请求：这个引擎的请求编号是 0 .. {last}',
    'arrival_s must hold one time per request: {n} requests, got {m} times':
        '`arrival_s` 必须为每个请求给一个时间：共 {n} 个请求，却收到 {m} 个时间',
    'prefix_caching must be True or False, got {value!r}':
        '`prefix_caching` 必须是 True 或 False，收到的是 {value!r}',
    'fitting step costs needs at least 4 busy iterations, got {n}':
        '拟合每步开销至少需要 4 次有工作的迭代，只有 {n} 次',
}
