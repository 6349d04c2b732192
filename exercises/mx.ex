# Exercises of the lesson "Below 16 bits: formats and scales".

[mx.1]
title: An MX block's shared scale under both rules
kind: mx-scale
lesson: low-precision
# every block's amax has a significand above 1.5 (E2M1's largest value is 1.5 x 2^2),
# so the floor rule and the ceil rule choose different scales for every variant
param block: 3.5,-0.8,1.1,0.2
vary block: list 7,0.3,-1.2,2.5 3.5,-0.8,1.1,0.2 -0.9,0.4,0.25,-0.6 14,-5,2.2,0.7 0.2,-0.06,0.11,0.03 1.9,-1.1,0.45,0.8 30,12,-7,-2 -0.055,0.02,0.031,-0.01
param i: 1
vary i: list 0 1 2 3
param format: mxfp4
prompt: A block of MXFP4 (fp4-e2m1 elements: 1 sign, 2 exponent and 1 fraction bit,
  bias 1; magnitudes 0, 0.5, 1, 1.5, 2, 3, 4 and 6) holds the values {block}. Its
  shared scale X = 2^k is stored as an e8m0 byte (k + 127).
  .
  Under OCP's rule, k = floor(log2 amax) - emax_elem; under the ceil rule
  (NVIDIA's Transformer Engine), k = ceil(log2(amax / 6)). For each rule give k,
  the e8m0 byte, and the fp4 bits of element {i} (counting from 0) after dividing
  it by X and rounding to nearest even, with saturation at 6.
field amax: optional number rel 1e-9 -- the largest magnitude of the block
field ocp_exponent: number exact -- k under OCP's floor rule
field ocp_scale_bits: bits e8m0 -- the e8m0 byte under OCP's rule
field ocp_elem_bits: bits fp4-e2m1 -- element {i}'s bits under OCP's rule
field ceil_exponent: number exact -- k under the ceil rule
field ceil_scale_bits: bits e8m0 -- the e8m0 byte under the ceil rule
field ceil_elem_bits: bits fp4-e2m1 -- element {i}'s bits under the ceil rule
field ocp_elem_value: optional number rel 1e-9 -- the value element {i} stands for under OCP's rule
hint: amax is the largest magnitude, sign ignored. emax_elem is the exponent of the
  element format's largest value: write 6 as a significand times a power of two.
hint: 6 = 1.5 x 2^2, so emax_elem = 2. The ceil rule divides amax by 6 first and takes
  the smallest power of two at least that large. A quotient beyond 6 is stored as 6,
  one between two magnitudes goes to the nearer (a tie to the even pattern).
hint: The e8m0 byte is k + 127 in hex. Check both rules with:
  mixprec quantize {block} --to mxfp4 and mixprec quantize {block} --to mxfp4 --scale-rule ceil

[mx.2]
title: Decode an NVFP4 element
kind: nvfp4-decode
lesson: low-precision
# every element is nonzero and every block scale a positive e4m3 number, normal or
# subnormal (0x04); the tensor scales are fp32 values (fp32(amax / 2688) for amax 3 and 100)
param elem: 0xb
vary elem: list 0xb 0x5 0x3 0xe 0x7 0x9 0x2 0xc 0x6 0xf
param scale: 0x4f
vary scale: list 0x4f 0x7e 0x38 0x5a 0x04 0x33 0x66 0x41
param tensor_scale: 2^-10
vary tensor_scale: list 2^-10 0.0011160714784637094 1 3*2^-12 0.0372023805975914
prompt: An NVFP4 tensor stores the element bits {elem} (fp4-e2m1) in a block whose scale
  byte is {scale} (fp8-e4m3: 1 sign, 4 exponent and 3 fraction bits, bias 7). The
  tensor's fp32 scale is s_t = {tensor_scale}. What value does the element stand for?
  (E2M1 has 1 sign, 2 exponent and 1 fraction bit, bias 1: magnitudes 0, 0.5, 1,
  1.5, 2, 3, 4 and 6.)
field value: number rel 1e-6 -- the value element {elem} stands for
field elem_value: optional number exact -- the e2m1 element alone
field block_scale: optional number exact -- the block scale s_b decoded from {scale}
hint: Decode each of the three numbers on its own first: the element, the block scale,
  the tensor scale. Then combine them.
hint: E2M1: the top bit is the sign, the three others pick the magnitude in order. The
  e4m3 byte reads as 2^(e - 7) x (1 + f/8), or 2^-6 x f/8 when its exponent field is 0.
hint: The value is element x s_b x s_t. The same decoding, for any block, is what
  mixprec quantize --to nvfp4 prints in its value column.

[mx.3]
title: Bits per parameter of a block format
kind: block-bits
lesson: low-precision
param format: mxfp4
vary format: list mxfp4 nvfp4 mxfp8-e4m3 mxfp6-e3m2 mxfp6-e2m3 mxfp8-e5m2
param P: 7e9
vary P: list 7e9 1.3e9 13e9 70e9 405e9
prompt: The weights of a model with P = {P} parameters are stored in {format}, every
  block scale included. How many bits does one parameter take on average, and how
  many GB (10^9 bytes) do the weights take?
field bits_per_param: number rel 1e-9 -- average bits per parameter, scales included
field scale_bits_per_param: optional number rel 1e-9 -- the share of the block scale, in bits per parameter
field total_gb: number rel 1e-3 unit GB -- the weights of {P} parameters, in GB
hint: Two things are stored: each element, and one scale per block. How wide is each,
  and how many elements share a scale?
hint: MX formats share one 8-bit e8m0 scale per 32 elements; NVFP4 one 8-bit e4m3 scale
  per 16 (its fp32 tensor scale is one per tensor, negligible per parameter).
hint: bits = element width + 8 / block size; bytes = P x bits / 8. Check the bits with:
  mixprec quantize 1 --to {format} (the storage line)

[mx.4]
title: Which element saturates under the floor rule
kind: mx-saturate
lesson: low-precision
# in every block exactly one element saturates under OCP's rule (the amax, with a
# significand of 1.86 or more against the 1.8125 past which E4M3's 1.75 is the
# nearest no more) and none under the ceil rule;
# in half of them the amax is negative, so the largest value is another element
param block: 3.8,-2.5,1.1,0.4
vary block: list 1.2,-1.9,0.5,1.7 3.8,-2.5,1.1,0.4 -0.2,0.15,-0.98,0.6 6.5,6.1,-7.9,2 0.031,-0.012,0.0075,-0.02 12,-15.2,3,9.5 0.4,0.5,-0.35,0.23,0.93,-0.1 -120,90,61,-30 2.2,3.75,-1,0.8 0.0019,-0.0011,0.0016,0.0004
param format: mxfp8-e4m3
prompt: An MXFP8 block (fp8-e4m3 elements, largest value 448 = 1.75 x 2^8) holds the
  values {block}. Its scale follows OCP's rule, X = 2^(floor(log2 amax) - 8).
  Which element (index from 0) saturates after division by X (its nearest value
  lies past 448, beyond the midpoint 464 between 448 and the 480 a wider format
  would have next), and what value is it stored as?
field saturates: number exact -- the index of the saturating element, from 0
field stored: optional number rel 1e-9 -- the value that element is stored as
hint: Only a value whose quotient V / X is beyond 464 saturates (between 448 and 464 it
  rounds down onto 448, as it would with more range). Which values come closest to the
  top of the block's binade?
hint: amax is taken over magnitudes. Write amax = m x 2^e with 1 <= m < 2: the floor rule
  maps it to m x 2^8, beyond 464 when m > 1.8125.
hint: Divide each value by X and compare with 464; the saturated one is stored as
  +-448 x X. Check with: mixprec quantize {block} --to mxfp8-e4m3
