# Exercises of the lesson rounding-rules (lessons/rounding-rules.md).

[rr.1]
title: Round to odd, ties toward zero and equal-probability SR on the fp4 grid
kind: rounding-rules
lesson: rounding-rules
# t in element units, never on the E2M1 grid; ties (0.75, 1.75, 2.5, 3.5) among
# them, where rnz and rne part ways at 0.75, 1.75 and 3.5
param t: 2.6
vary t: list 2.6 0.3 0.75 3.3 1.75 5.2 3.5 1.2 2.5 4.5
param format: fp4-e2m1
prompt: A value t = {t} is cast to fp4-e2m1, whose grid holds 0, 0.5, 1, 1.5, 2, 3, 4
  and 6 (patterns 0x0 to 0x7). Between which two grid values does t lie? What does
  round to odd (rto: truncate, then set the pattern's last bit when inexact) give?
  What does round to nearest with ties toward zero (rnz) give? Stochastic rounding
  with equal probabilities (sr-equal) casts t to either neighbour with probability
  1/2: what is its expected value, and its bias (expected value minus t)?
field down: number exact -- the grid value just below {t}
field up: number exact -- the grid value just above {t}
field rto: number exact -- {t} rounded to odd
field rnz: number exact -- {t} rounded to nearest, ties toward zero
field sre_mean: number rel 1e-6 -- the expected value of sr-equal's cast of {t}
field sre_bias: number rel 1e-6 -- that expected value minus {t}
hint: The patterns count up the grid from 0x0 (zero) to 0x7 (the largest value);
  an odd pattern ends in 1, and every other grid value has one.
hint: rto and rnz each give one of the two neighbours; a tie is t exactly halfway
  between them, and only there do rnz and rne part ways.
hint: sr-equal's expected value ignores where t lies: (down + up) / 2. Check the
  casts with: mixprec round {t} --to fp4-e2m1 --mode rto (and --mode rnz)
