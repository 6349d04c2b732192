# Exercises of the lesson "Training in fp8 and fp4", sections 1 and 2: Transformer Engine's
# per-tensor delayed scaling. Every fp8.1 history lists more values than H,
# its oldest value is the largest and its newest is not the window's largest, so the
# window, max and most_recent all matter; every fp8.2 spike (F >= 3) saturates at its
# own step. tests/test_exercise_fp8.c checks every combination of the lists. (Named to
# sort after mx.ex: the TUI tests find exercises by their place in the list.)

[fp8.1]
title: The delayed scale after an amax history
kind: fp8-delayed-scale
lesson: low-precision-training
param hist: 6,1.5,2.5,1.25,0.75,0.5
vary hist: list 6,1.5,2.5,1.25,0.75,0.5 40,3,2,5,4,1 0.9,0.05,0.2,0.1,0.15,0.08 300,12,20,16,9,10 0.02,0.003,0.006,0.0045,0.004,0.002 2.5,0.6,0.9,1.1,0.7,0.4
param H: 4
vary H: list 4 3 5
param margin: 0
vary margin: list 0 1 2
param format: fp8-e4m3
vary format: list fp8-e4m3 fp8-e5m2
prompt: A tensor is cast to {format} (E4M3's largest value is 448, E5M2's 57344) under
  Transformer Engine's delayed scaling: an amax history of H = {H} steps, the max
  algorithm, margin {margin}. The last six steps recorded these amaxes, oldest first:
  {hist}.
  .
  Which amax does the history give the next step, and which scale does the next step
  cast with? Which scale would the most_recent algorithm give instead?
field history_amax: number rel 1e-6 -- the amax the max algorithm takes from the history
field scale: number rel 1e-4 -- the scale the next step casts with
field recent_scale: optional number rel 1e-4 -- the scale under most_recent
hint: Only the last H amaxes are in the history: cross out the older ones first.
hint: max takes the largest amax left in the window; the scale maps it onto the format's
  largest value, with 2^margin of headroom below it.
hint: scale = fp8_max / amax / 2^margin. Check with: mixprec amax --amax {hist} --history {H}
  --margin {margin} --format {format} (its last line: the next step's scale)

[fp8.2]
title: A spike under delayed and current scaling
kind: fp8-spike
lesson: low-precision-training
param a: 0.5
vary a: list 0.5 3 0.02 12 0.25 1.5
param F: 40
vary F: list 40 8 100 3 16 64
param s: 5
vary s: list 5 7 10 4 6
param H: 4
vary H: list 4 8 16 3 6
prompt: A tensor's amax is a = {a} at every step except step s = {s}, where a spike
  multiplies it by F = {F}. The tensor is cast to fp8-e4m3 (largest value 448) under
  Transformer Engine's delayed scaling: amax history H = {H}, the max algorithm, margin
  0. Step 1 casts with scale 1; each step's amax enters the history after its cast.
  .
  At which step does the cast saturate, and by how much (amax x scale at that step, as a
  multiple of 448)? For how many steps after the spike does the scale stay below its
  steady value, and at which step is it back? Current scaling (scale = 448 / the step's
  own amax) never saturates: is that because its scale comes from the step's own amax
  (own), because of a longer history (history), a margin (margin), or because it clips
  (saturate)?
field overflow_step: number exact -- the step whose delayed cast saturates
field overshoot: number rel 1e-3 -- amax x scale / 448 at that step
field reduced_steps: number exact -- steps after the spike cast with a lower scale
field recovered_step: optional number exact -- the first step back at the steady scale
field why_current: choice own|history|margin|saturate -- why current scaling never saturates
hint: Write down, step by step, what the history holds before the step and the scale it
  gives. The spike's amax is recorded only after its own cast.
hint: With max, an amax stays in the window for H pushes. Count the steps whose history
  still holds the spike; a current scale is computed from the tensor being cast.
hint: The spike's step casts with the scale of the steps before it, 448 / a, so its amax
  F x a lands at F times 448. Its amax then holds the maximum for the next H casts; the
  step after those is back at 448 / a. Check with: mixprec exercise solve fp8.2
