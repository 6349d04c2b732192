/* The GPU trainer's kernels, one output element (or row, or column) per
 * call: gpu_kernel_NAME(i, ...) does the work of thread i. gpu_trainer.cu wraps each
 * in a __global__ function; src/gpu/gpu_trainer_host.c runs the same bodies in a loop
 * on the CPU, so every formula and index here is checked against the CPU
 * trainer on machines without a GPU: body by body against layers.c and
 * train.c (tests/test_gpu_kernels.c), and as a whole trainer (test_train
 * through tests/gpu_compare.c).
 *
 * The formulas are layers.c's, with its emulation of low precision: gpu_kernel_q_round
 * rounds to a format (to nearest, ties to even) or passes fp32 through, so one
 * body serves the plain fp32 kernels and their _q variants. Written in the
 * common subset of C11 and CUDA C++. Conventions as in layers.h: outputs
 * first, row-major, backward bodies accumulate (+=) where the CPU kernels do. */
#ifndef MIXPREC_GPU_GPU_KERNELS_H
#define MIXPREC_GPU_GPU_KERNELS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fmt/bulk_impl.h"
#include "train/layernorm_core.h"
#include "util/hd.h"
#include "util/rng.h"

/* Rounding to one format: on = 0 is fp32 (no rounding). SR only where a body
 * says so (the residual stream, the weight update). */
typedef struct {
	bulk_params p;
	int on;
} gpu_kernel_q;

/* The rounding to f in mode (fp32: off). Host only: bulk_params_init
 * lives in fmt/bulk.c; the kernels take the result by value. */
static inline gpu_kernel_q gpu_kernel_q_of(fmt_id f, fmt_mode mode)
{
	gpu_kernel_q q;
	memset(&q, 0, sizeof q);
	if (f == FMT_FP32)
		return q;
	fmt_bulk_opts o;
	memset(&o, 0, sizeof o);
	o.fmt = f;
	o.mode = mode;
	bulk_params_init(&q.p, &o);
	q.on = 1;
	return q;
}

static inline MP_HD float gpu_kernel_q_round(const gpu_kernel_q *q, float x)
{
	return q->on ? bulk_quantize1(&q->p, x, 0u) : x;
}

/* Rounding with element `index` of the SR stream of seed (RNE ignores both). */
static inline MP_HD float gpu_kernel_q_round_sr(const gpu_kernel_q *q, float x, uint64_t seed, uint64_t index)
{
	if (!q->on)
		return x;
	return bulk_quantize1(&q->p, x, q->p.sr ? rng_bits(seed, index) : 0u);
}

/* GEMM operand storage: fp32 values (the fp32 and tf32 products, and every
 * operand of the CPU emulation), 16-bit patterns of the format itself (bf16,
 * fp16), or bf16 patterns of fp8 values (exact: bf16 holds every E4M3 and
 * E5M2 value), which a bf16 tensor core multiplies exactly as an fp8 one. */
enum { GPU_KERNEL_OP_F32 = 0, GPU_KERNEL_OP_NATIVE16 = 1, GPU_KERNEL_OP_BF16 = 2 };

static inline MP_HD void gpu_kernel_store_operand(void *op, int kind, const gpu_kernel_q *q, size_t i, float v)
{
	if (kind == GPU_KERNEL_OP_F32)
		((float *)op)[i] = v;
	else if (kind == GPU_KERNEL_OP_NATIVE16)
		((uint16_t *)op)[i] = (uint16_t)bulk_encode1(&q->p, bulk_f2u(v), 0u);
	else
		((uint16_t *)op)[i] = (uint16_t)(bulk_f2u(v) >> 16);
}

/* --- embeddings --- */

/* i over (B,T,C): the embeddings plus the lesson's offset on the first k
 * channels, stored in the residual format (SR element index0 + i), and the
 * fp64 sum of the blocks' outputs cleared. */
static inline MP_HD void gpu_kernel_encoder_forward(size_t i, float *out, double *dexact, const int *inp,
                                             const float *wte, const float *wpe, size_t T, size_t C,
                                             float offset, size_t k, gpu_kernel_q resid, uint64_t seed,
                                             uint64_t index0)
{
	size_t bt = i / C, c = i % C, t = bt % T;
	float x = wte[(size_t)inp[bt] * C + c] + wpe[t * C + c];
	if (offset != 0.0f && c < k)
		x += offset;
	out[i] = gpu_kernel_q_round_sr(&resid, x, seed, index0 + i);
	dexact[i] = 0.0;
}

/* i over (T,C): dwpe[t,c] += dout[b,t,c] for b in order. */
static inline MP_HD void gpu_kernel_encoder_backward_wpe(size_t i, float *dwpe, const float *dout, size_t B, size_t T,
                                                  size_t C)
{
	float acc = dwpe[i];
	for (size_t b = 0; b < B; b++)
		acc += dout[b * T * C + i];
	dwpe[i] = acc;
}

/* i over (V,C): dwte[v,c] += dout[bt,c] for every position bt whose token
 * is v, in order: pos[off[v] .. off[v+1]) lists them (a counting sort of
 * the inputs, made on the host), so each thread reads only its token's rows. */
static inline MP_HD void gpu_kernel_encoder_backward_wte(size_t i, float *dwte, const float *dout, const int *off,
                                                  const int *pos, size_t C)
{
	size_t v = i / C, c = i % C;
	float acc = dwte[i];
	for (int k = off[v]; k < off[v + 1]; k++)
		acc += dout[(size_t)pos[k] * C + c];
	dwte[i] = acc;
}

/* --- residual stream --- */

/* i over N: out = a + b stored in the residual format; dexact += b. */
static inline MP_HD void gpu_kernel_residual_forward(size_t i, float *out, double *dexact, const float *a, const float *b,
                                              gpu_kernel_q resid, uint64_t seed, uint64_t index0)
{
	dexact[i] += (double)b[i];
	out[i] = gpu_kernel_q_round_sr(&resid, a[i] + b[i], seed, index0 + i);
}

/* j over NP partial sums (j, j + NP, ...): <last - first, dexact> and
 * <dexact, dexact>, for resid_lost_frac. */
static inline MP_HD void gpu_kernel_resid_dots(size_t j, double *num, double *den, const float *last, const float *first,
                                        const double *dexact, size_t n, size_t NP)
{
	double a = 0.0, d = 0.0;
	for (size_t i = j; i < n; i += NP) {
		a += ((double)last[i] - (double)first[i]) * dexact[i];
		d += dexact[i] * dexact[i];
	}
	num[j] = a;
	den[j] = d;
}

/* j over NF: out[j] = in[j] + in[j + NF] + ... (< NP), in that order: the
 * second level of a fixed-order reduction. */
static inline MP_HD void gpu_kernel_fold_u64(size_t j, unsigned long long *out, const unsigned long long *in, size_t NP,
                                      size_t NF)
{
	unsigned long long a = 0;
	for (size_t i = j; i < NP; i += NF)
		a += in[i];
	out[j] = a;
}

static inline MP_HD void gpu_kernel_fold_f64(size_t j, double *out, const double *in, size_t NP, size_t NF)
{
	double a = 0.0;
	for (size_t i = j; i < NP; i += NF)
		a += in[i];
	out[j] = a;
}

/* --- layer normalisation (eps 1e-5, two passes) --- */

/* row over B*T: train/layernorm_core.h's row, the reductions rounded by r. */
static inline MP_HD void gpu_kernel_layernorm_forward(size_t row, float *out, float *mean, float *rstd, const float *inp,
                                               const float *weight, const float *bias, size_t C, gpu_kernel_q r)
{
	layernorm_core_forward_row(out + row * C, mean + row, rstd + row, inp + row * C, weight, bias, C,
	                           r.on ? &r.p : NULL);
}

/* row over B*T: dinp += s (g - mean(g) - n mean(g n)), g = weight dout. */
static inline MP_HD void gpu_kernel_layernorm_backward_inp(size_t row, float *dinp, const float *dout, const float *inp,
                                                    const float *weight, const float *mean, const float *rstd,
                                                    size_t C, gpu_kernel_q r)
{
	layernorm_core_backward_row(dinp + row * C, dout + row * C, inp + row * C, weight, mean[row], rstd[row], C,
	                            r.on ? &r.p : NULL);
}

/* Column sums over many rows run in two steps, so that every thread has a
 * short loop: step 1 sums chunk r of the rows for each column (i over
 * (R, N): rows [r rows_per, (r+1) rows_per)), step 2 adds the R chunk sums
 * of each column, in order, to the gradient (gpu_kernel_colsum_finish). */

/* i over (R,C): chunk sums of n dout (for dweight) and dout (for dbias). */
static inline MP_HD void gpu_kernel_layernorm_params_partial(size_t i, float *part_w, float *part_b, const float *dout,
                                                      const float *inp, const float *mean, const float *rstd,
                                                      size_t BT, size_t C, size_t rows_per)
{
	size_t r = i / C, c = i % C, lo = r * rows_per, hi = lo + rows_per < BT ? lo + rows_per : BT;
	float dw = 0.0f, db = 0.0f;
	for (size_t row = lo; row < hi; row++) {
		float d = dout[row * C + c];
		float n = (inp[row * C + c] - mean[row]) * rstd[row];
		db += d;
		dw += n * d;
	}
	part_w[i] = dw;
	part_b[i] = db;
}

/* c over N: dst[c] += the R chunk sums of column c, in chunk order. */
static inline MP_HD void gpu_kernel_colsum_finish(size_t c, float *dst, const float *part, size_t N, size_t R)
{
	float acc = 0.0f;
	for (size_t r = 0; r < R; r++)
		acc += part[r * N + c];
	dst[c] += acc;
}

/* --- matmul helpers (the products themselves are cuBLAS or sgemm) --- */

/* i over N: x rounded in place (when inplace) and stored as a GEMM operand. */
static inline MP_HD void gpu_kernel_operand(size_t i, void *op, int kind, float *x, int inplace, gpu_kernel_q g)
{
	float v = gpu_kernel_q_round(&g, x[i]);
	if (inplace)
		x[i] = v;
	gpu_kernel_store_operand(op, kind, &g, i, v);
}

/* i over (M,OC): out = (out + bias) rounded to the GEMM format; bias may be NULL. */
static inline MP_HD void gpu_kernel_bias_round(size_t i, float *out, const float *bias, size_t OC, gpu_kernel_q g)
{
	float v = out[i];
	if (bias != NULL)
		v = bias[i % OC] + v;
	out[i] = gpu_kernel_q_round(&g, v);
}

/* i over (R,OC): chunk sums of dout's columns (the bias gradient's step 1). */
static inline MP_HD void gpu_kernel_bias_partial(size_t i, float *part, const float *dout, size_t M, size_t OC,
                                          size_t rows_per)
{
	size_t r = i / OC, oc = i % OC, lo = r * rows_per, hi = lo + rows_per < M ? lo + rows_per : M;
	float acc = 0.0f;
	for (size_t row = lo; row < hi; row++)
		acc += dout[row * OC + oc];
	part[i] = acc;
}

/* i over N: x rounded in place to the format (the GEMM's input gradient). */
static inline MP_HD void gpu_kernel_round(size_t i, float *x, gpu_kernel_q g)
{
	x[i] = gpu_kernel_q_round(&g, x[i]);
}

/* --- causal self-attention: q, k, v side by side in (B,T,3C), head h in
 * channels [h hs, (h+1) hs) of each. The products take operands rounded to
 * the GEMM format (gm), accumulate in fp32 and round their outputs; the
 * softmax sums are rounded to the reduction format (rd). Operands come
 * already rounded (inp_r, dout_r, att_r: gpu_kernel_operand copies made once per
 * layer, or the fp32 arrays themselves when gm is fp32), so no product
 * rounds the same element again for every row that reads it. --- */

/* softmax of in[0..n) into out, as layers.c's softmax_row_q; returns the sum. */
static inline MP_HD float gpu_kernel_softmax(float *out, const float *in, size_t n, float *max_out, const gpu_kernel_q *rd)
{
	float mx = -INFINITY;
	for (size_t u = 0; u < n; u++)
		mx = in[u] > mx ? in[u] : mx;
	float sum = 0.0f;
	for (size_t u = 0; u < n; u++) {
		out[u] = gpu_kernel_q_round(rd, expf(in[u] - mx));
		sum = gpu_kernel_q_round(rd, sum + out[u]);
	}
	float inv = gpu_kernel_q_round(rd, 1.0f / sum);
	for (size_t u = 0; u < n; u++)
		out[u] = gpu_kernel_q_round(rd, out[u] * inv);
	*max_out = mx;
	return sum;
}

/* The attention bodies keep a head's row of hs values in a local array.
 * Each body takes hs as an argument: the plain gpu_kernel_attention_* call
 * it with C / NH, and gpu_trainer.cu calls it with a constant (32, 64, 128)
 * where the head size is one of those, so that every loop over j has a
 * known trip count, unrolls (MP_UNROLL), and the arrays live in registers
 * (a generic head size keeps them in per-thread local memory). No two rows
 * of hs values are live at once (the forward's q and acc, the backward's d
 * and acc, the key/value gradients' sv and sk each have their own loop),
 * so a head of 128 needs 128 registers for them, not 256. The GPU trainer
 * refuses a head size above GPU_KERNEL_HS_MAX. Every sum still runs over u
 * (or t) in ascending order, as layers.c's. */
#define GPU_KERNEL_HS_MAX 128

#if defined(__CUDA_ARCH__)
#define MP_UNROLL _Pragma("unroll")
#else
#define MP_UNROLL
#endif

/* r over (B,NH,T): one query row. preatt and att rows are (T), zero above
 * the diagonal; att keeps the unrounded softmax for the backward pass and
 * att_r (which may be att when gm is fp32) the operand of att V. */
static inline MP_HD void gpu_kernel_attention_forward_hs(size_t r, float *out, float *preatt, float *att,
                                                        float *att_r, const float *inp_r, size_t NH, size_t T,
                                                        size_t C, gpu_kernel_q gm, gpu_kernel_q rd, size_t hs)
{
	size_t t = r % T, bh = r / T, h = bh % NH, b = bh / NH;
	size_t C3 = 3 * C;
	float scale = 1.0f / sqrtf((float)hs);
	const float *kbase = inp_r + b * T * C3 + C + h * hs;
	const float *vbase = kbase + C;
	float *pr = preatt + r * T, *ar = att + r * T, *arr = att_r + r * T;
	{
		float q[GPU_KERNEL_HS_MAX];
		const float *qg = inp_r + (b * T + t) * C3 + h * hs;
		MP_UNROLL
		for (size_t j = 0; j < hs; j++)
			q[j] = qg[j];
		for (size_t u = 0; u <= t; u++) {
			const float *k = kbase + u * C3;
			float s = 0.0f;
			MP_UNROLL
			for (size_t j = 0; j < hs; j++)
				s += q[j] * k[j];
			pr[u] = gpu_kernel_q_round(&gm, s * scale);
		}
	}
	for (size_t u = t + 1; u < T; u++)
		pr[u] = 0.0f;
	float mx;
	gpu_kernel_softmax(ar, pr, t + 1, &mx, &rd);
	for (size_t u = t + 1; u < T; u++)
		ar[u] = 0.0f;
	float acc[GPU_KERNEL_HS_MAX];
	MP_UNROLL
	for (size_t j = 0; j < hs; j++)
		acc[j] = 0.0f;
	for (size_t u = 0; u <= t; u++) {
		float a = gpu_kernel_q_round(&gm, ar[u]);
		arr[u] = a;
		const float *v = vbase + u * C3;
		MP_UNROLL
		for (size_t j = 0; j < hs; j++)
			acc[j] += a * v[j];
	}
	float *o = out + (b * T + t) * C + h * hs;
	MP_UNROLL
	for (size_t j = 0; j < hs; j++)
		o[j] = gpu_kernel_q_round(&gm, acc[j]);
}

static inline MP_HD void gpu_kernel_attention_forward(size_t r, float *out, float *preatt, float *att, float *att_r,
                                                     const float *inp_r, size_t NH, size_t T, size_t C,
                                                     gpu_kernel_q gm, gpu_kernel_q rd)
{
	gpu_kernel_attention_forward_hs(r, out, preatt, att, att_r, inp_r, NH, T, C, gm, rd, C / NH);
}

/* r over (B,NH,T): datt = dout v^T for the row (rounded), the softmax
 * Jacobian from the unrounded att into dpreatt (rounded to the GEMM
 * format), and dq += scale dpre k. */
static inline MP_HD void gpu_kernel_attention_backward_q_hs(size_t r, float *dinp, float *dpreatt,
                                                           const float *dout_r, const float *inp_r, const float *att,
                                                           size_t NH, size_t T, size_t C, gpu_kernel_q gm,
                                                           gpu_kernel_q rd, size_t hs)
{
	size_t t = r % T, bh = r / T, h = bh % NH, b = bh / NH;
	size_t C3 = 3 * C;
	float scale = 1.0f / sqrtf((float)hs);
	const float *kbase = inp_r + b * T * C3 + C + h * hs;
	const float *vbase = kbase + C;
	const float *ar = att + r * T;
	float *dp = dpreatt + r * T;
	/* datt[u] into dp first, then the Jacobian over it */
	{
		float d[GPU_KERNEL_HS_MAX];
		const float *dg = dout_r + (b * T + t) * C + h * hs;
		MP_UNROLL
		for (size_t j = 0; j < hs; j++)
			d[j] = dg[j];
		for (size_t u = 0; u <= t; u++) {
			const float *v = vbase + u * C3;
			float s = 0.0f;
			MP_UNROLL
			for (size_t j = 0; j < hs; j++)
				s += d[j] * v[j];
			dp[u] = gpu_kernel_q_round(&gm, s);
		}
	}
	float dot = 0.0f;
	for (size_t u = 0; u <= t; u++)
		dot = gpu_kernel_q_round(&rd, dot + gpu_kernel_q_round(&rd, ar[u] * dp[u]));
	float acc[GPU_KERNEL_HS_MAX];
	MP_UNROLL
	for (size_t j = 0; j < hs; j++)
		acc[j] = 0.0f;
	for (size_t u = 0; u <= t; u++) {
		float g = gpu_kernel_q_round(&gm, ar[u] * (dp[u] - dot));
		dp[u] = g;
		const float *k = kbase + u * C3;
		MP_UNROLL
		for (size_t j = 0; j < hs; j++)
			acc[j] += g * k[j];
	}
	for (size_t u = t + 1; u < T; u++)
		dp[u] = 0.0f;
	float *dq = dinp + (b * T + t) * C3 + h * hs;
	MP_UNROLL
	for (size_t j = 0; j < hs; j++)
		dq[j] += gpu_kernel_q_round(&gm, acc[j] * scale);
}

static inline MP_HD void gpu_kernel_attention_backward_q(size_t r, float *dinp, float *dpreatt, const float *dout_r,
                                                        const float *inp_r, const float *att, size_t NH, size_t T,
                                                        size_t C, gpu_kernel_q gm, gpu_kernel_q rd)
{
	gpu_kernel_attention_backward_q_hs(r, dinp, dpreatt, dout_r, inp_r, att, NH, T, C, gm, rd, C / NH);
}

/* The launches put 32 consecutive indices in a warp (blocks are multiples
 * of 32 threads): the first row t of key position u's loop in
 * gpu_kernel_attention_backward_kv is the u of the warp's first lane in the
 * same (b, h), so that the lanes of a warp step through the same rows t
 * together (each reads the same dout and q row, a broadcast, and its own
 * column u of att and dpreatt, which neighbouring lanes read beside it)
 * instead of each starting at its own diagonal. */
#define GPU_KERNEL_WARP 32

static inline MP_HD size_t gpu_kernel_warp_first_row(size_t r, size_t u)
{
	size_t lane = r % GPU_KERNEL_WARP;
	return u >= lane ? u - lane : 0;
}

/* r over (B,NH,T), a key position u: dv[u] += att_r[:,u]^T dout and
 * dk[u] += scale dpre[:,u]^T q over the rows t >= u in ascending order
 * (run after gpu_kernel_attention_backward_q has filled dpreatt). A lane
 * skips the rows t < u of its warp's loop: its sums add the same terms in
 * the same order as a loop from t = u, so the bits do not depend on the
 * warp's shape. */
static inline MP_HD void gpu_kernel_attention_backward_kv_hs(size_t r, float *dinp, const float *dpreatt,
                                                            const float *dout_r, const float *inp_r,
                                                            const float *att_r, size_t NH, size_t T, size_t C,
                                                            gpu_kernel_q gm, size_t hs)
{
	size_t u = r % T, bh = r / T, h = bh % NH, b = bh / NH;
	size_t C3 = 3 * C, t0 = gpu_kernel_warp_first_row(r, u);
	float scale = 1.0f / sqrtf((float)hs);
	const float *qbase = inp_r + b * T * C3 + h * hs;
	const float *dbase = dout_r + b * T * C + h * hs;
	const float *a = att_r + bh * T * T, *dp = dpreatt + bh * T * T;
	float *dk = dinp + (b * T + u) * C3 + C + h * hs, *dv = dk + C;
	{
		float sv[GPU_KERNEL_HS_MAX];
		MP_UNROLL
		for (size_t j = 0; j < hs; j++)
			sv[j] = 0.0f;
		for (size_t t = t0; t < T; t++) {
			if (t < u)
				continue;
			float at = a[t * T + u];
			const float *dr = dbase + t * C;
			MP_UNROLL
			for (size_t j = 0; j < hs; j++)
				sv[j] += at * dr[j];
		}
		MP_UNROLL
		for (size_t j = 0; j < hs; j++)
			dv[j] += gpu_kernel_q_round(&gm, sv[j]);
	}
	float sk[GPU_KERNEL_HS_MAX];
	MP_UNROLL
	for (size_t j = 0; j < hs; j++)
		sk[j] = 0.0f;
	for (size_t t = t0; t < T; t++) {
		if (t < u)
			continue;
		float pt = dp[t * T + u];
		const float *qr = qbase + t * C3;
		MP_UNROLL
		for (size_t j = 0; j < hs; j++)
			sk[j] += pt * qr[j];
	}
	MP_UNROLL
	for (size_t j = 0; j < hs; j++)
		dk[j] += gpu_kernel_q_round(&gm, sk[j] * scale);
}

static inline MP_HD void gpu_kernel_attention_backward_kv(size_t r, float *dinp, const float *dpreatt,
                                                         const float *dout_r, const float *inp_r, const float *att_r,
                                                         size_t NH, size_t T, size_t C, gpu_kernel_q gm)
{
	gpu_kernel_attention_backward_kv_hs(r, dinp, dpreatt, dout_r, inp_r, att_r, NH, T, C, gm, C / NH);
}

/* --- GELU (tanh approximation, 1 + tanh through exp as layers.c) --- */

#define GPU_KERNEL_GELU_SCALE 0.7978845608028654f
#define GPU_KERNEL_GELU_CUBE 0.044715f

static inline MP_HD void gpu_kernel_gelu_forward(size_t i, float *out, const float *inp)
{
	float x = inp[i];
	float u = GPU_KERNEL_GELU_SCALE * (x + GPU_KERNEL_GELU_CUBE * x * x * x);
	out[i] = 0.5f * x * (2.0f / (1.0f + expf(-2.0f * u)));
}

static inline MP_HD void gpu_kernel_gelu_backward(size_t i, float *dinp, const float *inp, const float *dout)
{
	float x = inp[i];
	float u = GPU_KERNEL_GELU_SCALE * (x + GPU_KERNEL_GELU_CUBE * x * x * x);
	float opt = 2.0f / (1.0f + expf(-2.0f * u));
	float du = GPU_KERNEL_GELU_SCALE * (1.0f + 3.0f * GPU_KERNEL_GELU_CUBE * x * x);
	float grad = 0.5f * opt + 0.5f * x * opt * (2.0f - opt) * du;
	dinp[i] += grad * dout[i];
}

/* --- softmax + cross-entropy --- */

/* row over B*T: probs and the token's loss (log-sum-exp form). */
static inline MP_HD void gpu_kernel_crossentropy_forward(size_t row, float *probs, float *losses, const float *logits,
                                                  const int *targets, size_t V, gpu_kernel_q rd)
{
	const float *z = logits + row * V;
	float mx;
	float sum = gpu_kernel_softmax(probs + row * V, z, V, &mx, &rd);
	losses[row] = gpu_kernel_q_round(&rd, gpu_kernel_q_round(&rd, logf(sum)) + mx - z[targets[row]]);
}

/* i over (B,T,V): dlogits = dloss (probs - onehot(target)), overwritten. */
static inline MP_HD void gpu_kernel_crossentropy_backward(size_t i, float *dlogits, const float *probs,
                                                   const int *targets, float dloss, size_t V)
{
	float d = probs[i] * dloss;
	if ((size_t)targets[i / V] == i % V)
		d -= dloss;
	dlogits[i] = d;
}

/* --- the optimiser (train.c's phases A and B for one element) --- */

/* j over NP partials, elements j, j + NP, ...: the raw gradient kept for
 * histograms, the gradient rounded to the gradient format (counting what
 * flushes to zero and any inf/NaN), to the accumulation format, unscaled,
 * and its squared norm. */
static inline MP_HD MP_NO_CONTRACT void gpu_kernel_grads(size_t j, float *g, float *raw, unsigned long long *nonzero,
                                                  unsigned long long *flushed, unsigned long long *nonfinite,
                                                  double *norm2, size_t n, size_t NP, gpu_kernel_q gq, gpu_kernel_q aq,
                                                  double inv_scale)
{
	unsigned long long nz = 0, fl = 0, nf = 0;
	double s2 = 0.0;
	for (size_t i = j; i < n; i += NP) {
		float x = g[i];
		raw[i] = x;
		if (gq.on) {
			float y = gpu_kernel_q_round(&gq, x);
			nz += x != 0.0f;
			fl += x != 0.0f && y == 0.0f;
			nf += !isfinite(y);
			x = y;
		}
		x = gpu_kernel_q_round(&aq, x);
		x = (float)MP_DMUL((double)x, inv_scale);
		g[i] = x;
		s2 = MP_DADD(s2, MP_DMUL((double)x, (double)x));
	}
	nonzero[j] = nz;
	flushed[j] = fl;
	nonfinite[j] = nf;
	norm2[j] = s2;
}

typedef struct {
	double lr, beta1, beta2, eps, weight_decay;
	double clip, c1, c2;     /* clip factor, bias corrections */
	int master_fp32;
	int kahan;
	uint64_t seed, index0;   /* SR of the weight update: element i is index0 + i; of m and v: seed ^ 1, ^ 2 */
} gpu_kernel_adam;

/* j over NP partials, elements j, j + NP, ...: AdamW with its moments in
 * the optimiser format (oq), the weight updated in fp32 (master) or in its
 * format (wq: RNE or SR, Kahan with comp), counting nonzero updates and those
 * the stored weight lost; the GEMM's working copy refreshed (opq, kind). */
static inline MP_HD MP_NO_CONTRACT void gpu_kernel_adamw(size_t j, float *w, float *m, float *v, float *comp,
                                                  const float *g, unsigned long long *nonzero,
                                                  unsigned long long *lost, void *op, int kind, int have_op,
                                                  size_t n, size_t NP, gpu_kernel_adam a, gpu_kernel_q oq, gpu_kernel_q wq, gpu_kernel_q opq)
{
	unsigned long long nz = 0, ls = 0;
	gpu_kernel_q rne = wq;
	rne.p.sr = 0;
	for (size_t i = j; i < n; i += NP) {
		double gi = (double)(float)MP_DMUL((double)g[i], a.clip);
		float mi = (float)MP_DADD(MP_DMUL(a.beta1, (double)m[i]), MP_DMUL(1.0 - a.beta1, gi));
		float vi = (float)MP_DADD(MP_DMUL(a.beta2, (double)v[i]), MP_DMUL(MP_DMUL(1.0 - a.beta2, gi), gi));
		mi = gpu_kernel_q_round_sr(&oq, mi, a.seed ^ 1u, a.index0 + i);
		vi = gpu_kernel_q_round_sr(&oq, vi, a.seed ^ 2u, a.index0 + i);
		m[i] = mi;
		v[i] = vi;
		float old = w[i];
		double mhat = MP_DDIV((double)mi, a.c1), vhat = MP_DDIV((double)vi, a.c2);
		double step = MP_DADD(MP_DDIV(mhat, MP_DADD(MP_DSQRT(vhat), a.eps)), MP_DMUL(a.weight_decay, (double)old));
		float upd = (float)MP_DMUL(-1.0, MP_DMUL(a.lr, step));
		float nw;
		if (a.master_fp32) {
			nw = old + upd;
		} else if (a.kahan) {
			float y = upd - comp[i];
			nw = gpu_kernel_q_round_sr(&wq, old + y, a.seed, a.index0 + i);
			comp[i] = gpu_kernel_q_round(&rne, (nw - old) - y);
		} else {
			nw = gpu_kernel_q_round_sr(&wq, old + upd, a.seed, a.index0 + i);
		}
		w[i] = nw;
		nz += upd != 0.0f;
		ls += upd != 0.0f && nw == old;
		if (have_op)
			gpu_kernel_store_operand(op, kind, &opq, i, gpu_kernel_q_round(&opq, nw));
	}
	nonzero[j] = nz;
	lost[j] = ls;
}

#endif
