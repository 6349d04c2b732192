# Exercises of the lesson frontier (lessons/frontier.md).

[fr.1]
title: Stochastic rounding on the fp4 grid: no bias, some noise
kind: sr-bias
lesson: frontier
# t is a block's value in element units (V / (s_b s_t)), never on the E2M1 grid,
# in each of its gaps; the lesson's own figures are of whole tensors, not of one value
param t: 2.6
vary t: list 2.6 0.3 1.2 3.3 4.5 5.2 0.85 1.7 2.25 3.9
param format: fp4-e2m1
prompt: A gradient element, divided by its block's scale, gives t = {t} element units.
  The E2M1 grid holds 0, 0.5, 1, 1.5, 2, 3, 4 and 6. Between which two grid values
  does t lie? Stochastic rounding casts t to the upper one with which probability?
  What is the variance of one stochastic cast? Rounding to nearest gives the same
  value every time: by how much does it miss t (the rounded value minus t)?
field down: number exact -- the grid value just below {t}
field up: number exact -- the grid value just above {t}
field p_up: number rel 1e-6 -- the probability that stochastic rounding gives up
field variance: number rel 1e-6 -- the variance of one stochastic cast of {t}
field rne_bias: number rel 1e-6 -- round-to-nearest's value minus {t}
hint: The grid is not evenly spaced: the gap between neighbours grows with the values.
hint: Stochastic rounding's expected value must be t itself: down + p x (up - down) = t.
hint: One cast gives up with probability p and down with 1 - p; its variance is
  p (1 - p) (up - down)^2, which is (t - down)(up - t). Check the rounding with:
  mixprec round {t} --to fp4-e2m1 --mode sr --seed 1 (and other seeds)
