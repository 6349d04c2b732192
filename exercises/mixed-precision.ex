# Exercises of the lesson "Mixed precision training (fp16, bf16)".
# Instructors script against these ids, parameters and field names: keep them.
# The file format is described in README.md in this folder.

[7.4a]
title: Smallest normal values, and which formats flush a small gradient
kind: underflow
lesson: mixed-precision
# G lies below 2^-25 (half of fp16's smallest subnormal: it flushes in fp16) for six
# students in ten and above it (a subnormal of one or two bits) for the others, so
# the fp16 answer differs between students; every G survives in bf16
param G: 1e-8
vary G: list 1e-8 2e-8 5e-9 3e-9 4.5e-8 2.5e-8 7e-9 3.5e-8 4e-8 5e-8
prompt: State the smallest positive normal value of fp16, bf16 and fp32.
  Gradients in a model are as small as G = {G}. Under round-to-nearest-even,
  does a gradient of magnitude {G} flush to zero (become 0) when it is stored in
  fp16? What value does bf16 store it as? Use the answers to explain why fp16
  training needs loss scaling and bf16 training does not.
# rel 5e-3 accepts the lesson's three-digit figures (2^-126 = 1.1755e-38 given as 1.18e-38)
field fp16_min_normal: number rel 5e-3 -- smallest positive normal fp16 value
field bf16_min_normal: number rel 5e-3 -- smallest positive normal bf16 value
field fp32_min_normal: number rel 5e-3 -- smallest positive normal fp32 value
field fp16_flushes: choice yes|no -- does {G} flush to 0 in fp16 (RNE)?
# rel 5e-3: bf16's own rounding error is at most 2^-9, so {G} itself is accepted
field bf16_stored: number rel 5e-3 -- the bf16 value {G} is stored as (RNE)
hint: A normal number has a leading 1 bit, so its exponent cannot go below a smallest
  value emin, set by the format's exponent bias. What are the biases of fp16, bf16 and fp32?
hint: emin = 1 - bias; fp16 has 5 exponent bits (bias 15), bf16 and fp32 have 8 (bias 127).
  Below 2^emin come the subnormals, down to 2^(emin - fraction bits); round-to-nearest
  gives 0 only for values at most half of the smallest subnormal.
hint: fp16: 2^-14 = 6.10e-5 (smallest subnormal 2^-24 = 5.96e-8, half of it 2^-25 = 2.98e-8);
  bf16 and fp32: 2^-126 = 1.18e-38 (bf16 reaches 2^-133 with subnormals). Compare {G} with
  2^-25 and with 2^-134. Check: mixprec round {G} --to fp16,bf16

[7.4b]
title: Scaling the loss scales every gradient
kind: loss-scale
lesson: mixed-precision
# small S with a tiny g still flushes, larger g survive unscaled as subnormals: both
# yes/no answers vary between students
param S: 65536
vary S: list 2 4 16 256 512 1024 2048 4096 8192 16384 32768 65536
param g: 1e-8
vary g: list 1e-8 2e-8 5e-9 3e-9 1e-9 4e-8 6e-8
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
hint: S does not depend on the weights. What is the derivative of S * L with respect to L?
hint: d(S*L)/dw = S * dL/dw, at every layer: backpropagation multiplies by local
  derivatives that do not depend on S. Undoing a multiplication by S means multiplying
  by its inverse.
hint: dL'/dL = S, every gradient is multiplied by S and unscaled by 1/S; the scaled
  gradient is {g} x {S}. fp16 flushes values at or below 2^-25 (about 2.98e-8) to zero,
  and keeps values below 2^-14 only as subnormals. Check: mixprec round {g} --to fp16

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
hint: List every tensor that training keeps for each parameter, and how many bytes one
  element of each takes.
hint: fp32 elements are 4 bytes, bf16 elements 2 bytes. There are six tensors: master
  weights, working weights, gradients, gradient accumulator, Adam's m and Adam's v.
hint: master 4 + weights 2 + gradients 2 + accumulator 4 + Adam m 4 + Adam v 4 = 20 bytes.
  Multiply by {P}, then divide by 10^9 for GB and by 2^30 = 1073741824 for GiB.
  Check: mixprec budget --params {P}

[7.4d]
title: Round a value by hand to fp16, bf16 and fp32
kind: hand-round
lesson: mixed-precision
# the list mixes values that fp32 keeps best, values fp16 keeps exactly (1000.5, 0.0625 + 2^-12),
# and values outside fp16's normal range (subnormal there: 3e-6, 2e-7, 1.5e-6, where fp16 is worst)
param V: 0.1
vary V: list 0.1 0.2 0.3 0.7 1.1 2.2 3.3 0.01 5.9 0.001 1.7 0.45 12.3 0.06 3e-6 2e-7 1.5e-6 1000.5 0.062744140625 4100.25
prompt: Round V = {V} by hand to fp16, bf16 and fp32 with round-to-nearest-even.
  For each format give the bit pattern and the relative error
  |rounded - V| / |V|. Which format represents {V} best, and which worst?
  (When two formats tie, either is accepted.)
field fp16_bits: bits fp16 -- the fp16 bit pattern of {V}
field bf16_bits: bits bf16 -- the bf16 bit pattern of {V}
field fp32_bits: bits fp32 -- the fp32 bit pattern of {V}
field fp16_rel_error: number rel 2e-2 -- relative error in fp16
field bf16_rel_error: number rel 2e-2 -- relative error in bf16
field fp32_rel_error: number rel 2e-2 -- relative error in fp32
field best: choice fp16|bf16|fp32 -- the format with the smallest relative error
field worst: choice fp16|bf16|fp32 -- the format with the largest relative error
hint: Start with the exponent of {V}: between which two powers of two does it lie? Is that
  power of two within each format's normal range?
hint: Write {V} as 1.f x 2^e with 2^e <= V < 2^(e+1); the exponent field is e + bias
  (fp16: 15, bf16 and fp32: 127). Below fp16's 2^-14 the value is subnormal: e stays
  -14 and fewer bits remain. Write out the fraction bits of V / 2^e one past the last
  kept bit (10 bits in fp16, 7 in bf16, 23 in fp32).
hint: The bit after the last kept one is the guard bit; any 1 further on is sticky. Round
  up when the guard bit is 1 and anything after it is nonzero, or on an exact tie when
  the last kept bit is 1. The relative error is |rounded - V| / |V| (the unit roundoff
  2^-p only bounds it). Check with: mixprec bits {V} --format fp16,bf16,fp32

[7.4e]
title: Why bf16 weights need fp32 master copies
kind: update-vanish
lesson: mixed-precision
# realistic weights: 1e-3 to 10 (0.00101 rounds to bf16 at or above 1e-3)
param w: 0.5
vary w: range 0.00101 10 log round bf16
prompt: A weight is stored in bf16 and has the value w = {w}. bf16 keeps 8 significant
  bits (7 stored), like fp32's range but not its precision.
  What is the gap from w to the next larger bf16 value? Below what magnitude does
  a positive update added to w leave it unchanged (round to nearest even)?
  A common argument for fp32 master weights says each rounding contributes a
  relative error of up to 2^-8 and these add up like a random walk: after how many
  steps T does sqrt(T) x 2^-8 reach 1? (Section 2 of the lesson fp32-state examines that
  argument: what happens to the updates below your vanish_below instead?)
field spacing: number rel 1e-6 -- the gap from {w} to the next larger bf16 value
field vanish_below: number rel 1e-6 -- updates smaller than this vanish
field steps: number rel 1e-6 -- T with sqrt(T) x 2^-8 = 1
hint: Between two powers of two, bf16 values are evenly spaced. Which powers of two
  enclose {w}?
hint: Find e with 2^e <= w < 2^(e+1); bf16 keeps 7 fraction bits, so neighbours in that
  range are 2^(e-7) apart. Round-to-nearest keeps w unless the update passes half the gap.
hint: spacing = 2^(e-7) and vanish_below = 2^(e-8); sqrt(T) x 2^-8 = 1 gives sqrt(T) = 2^8,
  so T = 2^16 = 65536. Check with: mixprec bits {w} --format bf16

[7.4f]
title: Adam's second moment in 16 bits: where v stops growing
kind: ema-stall
lesson: mixed-precision
param beta2: 0.995
vary beta2: list 0.95 0.99 0.995 0.999 0.9999
param format: bf16
vary format: list bf16 fp16
prompt: Adam keeps v, a moving average of the squared gradient: v <- beta2 v + (1 - beta2) g^2.
  Here v is stored in {format}, beta2 = {beta2}, every gradient has g^2 = 1 and v starts at 0.
  Each step computes v <- round(fl32(fl32(b v) + fl32(c x 1))) with b = fl32(beta2) and
  c = fl32(1 - b), where fl32 is an fp32 operation and round is round-to-nearest-even
  into {format}. In exact arithmetic v approaches 1. At which value does v stop changing,
  and after how many steps (optional)? What does that do to Adam's step, which divides
  the update by sqrt(v)?
field stall_value: number rel 1e-6 -- the value at which v stops changing
field steps: optional number exact -- the number of steps that change v
hint: One step changes v by b v + c - v = c (1 - v): the increment shrinks as v grows.
  When does rounding into {format} throw an increment away?
hint: Round-to-nearest keeps v once the increment c (1 - v) is at most half the spacing of
  {format} at v. With 2^e <= v < 2^(e+1) the spacing is 2^(e-7) in bf16 and 2^(e-10) in
  fp16. The spacing doubles at each power of two while the increment shrinks slowly.
hint: Walk up the powers of two: v stops in the first range [2^e, 2^(e+1)) where
  c (1 - v) <= 2^(e-8) (bf16) or 2^(e-11) (fp16), at 2^e itself when the increment there is
  already too small, else where 1 - v = half spacing / c. For bf16 and beta2 = 0.999 this
  gives 0.25. Confirm the exact value and the steps by iterating the update in code.
