# Accumulation precision: a tensor core's short accumulator.
# Every variant loses bits (3% to 47% of the sum: K x p is far above the
# point where the cut passes p's last bit) and none loses everything;
# tests/test_exercise_accum.c checks every combination of the lists. (Named to
# sort after the other files: the TUI tests find exercises by their place in the list.)

[fp8.3]
title: The error of a short, truncating accumulator
kind: accum-error
lesson: low-precision-training
param K: 4096
vary K: list 4096 3072 6144 8192
param N: 14
vary N: list 14 13
param p: 1.125
vary p: list 1.125 1.375 1.625 1.1875 0.9375 1.0625 0.875
prompt: Hopper's fp8 tensor cores keep only about N significant bits of a partial sum
  (DeepSeek-V3 reports about 14). Model it like this: before each add, the sum S and the
  product are aligned to the exponent E of the larger one (2^E <= max < 2^(E+1)); every
  bit below 2^(E-N+1) is dropped (truncated toward zero), and the kept parts add exactly.
  .
  K = {K} products, each exactly p = {p}, are added one at a time, starting from 0, with
  N = {N}. What is the exact sum, what does the accumulator end with, and what is the
  relative error (as a fraction, against the exact sum)? How many products are added
  before the first bit is lost?
field exact: number exact -- K x p
field result: number exact -- the accumulator's sum after {K} products
field rel_error: number rel 1e-3 -- |exact - result| / exact
field exact_steps: optional number exact -- products added before the first lost bit
hint: Write p in binary: its last 1 bit sets the smallest cut that keeps it whole. While
  the cut 2^(E-N+1) is at or below that bit, every add is exact.
hint: The cut doubles each time the sum passes a power of two. From then on each product
  keeps only its multiple of the cut (p truncated), and the first add after a crossing can
  also cut the sum itself.
hint: Follow the sum binade by binade: count the adds in each (the kept part of p is the
  same for all of them), then add up. Check with mixprec exercise solve fp8.3.
