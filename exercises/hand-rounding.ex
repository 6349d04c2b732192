# The hand-rounding lab: rounding a value by hand, one checked step at a time.
# The workbench asks the fields in the order given here; `mixprec check` takes
# them all at once.

[round.1]
title: Round a value by hand, step by step (fp16)
kind: round-steps
lesson: mixed-precision
param V: 0.1
vary V: list 0.1 0.2 0.3 0.7 1.1 2.2 3.3 0.01 5.9 1.7 0.45 12.3 0.06 1000.3
prompt: Round V = {V} to fp16 (1 sign, 5 exponent and 10 fraction bits, bias 15) by
  hand with round-to-nearest-even, one step at a time.
field fp16_exponent: number exact -- e, with 2^e <= {V} < 2^(e+1)
field fp16_exp_field: number exact -- the exponent field, e + 15, as a number
field fp16_fraction: bits 10 -- the 10 fraction bits kept, before rounding (binary)
field fp16_guard: choice 0|1 -- the guard bit: the first bit after the 10 kept fraction bits
field fp16_round: choice 0|1 -- the round bit: the bit after the guard bit
field fp16_sticky: choice 0|1 -- the sticky bit: 1 when any later bit is 1
field fp16_round_up: choice yes|no -- round up (away from zero)?
field fp16_bits: bits fp16 -- the fp16 bit pattern of {V}
hint: Find e: halve or double {V} until it lies in [1, 2); e counts the steps (negative
  when you doubled).
hint: Write {V} / 2^e = 1.f in binary: 10 fraction bits are kept, then come the guard
  and round bits; sticky says whether anything after them is nonzero.
hint: Round up when guard is 1 and round or sticky is 1; on an exact tie (guard 1,
  round and sticky 0) round to the even neighbour. Check: mixprec bits {V} --format fp16

[round.2]
title: Round a value by hand, step by step (bf16)
kind: round-steps
lesson: residual-drift
param V: 601.9
vary V: list 601.9 602.1 602 606 0.1 3.3 1000.5 77.7
prompt: Round V = {V} to bf16 (1 sign, 8 exponent and 7 fraction bits, bias 127) by
  hand with round-to-nearest-even, one step at a time.
field bf16_exponent: number exact -- e, with 2^e <= {V} < 2^(e+1)
field bf16_exp_field: number exact -- the exponent field, e + 127, as a number
field bf16_fraction: bits 7 -- the 7 fraction bits kept, before rounding (binary)
field bf16_guard: choice 0|1 -- the guard bit: the first bit after the 7 kept fraction bits
field bf16_round: choice 0|1 -- the round bit: the bit after the guard bit
field bf16_sticky: choice 0|1 -- the sticky bit: 1 when any later bit is 1
field bf16_round_up: choice yes|no -- round up (away from zero)?
field bf16_bits: bits bf16 -- the bf16 bit pattern of {V}
hint: Find e: 2^e <= {V} < 2^(e+1).
hint: bf16 keeps 8 significant bits: the spacing between 2^e and 2^(e+1) is 2^(e-7).
hint: Tie (exactly half the spacing): keep the neighbour whose last bit is 0.
  Check: mixprec bits {V} --format bf16
