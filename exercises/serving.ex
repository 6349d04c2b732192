# Exercises of the lesson "Memory at scale" (its serving half).

[sv.1]
title: The KV cache of a batch with grouped-query attention
kind: kv-cache
lesson: memory-at-scale
# Llama-3-8B's attention (Meta's config.json: 32 layers, 32 query heads, 8 KV heads of 128)
param layers: 32
param heads: 32
param kv_heads: 8
param head_dim: 128
param bytes: 2
param context: 8192
vary context: list 1024 2048 4096 8192
param batch: 4
vary batch: list 1 2 4 8 16
prompt: A server keeps the keys and values of every token it has seen. Its model has
  {layers} layers with {heads} query heads that share {kv_heads} KV heads of {head_dim}
  elements (grouped-query attention), and caches them in {bytes}-byte elements.
  How many bytes does one token take in the cache? How much does a batch of {batch} sequences of {context} tokens take, in GiB (2^30
  bytes) and in GB (10^9 bytes)?
field per_token_bytes: number exact unit B -- bytes of one token's keys and values
field total_gib: number rel 1e-3 unit GiB -- the batch's cache, in GiB
field total_gb: number rel 1e-3 unit GB -- the same in GB
hint: Each layer keeps, for every token, one key vector and one value vector per KV head.
  Which heads count: the query heads or the KV heads?
hint: 2 (key and value) x {layers} layers x {kv_heads} KV heads x {head_dim} elements
  x {bytes} bytes per token; then multiply by {batch} x {context} tokens.
  Check: mixprec budget --serve --preset llama-3-8b --context {context} --batch {batch} --csv
