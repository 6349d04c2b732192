# Memory per GPU under a parallel layout (lesson memory-at-scale).

[par.1]
title: Model state per GPU under tensor and pipeline parallelism
kind: parallel
lesson: memory-at-scale
param P: 175e9
vary P: list 13e9 30e9 70e9 175e9
param recipe: bf16-mixed
vary recipe: list bf16-mixed fp16-mixed fp32 bf16-pure fp8-mixed
param t: 8
vary t: list 2 4 8
param p: 8
vary p: list 2 4 8 16
prompt: A model of {P} parameters is trained with the {recipe} recipe and Adam on a
  layout of tensor parallelism t = {t} and pipeline parallelism p = {p}, without
  ZeRO and without data parallelism. How many bytes does the recipe keep per
  parameter, how many GPUs does the layout take, and, ignoring activations, how
  much memory does each GPU hold, in GB (10^9 bytes)?
field bytes_per_param: number exact unit B -- bytes the recipe keeps per parameter
field gpus: number exact -- GPUs of the layout
field gpu_gb: number rel 1e-2 unit GB -- model state per GPU, in GB
hint: Count the recipe's copies first: which are fp32 (4 bytes), which 16-bit (2), which
  8-bit (1)? Adam keeps two states per parameter.
hint: Tensor parallelism splits every layer over t GPUs; pipeline parallelism gives each
  of p stages L/p of the layers. How many GPUs share one copy of the model?
hint: Each GPU holds 1/(t*p) of every copy: bytes per parameter x {P} / (t*p), then
  divide by 10^9. Check: mixprec budget --params {P} --recipe {recipe} --tp {t} --pp {p}
