#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/bulk.h"
#include "quant/quant.h"
#include "train/blockcast.h"
#include "train/fp8scale.h"
#include "train/gradnoise.h"

/* --- the rules --- */

float fp8_delayed_scale(float fp8_max, float amax, int margin, float prev)
{
	/* delayed_scaling.cu: scaled_max = fp8_max * 2^-margin; the scale is
	 * scaled_max / amax if isfinite(amax) && amax > 0, else the old one */
	float scaled_max = (float)ldexp(fp8_max, -margin);
	return isfinite(amax) && amax > 0 ? scaled_max / amax : prev;
}

float fp8_current_scale(float fp8_max, float amax)
{
	/* recipe_common.cuh compute_scale_from_amax (epsilon 0, no pow2) */
	if (isinf(amax) || isnan(amax) || amax == 0.0f)
		return 1.0f;
	float s = fp8_max / amax;
	return isinf(s) ? FLT_MAX : s;
}

float fp8_history_amax(const float *hist, size_t H, fp8_amax_algo algo)
{
	if (algo == AMAX_ALGO_MOST_RECENT || H == 0)
		return H ? hist[0] : 0.0f;
	float m = 0;
	for (size_t i = 0; i < H; i++)   /* fmaxf as TE does: a NaN entry is passed over */
		m = fmaxf(m, hist[i]);
	return m;
}

void fp8_history_push(float *hist, size_t H, float amax)
{
	if (H == 0)
		return;
	memmove(hist + 1, hist, (H - 1) * sizeof *hist);
	hist[0] = amax;
}

float fp8_amax(const float *x, size_t n)
{
	float m = 0;
	for (size_t i = 0; i < n; i++) {
		float a = fabsf(x[i]);
		if (isnan(a))
			return NAN;
		m = a > m ? a : m;
	}
	return m;
}

void fp8_cast(float *x, size_t n, fmt_id fmt, float scale, fp8_cast_stat *stat)
{
	enum { BLOCK = 1024 };
	float before[BLOCK];
	float fmax = (float)fmt_max(fmt_get(fmt));
	/* rounded without saturation first: an element overflowed when its
	 * nearest value is past the largest (NaN in E4M3, inf in E5M2), so a
	 * value that merely rounds down onto fp8_max is not counted; it is then
	 * saturated to +-fp8_max as TE's cast does */
	fmt_bulk_opts o = { .fmt = fmt, .mode = FMT_RNE };
	stat->amax = fp8_amax(x, n);
	stat->n = n;
	stat->overflow = stat->underflow = 0;
	for (size_t i0 = 0; i0 < n; i0 += BLOCK) {
		size_t len = n - i0 < BLOCK ? n - i0 : BLOCK;
		float *b = x + i0;
		memcpy(before, b, len * sizeof *b);
		for (size_t i = 0; i < len; i++)
			b[i] *= scale;
		/* RNE on the automatic path cannot fail */
		(void)fmt_bulk_quantize(FMT_SIMD_AUTO, &o, b, len);
		for (size_t i = 0; i < len; i++) {
			if (!isfinite(b[i])) {
				stat->overflow++;
				b[i] = isnan(before[i]) ? NAN : copysignf(fmax, before[i]);
			}
			b[i] /= scale;
			stat->underflow += before[i] != 0 && b[i] == 0;
		}
	}
}

/* --- the state --- */

typedef struct {
	float amax;                 /* max over the casts recorded */
	float scale;                /* the scale of the last recorded cast */
	size_t overflow, underflow, n;
	grad_noise noise;           /* output gradients: their casts' norm and noise */
	grad_noise wnoise;          /* weights: their gradients' norm and noise */
} slot;

struct fp8_state {
	size_t count, H, L;
	cast_scaling scaling;
	fp8_amax_algo algo;
	int margin;
	fp8_opts o;
	block_scratch bs[2];        /* block_cast's, per half */
	float *buf[2];              /* fp8_state_scratch's, per half */
	size_t buf_cap[2];
	float *nbuf[2];             /* an output gradient as it was before its cast, per half */
	size_t nbuf_cap[2];
	float *wbuf[2];             /* a weight gradient before its product, per half */
	size_t wbuf_cap[2];
	float *hist;                /* (count, H) newest first */
	float *scale;               /* (count) delayed: the next step's scales */
	slot *rec[2];               /* (count) what each half recorded this step */
	fp8_tensor_stat *last;      /* (count) the last step's statistics */
	char (*names)[48];          /* (count) */
	size_t step_over, step_n;   /* the last step's saturated or NaN elements, of all cast */
	size_t step_under;          /* ... and its nonzero elements that became 0 */
	grad_noise step_noise;      /* ... and its output gradients' norm and noise */
	grad_noise step_wnoise;     /* ... and its weight gradients' */
};

static const char *const linear_names[FP8_LINEARS] = { "attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj" };
static const char *const role_names[FP8_ROLES] = {
	[FP8_WEIGHT] = "weight", [FP8_INPUT] = "input", [FP8_GRAD_OUTPUT] = "grad_output" };

void fp8_state_free(fp8_state *st)
{
	if (!st)
		return;
	free(st->hist);
	free(st->scale);
	free(st->rec[0]);
	free(st->rec[1]);
	free(st->last);
	free(st->names);
	for (int h = 0; h < 2; h++) {
		block_scratch_free(&st->bs[h]);
		free(st->buf[h]);
		free(st->nbuf[h]);
		free(st->wbuf[h]);
	}
	free(st);
}

static bool fp8_kind(fmt_id f)
{
	return f == FMT_E4M3 || f == FMT_E5M2;
}

static bool opts_ok(size_t L, const fp8_opts *o)
{
	bool fp4 = o->scaling == CAST_SCALING_NVFP4;
	bool fmts = fp4 ? o->fwd == FMT_E2M1 && o->bwd == FMT_E2M1 : fp8_kind(o->fwd) && fp8_kind(o->bwd);
	return o->scaling != CAST_SCALING_NONE && o->scaling < CAST_SCALING_COUNT && L > 0 && o->H > 0 &&
	       o->H <= FP8_HISTORY_MAX && fmts && o->highp_last <= L && (unsigned)o->rule < QUANT_RULE_COUNT &&
	       o->mx_block <= QUANT_BLOCK_MAX;
}

mp_status fp8_state_create(fp8_state **out, size_t L, const fp8_opts *o)
{
	*out = NULL;
	if (!opts_ok(L, o))
		return MP_EINVAL;
	cast_scaling s = o->scaling;
	size_t H = o->H;
	fmt_id fwd = o->fwd, bwd = o->bwd;
	fp8_state *st = calloc(1, sizeof *st);
	if (!st)
		return MP_ENOMEM;
	size_t n = L * FP8_LINEARS * FP8_ROLES;
	*st = (fp8_state){ .count = n, .H = H, .L = L, .scaling = s, .algo = o->algo, .margin = o->margin, .o = *o };
	st->hist = calloc(n * H, sizeof *st->hist);
	st->scale = malloc(n * sizeof *st->scale);
	st->rec[0] = calloc(n, sizeof(slot));
	st->rec[1] = calloc(n, sizeof(slot));
	st->last = calloc(n, sizeof *st->last);
	st->names = malloc(n * sizeof *st->names);
	if (!st->hist || !st->scale || !st->rec[0] || !st->rec[1] || !st->last || !st->names) {
		fp8_state_free(st);
		return MP_ENOMEM;
	}
	for (size_t l = 0; l < L; l++)
		for (size_t k = 0; k < FP8_LINEARS; k++)
			for (int r = 0; r < FP8_ROLES; r++) {
				size_t i = fp8_tensor_index(l, k, (fp8_role)r);
				snprintf(st->names[i], sizeof st->names[i], "h.%zu.%s.%s", l, linear_names[k], role_names[r]);
				st->scale[i] = 1.0f;
				st->last[i] = (fp8_tensor_stat){ .name = st->names[i], .fmt = r == FP8_GRAD_OUTPUT ? bwd : fwd,
				                                 .scale = 1.0f };
			}
	*out = st;
	return MP_OK;
}

size_t fp8_state_count(const fp8_state *st)
{
	return st->count;
}

bool fp8_state_covers(const fp8_state *st, size_t l)
{
	return l + st->o.highp_last < st->L;
}

bool fp8_state_blocked(const fp8_state *st)
{
	return cast_scaling_blocked(st->scaling);
}

/* *buf grown to at least n floats (its capacity in *cap), kept between
 * calls; NULL (the old buffer kept) when out of memory. */
static float *grow(float **buf, size_t *cap, size_t n)
{
	if (n > *cap) {
		float *b = realloc(*buf, n * sizeof *b);
		if (!b)
			return NULL;
		*buf = b;
		*cap = n;
	}
	return *buf;
}

float *fp8_state_scratch(fp8_state *st, int h, size_t n)
{
	return grow(&st->buf[h], &st->buf_cap[h], n);
}

size_t fp8_state_scratch_bytes(const fp8_state *st)
{
	size_t n = 0;
	/* block_scratch: cap floats and 2 cap bytes; the copies kept for the
	 * noise ratios (nbuf, wbuf) measure the recipe and are not its memory */
	for (int h = 0; h < 2; h++)
		n += st->buf_cap[h] * sizeof(float) + st->bs[h].cap * (sizeof(float) + 2);
	return n;
}

/* The input in (n) as it was before its cast into x, for grad_noise_add
 * when tensor i is an output gradient whose cast is recorded: in itself
 * when the cast leaves it intact (in is not x), else half h's copy; NULL
 * when there is nothing to keep or no memory (MP_ENOMEM in *rc). */
static const float *noise_keep(fp8_state *st, int h, size_t i, bool record, const float *in, const float *x,
                               size_t n, mp_status *rc)
{
	*rc = MP_OK;
	if (!st->o.noise || !record || i % FP8_ROLES != FP8_GRAD_OUTPUT)
		return NULL;
	if (in != x)
		return in;
	float *keep = grow(&st->nbuf[h], &st->nbuf_cap[h], n);
	if (!keep) {
		*rc = MP_ENOMEM;
		return NULL;
	}
	memcpy(keep, in, n * sizeof *in);
	return keep;
}

/* What a block recipe casts tensor i with, contracted along `along`. */
static block_cast_cfg block_cfg(const fp8_state *st, size_t i, fp8_along along, uint64_t seed)
{
	fp8_role role = (fp8_role)(i % FP8_ROLES);
	size_t mx = st->o.mx_block ? st->o.mx_block : 32;
	size_t b = st->scaling == CAST_SCALING_BLOCK ? 128 : st->scaling == CAST_SCALING_MX ? mx : 16;
	bool square = role == FP8_WEIGHT && (st->scaling == CAST_SCALING_BLOCK || (st->scaling == CAST_SCALING_NVFP4 &&
	                                                                         st->o.w2d));
	block_cast_cfg c = { .kind = st->scaling, .elem = st->last[i].fmt, .pow2 = st->o.pow2, .rule = st->o.rule,
		             .mode = FMT_RNE, .seed = seed };
	c.br = square || along == FP8_ALONG_COLS ? b : 1;
	c.bc = square || along == FP8_ALONG_ROWS ? b : 1;
	if (st->scaling == CAST_SCALING_NVFP4 && role == FP8_GRAD_OUTPUT && st->o.sr)
		c.mode = FMT_SR;
	return c;
}

/* A block recipe's operand as it is cast: in itself, or (nvfp4: the
 * weight-gradient GEMM's operands, input and output gradient, contracted
 * over the tokens) rotated first, into x. */
static const float *block_operand(const fp8_state *st, size_t i, fp8_along along, const float *in, float *x,
                                  size_t rows, size_t cols)
{
	if (st->scaling != CAST_SCALING_NVFP4 || !st->o.rht || along != FP8_ALONG_COLS || i % FP8_ROLES == FP8_WEIGHT)
		return in;
	block_rht16_rows_from(in, x, rows, cols, QUANT_RHT_SIGNS);
	return x;
}

/* A per-tensor recipe's cast of src (NULL: x itself) into x, n elements,
 * counted in the step's statistics when record is set (fp8_state_cast). */
static void cast_per_tensor(fp8_state *st, int h, size_t i, bool record, const float *src, float *x, size_t n)
{
	if (src && src != x)
		memcpy(x, src, n * sizeof *x);
	fp8_state_cast(st, h, i, record, x, n);
}

/* A block recipe's cast of in (its operand, block_operand) into x; what it
 * saw in *bs. MP_ENOMEM when the scratch cannot grow. */
static mp_status cast_blocks(fp8_state *st, int h, size_t i, fp8_along along, uint64_t seed, const float *in,
                             float *x, size_t rows, size_t cols, block_cast_stat *bs)
{
	block_cast_cfg c = block_cfg(st, i, along, seed);
	return block_cast_from(in, x, rows, cols, &c, &st->bs[h], bs);
}

/* A block cast's statistics into half h's record of tensor i: amax and
 * scale from the cast along the rows (the forward's, the input gradient's),
 * which sees the tensor itself; the weight gradient's casts down the
 * columns (rotated under nvfp4) count towards the shares only, and a 2D
 * weight's cast down its columns, its cast along the rows again (the same
 * blocks, the same bits), not at all. before: the output gradient as it
 * was before the cast, for its noise, or NULL. */
static void record_blocks(fp8_state *st, int h, size_t i, fp8_along along, const block_cast_stat *bs,
                          const float *before, const float *x, size_t n)
{
	block_cast_cfg c = block_cfg(st, i, along, 0);
	if (c.br == c.bc && c.br > 1 && along == FP8_ALONG_COLS)
		return;
	slot *r = &st->rec[h][i];
	if (along == FP8_ALONG_ROWS) {
		if (isnan(bs->amax) || isnan(r->amax) || bs->amax >= r->amax || r->n == 0)
			r->scale = bs->scale;
		r->amax = isnan(bs->amax) || isnan(r->amax) ? NAN : fmaxf(r->amax, bs->amax);
	}
	r->overflow += bs->overflow;
	r->underflow += bs->underflow;
	r->n += bs->n;
	if (before)
		grad_noise_add(&r->noise, before, x, n);
}

mp_status fp8_state_cast_only(fp8_state *st, int h, size_t i, fp8_along along, uint64_t seed, const float *src,
                              float *x, size_t rows, size_t cols)
{
	block_cast_stat bs;
	if (fp8_state_blocked(st))
		return cast_blocks(st, h, i, along, seed, block_operand(st, i, along, src ? src : x, x, rows, cols), x,
		                   rows, cols, &bs);
	cast_per_tensor(st, h, i, false, src, x, rows * cols);
	return MP_OK;
}

mp_status fp8_state_cast_and_record(fp8_state *st, int h, size_t i, fp8_along along, uint64_t seed,
                                    const float *src, float *x, size_t rows, size_t cols)
{
	if (!fp8_state_blocked(st)) {
		cast_per_tensor(st, h, i, true, src, x, rows * cols);
		return MP_OK;
	}
	const float *in = block_operand(st, i, along, src ? src : x, x, rows, cols);
	mp_status rc;
	const float *before = noise_keep(st, h, i, true, in, x, rows * cols, &rc);   /* before x is overwritten */
	block_cast_stat bs;
	if (rc == MP_OK)
		rc = cast_blocks(st, h, i, along, seed, in, x, rows, cols, &bs);
	if (rc == MP_OK)
		record_blocks(st, h, i, along, &bs, before, x, rows * cols);
	return rc;
}

void fp8_state_cast(fp8_state *st, int h, size_t i, bool record, float *x, size_t n)
{
	fmt_id f = st->last[i].fmt;
	float scale = st->scaling == CAST_SCALING_DELAYED ? st->scale[i]
	              : fp8_current_scale((float)fmt_max(fmt_get(f)), fp8_amax(x, n));
	fp8_cast_stat cs;
	mp_status rc;
	/* no memory for the copy: the cast goes on, its noise not counted */
	const float *before = noise_keep(st, h, i, record, x, x, n, &rc);
	fp8_cast(x, n, f, scale, &cs);
	if (before)
		grad_noise_add(&st->rec[h][i].noise, before, x, n);
	if (!record)
		return;
	slot *r = &st->rec[h][i];
	r->amax = isnan(cs.amax) || isnan(r->amax) ? NAN : fmaxf(r->amax, cs.amax);
	r->scale = scale;
	r->overflow += cs.overflow;
	r->underflow += cs.underflow;
	r->n += cs.n;
}

void fp8_state_begin(fp8_state *st)
{
	memset(st->rec[0], 0, st->count * sizeof(slot));
	memset(st->rec[1], 0, st->count * sizeof(slot));
}

void fp8_state_step_end(fp8_state *st)
{
	st->step_over = st->step_under = st->step_n = 0;
	st->step_noise = st->step_wnoise = (grad_noise){ 0 };
	for (size_t i = 0; i < st->count; i++) {
		const slot *a = &st->rec[0][i], *b = &st->rec[1][i];
		float amax = isnan(a->amax) || isnan(b->amax) ? NAN : fmaxf(a->amax, b->amax);
		size_t n = a->n + b->n;
		fp8_tensor_stat *s = &st->last[i];
		s->amax = amax;
		s->scale = a->n ? a->scale : b->scale;
		if (fp8_state_blocked(st) && b->n && (!a->n || b->amax > a->amax))   /* the block holding the amax */
			s->scale = b->scale;
		s->overflow_frac = n ? (double)(a->overflow + b->overflow) / (double)n : 0;
		s->underflow_frac = n ? (double)(a->underflow + b->underflow) / (double)n : 0;
		st->step_over += a->overflow + b->overflow;
		st->step_under += a->underflow + b->underflow;
		st->step_n += n;
		grad_noise_merge(&st->step_noise, &a->noise);
		grad_noise_merge(&st->step_noise, &b->noise);
		grad_noise_merge(&st->step_wnoise, &a->wnoise);
		grad_noise_merge(&st->step_wnoise, &b->wnoise);
		if (st->scaling == CAST_SCALING_DELAYED && n) {
			float *h = st->hist + i * st->H;
			fp8_history_push(h, st->H, amax);
			float fmax = (float)fmt_max(fmt_get(s->fmt));
			st->scale[i] = fp8_delayed_scale(fmax, fp8_history_amax(h, st->H, st->algo), st->margin,
			                                 st->scale[i]);
		}
	}
	fp8_state_begin(st);
}

fp8_tensor_stat fp8_state_stat(const fp8_state *st, size_t i)
{
	return st->last[i];
}

double fp8_state_overflow_frac(const fp8_state *st)
{
	return st->step_n ? (double)st->step_over / (double)st->step_n : 0;
}

double fp8_state_underflow_frac(const fp8_state *st)
{
	return st->step_n ? (double)st->step_under / (double)st->step_n : 0;
}

bool fp8_state_noise(const fp8_state *st)
{
	return st->o.noise;
}

double fp8_state_grad_noise_ratio(const fp8_state *st)
{
	return grad_noise_ratio(&st->step_noise);
}

float *fp8_state_wgrad_scratch(fp8_state *st, int h, size_t n)
{
	return grow(&st->wbuf[h], &st->wbuf_cap[h], n);
}

void fp8_state_add_wgrad_noise(fp8_state *st, int h, size_t i, const grad_noise *g)
{
	grad_noise_merge(&st->rec[h][i].wnoise, g);
}

double fp8_state_wgrad_noise_ratio(const fp8_state *st)
{
	return grad_noise_ratio(&st->step_wnoise);
}

size_t fp8_state_history_len(const fp8_state *st)
{
	return st->H;
}

float *fp8_state_histories(fp8_state *st)
{
	return st->hist;
}

float *fp8_state_scales(fp8_state *st)
{
	return st->scale;
}
