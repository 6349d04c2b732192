# More exercises: fp8, spacing and ulp, overflow thresholds, choosing a loss scale,
# ZeRO sharding.

[fp8.0]
title: Round a value to both fp8 formats
kind: hand-round
lesson: mixed-precision
param V: 0.7
vary V: list 0.7 5.5 13 300 0.2 2.7 3.3 0.003 0.0007
prompt: Round V = {V} to fp8-e4m3 (4 exponent bits, 3 fraction bits, bias 7) and to
  fp8-e5m2 (5 exponent bits, 2 fraction bits, bias 15) with round-to-nearest-even.
  Give each bit pattern and relative error. Which keeps {V} better?
field e4m3_bits: bits fp8-e4m3 -- the fp8-e4m3 pattern of {V}
field e5m2_bits: bits fp8-e5m2 -- the fp8-e5m2 pattern of {V}
field e4m3_rel_error: number rel 2e-2 -- relative error in fp8-e4m3
field e5m2_rel_error: number rel 2e-2 -- relative error in fp8-e5m2
field best: choice fp8-e4m3|fp8-e5m2 -- the format with the smaller error
hint: Find the exponent of {V} first: is it within each format's normal range?
hint: Same steps as exercise 7.4d with 3 (e4m3, bias 7) or 2 (e5m2, bias 15) fraction bits:
  guard bit, sticky bits, round to nearest, ties to even.
hint: Compare the two relative errors |rounded - V| / |V|. Check with: mixprec bits {V} --format e4m3,e5m2

[ulp.1]
title: The spacing of fp16 at a value
kind: spacing
lesson: mixed-precision
param x: 1000
vary x: list 1000 3000 0.1 0.3 40000 60000 7 0.00001 2e-6
param format: fp16
prompt: What is the spacing (ulp) of fp16 at x = {x}? Careful below 2^-14, where
  fp16 is subnormal and the spacing stops shrinking.
field spacing: number rel 1e-6 -- the gap between fp16 neighbours at {x}
field vanish_below: number rel 1e-6 -- updates smaller than this leave {x} unchanged
hint: Between two powers of two, fp16 values are evenly spaced. Which powers enclose {x}?
hint: fp16 keeps 10 fraction bits: within [2^e, 2^(e+1)) neighbours are 2^(e-10) apart;
  for subnormals e is fixed at -14, so the spacing is 2^-24.
hint: An update vanishes below half the spacing. Check with: mixprec bits {x} --format fp16 (the ulp column)

[overflow.1]
title: Where fp16 overflows
kind: overflow
lesson: mixed-precision
param format: fp16
prompt: What is the largest finite fp16 value, and from which magnitude does a value
  round to infinity under round-to-nearest-even?
field max: number rel 1e-9 -- largest finite fp16 value
field overflow_at: number rel 1e-9 -- the smallest magnitude that rounds to inf
hint: The all-ones exponent field is kept for inf and NaN. Which exponent and which
  significand are left for the largest finite value?
hint: The largest exponent is 15 (field 11110); the largest significand is 2 - 2^-10.
  Rounding to nearest goes to max until a value is more than half a spacing above it.
hint: max = (2 - 2^-10) x 2^15 = 65504; the spacing at the top is 2^(15-10) = 32, so values
  from 65504 + 16 = 65520 on round to inf (65520 is a tie and goes to even). Check: mixprec round 65519 65520 --to fp16

[overflow.2]
title: The range of fp8-e4m3
kind: overflow
lesson: mixed-precision
param format: fp8-e4m3
prompt: fp8-e4m3 (the "fn" variant) has no infinity: only S.1111.111 is NaN, so the
  largest exponent field can still hold finite values. What is its largest finite
  value, its smallest normal value, and above which magnitude does a value become
  NaN under round-to-nearest-even without saturation?
field max: number rel 1e-9 -- largest finite value
field min_normal: number rel 1e-9 -- smallest positive normal value
field overflow_at: number rel 1e-9 -- the magnitude above which values become NaN
hint: Unlike fp16, the top exponent field still holds finite values: only one pattern is NaN.
  Which significand is the largest one left?
hint: With the bias 7, what exponent does the field 1111 stand for, and which fractions
  does it still hold once 111 is NaN? The smallest normal has the smallest nonzero field.
hint: max = 1.75 x 2^8 = 448; the spacing at the top is 2^(8-3) = 32, so values above
  448 + 16 = 464 become NaN (464 itself is a tie and goes to even, back to 448); min normal 2^-6.
  Check: mixprec formats

[scale.1]
title: Choosing a loss scale
kind: scale-choice
lesson: mixed-precision
param gmax: 2
vary gmax: list 0.5 2 8 30 120 0.05
param gmin: 1e-7
vary gmin: list 1e-7 3e-8 1e-6 5e-9 1e-5
prompt: The gradients of a model range from {gmin} to {gmax} in magnitude. They are
  scaled by a power of two S and stored in fp16. What is the largest S for which
  gmax x S does not exceed fp16's largest value 65504, and the smallest S for which
  gmin x S reaches fp16's smallest normal 2^-14? Can one S do both?
field max_scale: number rel 1e-9 -- largest power of two keeping gmax finite
field min_scale: number rel 1e-9 -- smallest power of two lifting gmin to a normal
field fits: choice yes|no -- is min_scale <= max_scale?
hint: Write each condition as an inequality in S: gmax x S <= 65504 and gmin x S >= 2^-14.
hint: S is a power of two: max_scale = 2^floor(log2(65504 / gmax)) and
  min_scale = 2^ceil(log2(2^-14 / gmin)).
hint: One S does both exactly when min_scale <= max_scale, that is when gmax / gmin is at
  most about 65504 / 2^-14 = 1.07e9 (up to the rounding to powers of two).

[zero.1]
title: Memory per GPU under ZeRO
kind: zero
lesson: mixed-precision
param P: 7e9
vary P: list 7e9 13e9 30e9 70e9
param gpus: 8
vary gpus: list 4 8 16 32 64
param stage: 2
vary stage: list 1 2 3
prompt: A model of {P} parameters is trained in bf16 mixed precision with Adam
  (20 bytes per parameter: fp32 master 4, bf16 weights 2, bf16 gradients 2,
  fp32 accumulator 4, Adam 8) on {gpus} GPUs with ZeRO stage {stage}. Ignoring
  activations, how much memory does each GPU hold, in GB (10^9 bytes)?
field gpu_gb: number rel 1e-2 unit GB -- memory per GPU, in GB
hint: Stage 1 shards the optimiser state and master weights; stage 2 also the gradients
  and accumulator; stage 3 also the weights.
hint: Check with: mixprec budget --params {P} --zero {stage} --gpus {gpus}
