# Exercises of the lesson "Mixed precision training (fp16, bf16)".
# Instructors script against these ids, parameters and field names: keep them.
# The file format is described in README.md in this folder.

[7.4a]
title: Smallest normal values, and which formats flush a small gradient
kind: underflow
lesson: mixed-precision
param G: 1e-8
vary G: list 1e-8 2e-8 5e-9 3e-9 1e-9 4e-8 8e-8 2e-7 1e-6 3e-6
prompt: State the smallest positive normal value of fp16, bf16 and fp32.
  Gradients in a model are as small as G = {G}. Under round-to-nearest-even,
  does a gradient of magnitude {G} become zero when it is stored in fp16?
  In bf16? Use the answers to explain why fp16 training needs loss scaling
  and bf16 training does not.
# rel 5e-3 accepts the lesson's three-digit figures (2^-126 = 1.1755e-38 given as 1.18e-38)
field fp16_min_normal: number rel 5e-3 -- smallest positive normal fp16 value
field bf16_min_normal: number rel 5e-3 -- smallest positive normal bf16 value
field fp32_min_normal: number rel 5e-3 -- smallest positive normal fp32 value
field fp16_flushes: choice yes|no -- does {G} become 0 in fp16 (RNE)?
field bf16_flushes: choice yes|no -- does {G} become 0 in bf16 (RNE)?
hint: The smallest normal value is 2^emin with emin = 1 - bias; fp16 has bias 15,
  bf16 and fp32 have bias 127. You may answer 2^-14.
hint: Below the smallest normal come the subnormals, down to 2^(emin - fraction bits).
  Round-to-nearest gives 0 for values at most half of the smallest subnormal.
hint: fp16's smallest subnormal is 2^-24, about 5.96e-8; half of it is about 2.98e-8.
  Compare {G} with that; bf16 reaches down to 2^-133.

[7.4b]
title: Scaling the loss scales every gradient
kind: loss-scale
lesson: mixed-precision
param S: 65536
vary S: list 256 512 1024 2048 4096 8192 16384 32768 65536
param g: 1e-8
vary g: list 1e-8 2e-8 5e-9 3e-9 1e-9
prompt: The loss L is scaled by S = {S} before the backward pass: L' = S * L.
  (1) What is dL'/dL?
  (2) By the chain rule, dL'/dw = dL'/dL * dL/dw: by what factor is every gradient
  multiplied?
  (3) By what must the optimiser multiply the gradients before the update?
  (4) A gradient of {g} is computed in fp16: what is it after scaling, and does it
  flush to zero in fp16 without and with the scale (round to nearest even)?
field dscaled_dloss: number rel 1e-9 -- step 1: dL'/dL
field factor: number rel 1e-9 -- step 2: what every gradient is multiplied by
field unscale: number rel 1e-9 -- step 3: what the optimiser multiplies the gradients by
field scaled_grad: number rel 1e-3 -- the gradient {g} after scaling
field unscaled_flushes: choice yes|no -- does {g} flush to 0 in fp16?
field scaled_flushes: choice yes|no -- does the scaled gradient flush to 0 in fp16?
hint: Write L' = S * L and differentiate with respect to w; S is a constant.
hint: d(S*L)/dw = S * dL/dw, at every layer: backpropagation multiplies by local
  derivatives that do not depend on S.
hint: fp16 flushes values at or below 2^-25 (about 2.98e-8) to zero.

[7.4c]
title: Training memory of a model in bf16 mixed precision
kind: memory
lesson: mixed-precision
param P: 7e9
vary P: list 1.3e9 2.7e9 6.7e9 7e9 8e9 13e9 30e9 34e9 70e9 175e9
prompt: A model has P = {P} parameters. It is trained in bf16 mixed precision with
  Adam: fp32 master weights, a bf16 working copy of the weights, bf16 gradients,
  an fp32 gradient accumulator, and Adam's two fp32 moment estimates.
  Ignoring activations, how many bytes does training keep per parameter, and
  how much memory in total, in GB (10^9 bytes) and in GiB (2^30 bytes)? Compare
  with the rule of thumb of 20 GB per billion parameters.
field bytes_per_param: number exact unit B -- bytes kept per parameter
field total_gb: number rel 1e-2 unit GB -- total, in GB (10^9 bytes)
field total_gib: number rel 1e-2 unit GiB -- the same total in GiB (2^30 bytes)
hint: List every tensor kept per parameter and its element size: fp32 is 4 bytes,
  bf16 is 2 bytes.
hint: master 4 + weights 2 + gradients 2 + accumulator 4 + Adam m 4 + Adam v 4.
hint: Multiply the bytes per parameter by {P} and divide by 10^9.

[7.4d]
title: Round a value by hand to fp16, bf16 and fp32
kind: hand-round
lesson: mixed-precision
param V: 0.1
vary V: list 0.1 0.2 0.3 0.7 1.1 2.2 3.3 0.01 5.9 0.001 1.7 0.45 12.3 0.06
prompt: Round V = {V} by hand to fp16, bf16 and fp32 with round-to-nearest-even.
  For each format give the bit pattern and the relative error
  |rounded - V| / |V|. Which format represents {V} best, and which worst?
field fp16_bits: bits fp16 -- the fp16 bit pattern of {V}
field bf16_bits: bits bf16 -- the bf16 bit pattern of {V}
field fp32_bits: bits fp32 -- the fp32 bit pattern of {V}
field fp16_rel_error: number rel 2e-2 -- relative error in fp16
field bf16_rel_error: number rel 2e-2 -- relative error in bf16
field fp32_rel_error: number rel 2e-2 -- relative error in fp32
field best: choice fp16|bf16|fp32 -- the format with the smallest relative error
field worst: choice fp16|bf16|fp32 -- the format with the largest relative error
hint: Write {V} as 1.f x 2^e: find e with 2^e <= V < 2^(e+1). The exponent field is
  e + bias (fp16: 15, bf16 and fp32: 127).
hint: Write out the fraction bits of V / 2^e - 1 one past the last kept bit (10 bits in
  fp16, 7 in bf16, 23 in fp32): the next bit is the guard bit; any 1 further on
  is sticky.
hint: Round up when the guard bit is 1 and anything after it is nonzero, or when it is
  an exact tie and the last kept bit is 1. Check with: mixprec bits {V} --format fp16,bf16,fp32

[7.4e]
title: Why bf16 weights need fp32 master copies
kind: update-vanish
lesson: mixed-precision
param w: 600
vary w: range 3 5000 log round bf16
prompt: A weight is stored in bf16 and has the value w = {w}. bf16 keeps 8 significant
  bits (7 stored), like fp32's range but not its precision.
  What is the gap from w to the next larger bf16 value? Below what magnitude does
  a positive update added to w leave it unchanged (round to nearest even)?
  Each rounding contributes a relative error of up to 2^-8; if these add up like
  a random walk, after how many steps T does sqrt(T) x 2^-8 reach 1?
field spacing: number rel 1e-6 -- the gap from {w} to the next larger bf16 value
field vanish_below: number rel 1e-6 -- updates smaller than this vanish
field steps: number rel 1e-6 -- T with sqrt(T) x 2^-8 = 1
hint: Find e with 2^e <= w < 2^(e+1); bf16 neighbours in that range are 2^(e-7) apart.
hint: Round-to-nearest keeps w unless the update passes half the gap.
hint: sqrt(T) = 2^8. Check with: mixprec bits {w} --format bf16
