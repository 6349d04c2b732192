/* Forward and backward kernels of the tiny GPT, in llm.c's shape: outputs
 * first, then inputs, dimensions last; every tensor is a contiguous row-major
 * fp32 array whose shape is the comment beside it.
 *
 * Conventions shared by every kernel:
 * - nothing allocates, prints or fails: shapes are the caller's contract;
 * - backward kernels ACCUMULATE (+=) into every gradient they write (dinp,
 *   dweight, dbias), so the caller zeroes them once per backward pass; the
 *   attention kernel's datt/dpreatt are scratch and are overwritten;
 * - a NULL gradient pointer skips that gradient where the comment says so. */
#ifndef MIXPREC_TRAIN_LAYERS_H
#define MIXPREC_TRAIN_LAYERS_H

#include <stddef.h>

#include "fmt/format.h"

/* --- embeddings --- */

/* out[b,t,:] = wte[inp[b,t],:] + wpe[t,:]. Tokens must lie in [0, V). */
void encoder_forward(float *out,          // (B,T,C)
                     const int *inp,      // (B,T)
                     const float *wte,    // (V,C)
                     const float *wpe,    // (maxT,C), T <= maxT
                     size_t B, size_t T, size_t C);
void encoder_backward(float *dwte,        // (V,C)
                      float *dwpe,        // (maxT,C)
                      const float *dout,  // (B,T,C)
                      const int *inp,     // (B,T)
                      size_t B, size_t T, size_t C);

/* --- layer normalisation (eps 1e-5, biased variance) --- */

/* Saves mean and rstd = 1/sqrt(var + eps) per token for the backward pass. */
void layernorm_forward(float *out,            // (B,T,C)
                       float *mean,           // (B,T)
                       float *rstd,           // (B,T)
                       const float *inp,      // (B,T,C)
                       const float *weight,   // (C)
                       const float *bias,     // (C)
                       size_t B, size_t T, size_t C);
void layernorm_backward(float *dinp,          // (B,T,C)
                        float *dweight,       // (C)
                        float *dbias,         // (C)
                        const float *dout,    // (B,T,C)
                        const float *inp,     // (B,T,C)
                        const float *weight,  // (C)
                        const float *mean,    // (B,T)
                        const float *rstd,    // (B,T)
                        size_t B, size_t T, size_t C);

/* --- matmul: out = inp @ weight^T + bias (PyTorch's Linear layout) --- */

/* Through cblas_sgemm; bias may be NULL. */
void matmul_forward(float *out,              // (B,T,OC)
                    const float *inp,        // (B,T,C)
                    const float *weight,     // (OC,C)
                    const float *bias,       // (OC) or NULL
                    size_t B, size_t T, size_t C, size_t OC);
/* The same product as a plain triple loop (fp32 accumulation in k order):
 * the oracle for the BLAS path. */
void matmul_forward_naive(float *out,          // (B,T,OC)
                          const float *inp,    // (B,T,C)
                          const float *weight, // (OC,C)
                          const float *bias,   // (OC) or NULL
                          size_t B, size_t T, size_t C, size_t OC);
/* Any of dinp, dweight, dbias may be NULL to skip that gradient. */
void matmul_backward(float *dinp,            // (B,T,C) or NULL
                     float *dweight,         // (OC,C) or NULL
                     float *dbias,           // (OC) or NULL
                     const float *dout,      // (B,T,OC)
                     const float *inp,       // (B,T,C)
                     const float *weight,    // (OC,C)
                     size_t B, size_t T, size_t C, size_t OC);

/* --- causal multi-head self-attention --- */

/* inp holds q, k, v side by side per token; head h uses channels
 * [h*hs, (h+1)*hs) of each, hs = C/NH. Saves the scaled scores (preatt) and
 * the softmax (att); entries above the diagonal are stored as 0. */
void attention_forward(float *out,          // (B,T,C)
                       float *preatt,       // (B,NH,T,T)
                       float *att,          // (B,NH,T,T)
                       const float *inp,    // (B,T,3C)
                       size_t B, size_t T, size_t C, size_t NH);
/* dpreatt and datt are (T,T) scratch, overwritten for each (batch, head). */
void attention_backward(float *dinp,         // (B,T,3C)
                        float *dpreatt,      // (T,T) scratch
                        float *datt,         // (T,T) scratch
                        const float *dout,   // (B,T,C)
                        const float *inp,    // (B,T,3C)
                        const float *att,    // (B,NH,T,T)
                        size_t B, size_t T, size_t C, size_t NH);

/* --- pointwise --- */

/* GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
void gelu_forward(float *out,               // (N)
                  const float *inp,         // (N)
                  size_t N);
void gelu_backward(float *dinp,             // (N)
                   const float *inp,        // (N)
                   const float *dout,       // (N)
                   size_t N);

/* out = inp1 + inp2 (out may alias either input). */
void residual_forward(float *out,           // (N)
                      const float *inp1,    // (N)
                      const float *inp2,    // (N)
                      size_t N);
void residual_backward(float *dinp1,        // (N)
                       float *dinp2,        // (N)
                       const float *dout,   // (N)
                       size_t N);

/* --- fused softmax + cross-entropy --- */

/* probs = softmax(logits) over V (max-subtracted), losses[b,t] =
 * -log probs[b,t,targets[b,t]]; returns the mean of losses (summed in fp64).
 * Targets must lie in [0, V). */
float crossentropy_softmax_forward(float *probs,         // (B,T,V)
                                   float *losses,        // (B,T)
                                   const float *logits,  // (B,T,V)
                                   const int *targets,   // (B,T)
                                   size_t B, size_t T, size_t V);
/* dlogits += dloss * (probs - onehot(target)), where dloss is the gradient of
 * the objective with respect to each per-token loss (1/(B*T) for the mean,
 * times a loss scale if any). */
void crossentropy_softmax_backward(float *dlogits,       // (B,T,V)
                                   const float *probs,   // (B,T,V)
                                   const int *targets,   // (B,T)
                                   float dloss,
                                   size_t B, size_t T, size_t V);

/* --- emulated low precision (the policies' GEMM and reduction formats) ---
 *
 * Variants of the kernels above for precision policies; with both formats
 * FMT_FP32 each computes exactly what its plain twin computes. Every
 * rounding is to nearest, ties to even. A running sum is rounded after every
 * addition (s = q(s + x), the addition itself in fp32), as a kernel that
 * accumulates in the format would hold it. */
typedef struct {
	fmt_id gemm;     /* attention products QK^T and att V (and their backward
	                  * products): operands and outputs rounded, fp32
	                  * accumulation, as a tensor core computes them */
	fmt_id reduce;   /* softmax, LayerNorm statistics, cross-entropy: running
	                  * sums and intermediate results rounded */
	fmt_id softmax;  /* the attention softmax's output (att, read by att V and
	                  * saved for the backward pass) rounded to it; FMT_FP32: not */
} kernel_fmts;

/* LayerNorm with the mean and variance sums, rstd and the output rounded
 * to reduce; the backward's two row means too. */
void layernorm_forward_q(float *out, float *mean, float *rstd, const float *inp,
                         const float *weight, const float *bias, size_t B, size_t T, size_t C,
                         fmt_id reduce);
void layernorm_backward_q(float *dinp, float *dweight, float *dbias, const float *dout,
                          const float *inp, const float *weight, const float *mean,
                          const float *rstd, size_t B, size_t T, size_t C, fmt_id reduce);

/* Floats of scratch the attention variants need for head size hs = C/NH. */
size_t attention_scratch_floats(size_t T, size_t C, size_t NH);
/* Attention with its products emulated in f.gemm and its softmax in
 * f.reduce, its output then rounded to f.softmax; att keeps the softmax so
 * (before any rounding to f.gemm for the att V product), as autocast saves
 * it for the backward pass. */
void attention_forward_q(float *out,          // (B,T,C)
                         float *preatt,       // (B,NH,T,T)
                         float *att,          // (B,NH,T,T)
                         float *scratch,      // (attention_scratch_floats)
                         const float *inp,    // (B,T,3C)
                         size_t B, size_t T, size_t C, size_t NH, kernel_fmts f);
void attention_backward_q(float *dinp, float *dpreatt, float *datt, float *scratch,
                          const float *dout, const float *inp, const float *att,
                          size_t B, size_t T, size_t C, size_t NH, kernel_fmts f);

/* Softmax and losses with the sum of exponentials, the exponentials, the
 * probabilities and each token's loss rounded to reduce (the mean over
 * tokens, a report, stays in fp64). */
float crossentropy_softmax_forward_q(float *probs, float *losses, const float *logits,
                                     const int *targets, size_t B, size_t T, size_t V,
                                     fmt_id reduce);

/* Seconds and floating-point operations spent in sgemm since the last reset
 * (all threads), for benchmarks. */
void layers_gemm_stats(double *seconds, double *flops);
void layers_gemm_stats_reset(void);

#endif
