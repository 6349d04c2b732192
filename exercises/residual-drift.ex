# Exercises of the lesson "Why long bf16 runs stall: the residual stream".

[drift.1]
title: The spacing of bf16 at a residual value
kind: spacing
lesson: residual-drift
param x: 600
vary x: list 600 700 300 1000 1500 2500 3000 150 90 5000
param format: bf16
prompt: A residual-stream value x = {x} is stored in bf16. What is the spacing
  between neighbouring bf16 values around x, and what is the exponent e with
  2^e <= x < 2^(e+1)?
field spacing: number rel 1e-6 -- the gap between bf16 neighbours at {x}
field exponent: number exact -- e with 2^e <= {x} < 2^(e+1)
hint: bf16 keeps 7 fraction bits: within [2^e, 2^(e+1)) neighbours are 2^(e-7) apart.
hint: Check with: mixprec bits {x} --format bf16 (the ulp column).

[drift.2]
title: The largest update that vanishes
kind: spacing
lesson: residual-drift
param x: 600
vary x: list 600 700 300 1000 1500 2500 3000 150 90 5000
param format: bf16
prompt: A residual value x = {x} is stored in bf16 and receives one small positive
  update. Below what magnitude is the update rounded away entirely
  (round to nearest even)?
field vanish_below: number rel 1e-6 -- updates smaller than this leave {x} unchanged
hint: First find the spacing at {x} (exercise drift.1).
hint: Round-to-nearest moves to the next value only past half the spacing.

[drift.3]
title: How many updates are lost
kind: lost-updates
lesson: residual-drift
# every x0 lies in [256, 512), where the bf16 spacing is 2, close enough below 512 that
# 100 updates reach it; every u lies between 1 and 2, more than half the spacing below 512
# and less than half the spacing (4) above it: the value moves at first and then stops,
# so no variant loses every update or none
param x0: 500
vary x0: list 500 490 480 460 440 420 400 360
param u: 1.5
vary u: list 1.5 1.25 1.75 1.125 1.375 1.625
param n: 100
param format: bf16
prompt: A value starts at x0 = {x0} in bf16 and receives n = {n} updates, each +{u}.
  After every update the sum is rounded to bf16 (nearest, ties to even).
  How many of the {n} updates leave the value unchanged, and what is the final value?
field lost: number exact -- updates that left the value unchanged
field final: number exact -- the value after {n} updates
hint: Follow the value: while the spacing is small enough, each update moves it (rounded).
  By how much does one update move it?
hint: Between 256 and the next power of two the bf16 spacing is 2: x + {u} rounds to x + 2.
  The spacing doubles at every power of two; once the update is below half the spacing,
  every further update is lost.
hint: Count the updates needed to reach the next power of two from {x0} in steps of 2; every
  update after that is lost (there the spacing is 4 and {u} is below 2). Check by simulating
  in code.

[drift.4]
title: Predict, then run mixprec drift
kind: drift-retained
lesson: residual-drift
param x0: 600
vary x0: list 600 700 300 1000 200 100 2000
param u: 0.5
vary u: list 0.5 0.25 1 1.5 0.75
param T: 10000
prompt: Predict the share of the drift that bf16 with round-to-nearest keeps when a value
  starting at {x0} receives {T} constant updates of {u}, and the share fp32 keeps.
  Then run: mixprec drift --x0 {x0} --dist constant --mean {u} --steps {T}
  and read the retained column.
field retained_rne: number abs 0.01 -- share retained by bf16-rne
field retained_fp32: number abs 0.01 -- share retained by fp32
hint: Compare {u} with half the bf16 spacing at {x0}. Does the value move at all, and does
  it keep moving as it grows?
hint: The bf16 spacing doubles at every power of two: once it exceeds 2 x {u}, every update
  is rounded away. fp32 has 24 significant bits: the spacing near {x0} is tiny compared with {u}.
hint: retained = (final - x0) / (T x u). Run the command in the question and read the
  retained column of bf16-rne and fp32.
