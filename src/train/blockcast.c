#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/decode.h"
#include "quant/quant.h"
#include "train/blockcast.h"
#include "train/blockorder.h"
#include "train/fp8scale.h"
#include "train/layers_simd.h"
#include "util/rng.h"

void block_scratch_free(block_scratch *s)
{
	free(s->f);
	free(s->b);
	free(s->d);
	*s = (block_scratch){ 0 };
}

static mp_status scratch_grow(block_scratch *s, size_t n)
{
	if (n <= s->cap)
		return MP_OK;
	float *f = realloc(s->f, n * sizeof *f);
	if (!f)
		return MP_ENOMEM;
	s->f = f;
	uint8_t *b = realloc(s->b, 2 * n);   /* the elements, then one scale byte per block */
	if (!b)
		return MP_ENOMEM;
	s->b = b;
	s->cap = n;
	return MP_OK;
}

/* max |v| over v[0..n); NaN when v holds a NaN or an inf */
__attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic")))
static float amax_finite(const float *v, size_t n)
{
	float m = 0;
	uint32_t bad = 0;
	for (size_t i = 0; i < n; i++) {   /* branch-free, so that it vectorises */
		float a = fabsf(v[i]);
		bad |= (uint32_t)!(a <= 3.4028235e38f);
		m = a > m ? a : m;
	}
	return bad ? NAN : m;
}

/* max(a, b) with a NaN kept */
static float fmaxf_nan(float a, float b)
{
	return isnan(a) || isnan(b) ? NAN : fmaxf(a, b);
}

/* Keeps the largest block amax and its block's multiplier; a NaN (an inf
 * or NaN element) sticks. */
static void note_amax(block_cast_stat *st, float a, float mult)
{
	if (isnan(a) || isnan(st->amax)) {
		st->amax = NAN;
		return;
	}
	if (a > st->amax || st->scale == 0) {
		st->amax = a;
		st->scale = mult;
	}
}

/* Makes v[0..n) NaN, its nonzero elements counted as overflow. */
static void spoil(float *v, size_t n, block_cast_stat *st)
{
	note_amax(st, NAN, 0);
	for (size_t i = 0; i < n; i++) {
		st->overflow += v[i] != 0;
		v[i] = NAN;
	}
}

/* The scales of one chunk of br rows: colmax[j] the largest |x| of column
 * j over the chunk (NaN once an inf or NaN is seen), each block's amax the
 * largest over its bc columns, its scale fp8_current_scale's (rounded down
 * to a power of two with pow2; NaN for a spoilt block) spread over its
 * columns in scol. Returns whether a block is spoilt. */
static bool chunk_scales(const float *chunk, size_t h, size_t cols, const block_cast_cfg *c, float fmax, float *colmax,
                         float *scol, block_cast_stat *st)
{
	for (size_t j = 0; j < cols; j++)
		colmax[j] = 0;
	for (size_t i = 0; i < h; i++)
		for (size_t j = 0; j < cols; j++) {
			float a = fabsf(chunk[i * cols + j]), m = colmax[j];
			bool finite = a <= 3.4028235e38f;   /* false for inf and NaN */
			colmax[j] = m != m ? m : !finite ? NAN : a > m ? a : m;
		}
	bool spoilt = false;
	for (size_t j0 = 0; j0 < cols; j0 += c->bc) {
		size_t e = j0 + c->bc < cols ? j0 + c->bc : cols;
		float a = 0, s = NAN;
		for (size_t j = j0; j < e; j++)
			a = fmaxf_nan(a, colmax[j]);
		if (!isnan(a)) {
			s = fp8_current_scale(fmax, a);
			if (c->pow2) {   /* clear the fraction bits: the power of two at or below s */
				int ex;
				(void)frexpf(s, &ex);
				s = ldexpf(1.0f, ex - 1);
			}
		}
		spoilt |= isnan(a);
		note_amax(st, a, s);
		for (size_t j = j0; j < e; j++)
			scol[j] = s;
	}
	return spoilt;
}

/* CAST_SCALING_BLOCK in place, br rows at a time: the chunk's scales, then
 * the elements scaled, rounded (saturating) and scaled back; bit for bit
 * fp8_cast on each block with its scale, without gathering a block's
 * elements. w holds 2 cols floats. */
__attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic")))
static void cast_fp32_blocks(float *x, size_t rows, size_t cols, const block_cast_cfg *c, float *w,
                             block_cast_stat *st)
{
	const fmt_info *f = fmt_get(c->elem);
	double thr;
	bool tie_over;
	quant_overflow_threshold(f, &thr, &tie_over);
	/* overflow: above thr, or at it when the tie goes up; ay > t2 says both */
	float t2 = tie_over ? nextafterf((float)thr, 0.0f) : (float)thr;   /* 464, 61440: exact */
	/* at or below half the smallest subnormal, rounding to nearest even gives 0 */
	float lo = ldexpf(1.0f, fmt_emin(f) - f->frac_bits - 1);
	fmt_bulk_opts o = { .fmt = c->elem, .mode = FMT_RNE, .saturate = true };
	float *colmax = w, *scol = w + cols;
	for (size_t r0 = 0; r0 < rows; r0 += c->br) {
		size_t h = rows - r0 < c->br ? rows - r0 : c->br;
		float *chunk = x + r0 * cols;
		bool spoilt = chunk_scales(chunk, h, cols, c, (float)fmt_max(f), colmax, scol, st);
		size_t ov = 0, un = 0;
		/* an inf or NaN in a block: the block is NaN (its NaN scale makes it
		 * so below) and its nonzero elements, NaN among them, overflow */
		for (size_t i = 0; spoilt && i < h; i++)
			for (size_t j = 0; j < cols; j++)
				ov += isnan(scol[j]) && chunk[i * cols + j] != 0;
		for (size_t i = 0; i < h; i++) {   /* branch-free, so that it vectorises */
			float *row = chunk + i * cols;
			uint32_t oc = 0, u = 0;
			for (size_t j = 0; j < cols; j++) {
				float v = row[j], y = v * scol[j], ay = fabsf(y);
				oc += (uint32_t)(ay > t2);
				u += (uint32_t)(fabsf(v) > 0.0f) & (uint32_t)(ay <= lo);
				row[j] = y;
			}
			ov += oc;
			un += u;
		}
		/* RNE on the automatic path cannot fail; NaN stays NaN */
		(void)fmt_bulk_quantize(FMT_SIMD_AUTO, &o, chunk, h * cols);
		for (size_t i = 0; i < h; i++) {
			float *row = chunk + i * cols;
			uint32_t u = 0;
			for (size_t j = 0; j < cols; j++) {
				float q = row[j], v = q / scol[j];
				u += (uint32_t)(fabsf(q) > 0.0f) & (uint32_t)(v == 0.0f);
				row[j] = v;
			}
			un += u;
		}
		st->overflow += ov;
		st->underflow += un;
	}
}

/* Per scale code k, the pattern that the |x| counted as overflow lie
 * above: x past t = thr x sval[k] (at t, tie_over) overflows (t is exact:
 * few bits times a scale; a block whose scale is 0 holds zeros only: t =
 * inf). |x| > t is |x| > tf, tf the largest fp32 not above t (at t only
 * when t is one); the elements are finite, so their patterns order as
 * their values. */
static void over_of_codes(uint32_t over[256], const double *sval, double thr, bool tie_over)
{
	for (size_t k = 0; k < 256; k++) {
		double scale = sval[k], t = scale > 0 ? thr * scale : INFINITY;
		float tf = (float)t;
		if ((double)tf > t)
			tf = nextafterf(tf, 0.0f);
		uint32_t g;
		memcpy(&g, &tf, 4);
		over[k] = g - (uint32_t)(tie_over && (double)tf == t && tf > 0);   /* at tf: above tf's pattern - 1 */
	}
}

/* The values a cast's elements and scales decode to: val[e], sval[k] in
 * binary64, fval, fsval their fp32 roundings. */
typedef struct {
	double val[256], sval[256];
	float fval[256], fsval[256];
	float mult[256];       /* the multiplier a block of scale code k notes: 1 / sval[k], 0 for scale 0 */
	uint32_t over[256];    /* over_of_codes */
	size_t nvals;
} decode_vals;

/* The decoded value val[e] x scale, rounded once to fp32, from fp32 steps:
 * an MX scale is a power of two 2^(k - 127), exact in fp32 (2^-127 a
 * subnormal), and val[e] (few bits) is too, so their fp32 product is that
 * rounding. An nvfp4 scale e4m3(k) s_t is not: its 16 values are rounded
 * from binary64 once per block (val[e] x scale is exact there: at most 3
 * bits times 28), and the multiplier is 1. */
static void decode_vals_of(decode_vals *d, const fmt_info *ef, bool nvfp4, float s_t, double thr, bool tie_over)
{
	d->nvals = (size_t)1 << ef->width;
	for (uint32_t bits = 0; bits < d->nvals; bits++) {
		d->val[bits] = fmt_to_double(ef, bits);
		d->fval[bits] = (float)d->val[bits];
	}
	for (uint32_t bits = 0; bits < 256; bits++) {
		d->sval[bits] = nvfp4 ? quant_e4m3_value(bits) * (double)s_t : quant_e8m0_value(bits);
		d->fsval[bits] = (float)d->sval[bits];
		d->mult[bits] = d->sval[bits] > 0 ? (float)(1.0 / d->sval[bits]) : 0.0f;
	}
	over_of_codes(d->over, d->sval, thr, tie_over);
}

static mp_status cast_quant(const float *in, float *buf, size_t nb, size_t len, const block_cast_cfg *c,
                            block_scratch *s, uint8_t *bytes, block_cast_stat *st);

/* Blocks b0..nb of buf (in, copied first when apart; block b the tensor's
 * block base + b) when one holds an inf or NaN: that block (nvfp4: every
 * block, the tensor has no scale) NaN, the others cast one by one as
 * usual. */
static mp_status cast_spoilt(const float *in, float *buf, size_t b0, size_t nb, size_t len, size_t base,
                             const block_cast_cfg *c, bool nvfp4, block_scratch *s, uint8_t *bytes,
                             block_cast_stat *st)
{
	if (in != buf)
		memcpy(buf + b0 * len, in + b0 * len, (nb - b0) * len * sizeof *buf);
	for (size_t b = b0; b < nb; b++) {
		float *v = buf + b * len;
		if (nvfp4 || isnan(amax_finite(v, len))) {
			spoil(v, len, st);
			continue;
		}
		block_cast_cfg one = *c;
		one.seed = rng_mix64(c->seed + base + b);
		mp_status rc = cast_quant(v, v, 1, len, &one, s, bytes, st);
		if (rc != MP_OK)
			return rc;
	}
	return MP_OK;
}

/* Elements per quant_bulk call of cast_run: the chunk's input, codes and
 * output stay in the cache between the encode and the decode. nvfp4 SR
 * builds its tables in each call: a longer chunk. */
static size_t cast_chunk(const block_cast_cfg *c)
{
	return c->kind == CAST_SCALING_NVFP4 && c->mode == FMT_SR ? 65536 : 16384;
}

/* s->d at least need floats; false when it cannot grow. */
static bool grow_d(block_scratch *s, size_t need)
{
	if (need > s->dcap) {
		float *d = realloc(s->d, need * sizeof *d);
		if (!d)
			return false;
		s->d = d;
		s->dcap = need;
	}
	return true;
}

/* What every part of one tensor's MX or nvfp4 cast shares. */
typedef struct {
	quant_opts o;
	bool nvfp4;
	float s_t;   /* nvfp4's tensor scale */
	decode_vals d;
} cast_plan;

static void cast_plan_of(cast_plan *p, const block_cast_cfg *c, size_t len, float s_t)
{
	quant_id id = c->kind == CAST_SCALING_NVFP4 ? QUANT_NVFP4
	              : c->elem == FMT_E5M2 ? QUANT_MXFP8_E5M2 : QUANT_MXFP8_E4M3;
	const quant_info *q = quant_get(id);
	const fmt_info *ef = fmt_get(q->elem);
	p->o = (quant_opts){ .fmt = id, .rule = c->rule, .mode = c->mode, .seed = c->seed, .block = len };
	p->nvfp4 = q->nvfp4;
	p->s_t = s_t;
	double thr;
	bool tie_over;
	quant_overflow_threshold(ef, &thr, &tie_over);
	decode_vals_of(&p->d, ef, q->nvfp4, s_t, thr, tie_over);
}

/* The blocks of in (nb of len; block b the tensor's block base + b) cast
 * into buf (in itself, or apart from it), a chunk of whole blocks at a
 * time: encoded, then decoded with its statistics (or both in one pass). A block's bits do not
 * depend on the chunk (RNE: on nothing else; SR: the element's index in
 * the tensor), except where an MX SR cast meets an inf or NaN (the other
 * blocks then cast one by one, each with a seed of its own): an MX SR cast
 * is one chunk, and one part (block_cast_from). */
static mp_status cast_run(const float *in, float *buf, size_t nb, size_t len, size_t base, const cast_plan *p,
                          const block_cast_cfg *c, block_scratch *s, uint8_t *bytes, block_cast_stat *st)
{
	const decode_vals *d = &p->d;
	size_t n = nb * len, bad;
	uint8_t *elems = bytes, *scales = bytes + n;
	/* MX: the element values and a multiplier per block; nvfp4: a table of
	 * 16 values per scale code */
	size_t ntab = p->nvfp4 ? 256 * d->nvals : d->nvals;
	if (!grow_d(s, 3 * nb + ntab))
		return MP_ENOMEM;
	float *amax = s->d, *mulv = s->d + nb, *tabs = s->d + 3 * nb;
	uint32_t *over = (uint32_t *)(s->d + 2 * nb);   /* float and uint32_t: the same size, malloc'd */
	if (!p->nvfp4)
		memcpy(tabs, d->fval, d->nvals * sizeof *tabs);
	bool have[256] = { false };   /* nvfp4: the scale codes with their row made */
	size_t per = !p->nvfp4 && c->mode == FMT_SR ? nb : cast_chunk(c) / len > 0 ? cast_chunk(c) / len : 1;
	/* MX rne (quant_mx_rne_rows) and nvfp4 in rows of 16 (quant_nv_rows):
	 * encoded and decoded in one pass */
	const quant_mx_tabs t = { .sval = d->fsval, .over = d->over };
	bool fused = !p->nvfp4 && c->mode == FMT_RNE && len % 8 == 0;
	bool nv_fused = p->nvfp4 && len == 16;
	for (size_t b0 = 0; b0 < nb; b0 += per) {
		size_t cb = nb - b0 < per ? nb - b0 : per, e0 = b0 * len, cn = cb * len;
		if (fused || nv_fused) {
			/* encoded and decoded in one pass; nvfp4's other cases (s_t
			 * 0, sr across 2^32) as below */
			quant_fused_stats fs = { .scales = scales + b0, .amax = amax + b0 };
			size_t done;
			mp_status rc = nv_fused ? quant_nv_rows(buf + e0, in + e0, cn, &p->o, p->s_t, base * len + e0, d->over,
			                                        &fs, &done)
			                        : quant_mx_rne_rows(buf + e0, in + e0, cn, &p->o, &t, &fs, &done);
			if (!nv_fused || rc != MP_EUNSUPPORTED) {
				st->underflow += fs.under;
				st->overflow += fs.count;
				for (size_t b = b0; b < b0 + done / len; b++)
					note_amax(st, amax[b], d->mult[scales[b]]);
				/* from the block with the inf or NaN on (nvfp4: not
				 * reached, the tensor's scale saw every element finite) */
				if (rc == MP_EINVAL)
					return cast_spoilt(in, buf, b0 + done / len, nb, len, base, c, nv_fused, s, bytes, st);
				if (rc != MP_OK)
					return rc;
				continue;
			}
		}
		mp_status rc = quant_bulk(FMT_SIMD_AUTO, &p->o, p->s_t, base * len + e0, elems + e0, scales + b0, in + e0,
		                          cn, &bad);
		if (rc == MP_EINVAL && isnan(amax_finite(in + e0, cn)))
			return cast_spoilt(in, buf, b0, nb, len, base, c, false, s, bytes, st);
		if (rc != MP_OK)
			return rc;
		for (size_t b = b0; b < b0 + cb; b++)
			over[b] = d->over[scales[b]];
		quant_decode_stats ds = { .old = in + e0, .over = over + b0, .amax = amax + b0 };
		if (p->nvfp4) {
			/* a row for each scale code the blocks use, once (a small tensor
			 * uses few of the 256) */
			for (size_t b = b0; b < b0 + cb; b++) {
				size_t k = scales[b];
				for (size_t e = 0; e < d->nvals && !have[k]; e++)
					tabs[k * d->nvals + e] = (float)(d->val[e] * d->sval[k]);
				have[k] = true;
			}
			st->underflow += quant_bulk_decode_stats(buf + e0, elems + e0, cn, len, tabs, d->nvals, d->nvals,
			                                         scales + b0, NULL, &ds);
		} else {
			for (size_t b = b0; b < b0 + cb; b++)
				mulv[b] = d->fsval[scales[b]];
			st->underflow += quant_bulk_decode_stats(buf + e0, elems + e0, cn, len, tabs, 0, d->nvals, NULL,
			                                         mulv + b0, &ds);
		}
		st->overflow += ds.count;
		for (size_t b = b0; b < b0 + cb; b++)
			note_amax(st, amax[b], d->mult[scales[b]]);
	}
	return MP_OK;
}

/* CAST_SCALING_MX and _NVFP4 of the whole tensor in (nb blocks of len)
 * into buf (cast_run). */
static mp_status cast_quant(const float *in, float *buf, size_t nb, size_t len, const block_cast_cfg *c,
                            block_scratch *s, uint8_t *bytes, block_cast_stat *st)
{
	float s_t = 1.0f;
	size_t bad;
	if (c->kind == CAST_SCALING_NVFP4 && quant_bulk_tensor_scale(&s_t, in, nb * len, &bad) != MP_OK)
		return cast_spoilt(in, buf, 0, nb, len, 0, c, true, s, bytes, st);
	cast_plan p;
	cast_plan_of(&p, c, len, s_t);
	return cast_run(in, buf, nb, len, 0, &p, c, s, bytes, st);
}

/* Strips t0..t1 of br rows (blocks down the columns) block-ordered into
 * s->f, cast there as one cast_run (block tr * cols + j: strip tr's column
 * j), and back into x. */
static mp_status strips_reordered(const float *src, float *x, size_t rows, size_t cols, size_t t0, size_t t1,
                                  const cast_plan *p, const block_cast_cfg *c, block_scratch *s, block_cast_stat *st)
{
	size_t br = c->br, strip = br * cols;
	for (size_t tr = t0; tr < t1; tr++) {
		size_t r0 = tr * br, h = rows - r0 < br ? rows - r0 : br;
		block_reorder_strip(src + r0 * cols, x + r0 * cols, h, cols, br, s->f + (tr - t0) * strip, false);
	}
	mp_status rc = cast_run(s->f, s->f, (t1 - t0) * cols, br, t0 * cols, p, c, s, s->b, st);
	if (rc != MP_OK)
		return rc;
	for (size_t tr = t0; tr < t1; tr++) {
		size_t r0 = tr * br, h = rows - r0 < br ? rows - r0 : br;
		block_reorder_strip(src + r0 * cols, x + r0 * cols, h, cols, br, s->f + (tr - t0) * strip, true);
	}
	return MP_OK;
}

/* Strip tr's MX rne cast straight from src into x (quant_mx_rne_cols),
 * with the statistics cast_run gathers, its blocks' amax noted in column
 * order; false, nothing written, when a column holds an inf or NaN. */
static bool strip_fused(const float *src, float *x, size_t rows, size_t cols, size_t tr, const cast_plan *p,
                        block_scratch *s, block_cast_stat *st)
{
	size_t r0 = tr * p->o.block, h = rows - r0 < p->o.block ? rows - r0 : p->o.block;
	const quant_mx_tabs t = { .sval = p->d.fsval, .over = p->d.over };
	quant_fused_stats cs = { .scales = s->b, .amax = s->d, .work = (uint32_t *)(s->d + cols) };
	if (quant_mx_rne_cols(x + r0 * cols, src + r0 * cols, h, cols, cols, &p->o, &t, &cs) != MP_OK)
		return false;
	st->underflow += cs.under;
	st->overflow += cs.count;
	for (size_t j = 0; j < cols; j++)
		note_amax(st, cs.amax[j], p->d.mult[cs.scales[j]]);
	return true;
}

/* Blocks down the columns (bc 1). MX rne over whole vectors of columns:
 * strip by strip, encoded and decoded in place of the reordering (a strip
 * with an inf or NaN reordered as below). Otherwise a few strips of br
 * rows at a time (a chunk's worth, cast_chunk): block-ordered, cast, and
 * back into x, in the cache. Either way the blocks and their order (and
 * so the bits) are one cast's of the whole reordered tensor. Not for an
 * MX SR cast (cast_run); returns MP_EUNSUPPORTED, having written nothing,
 * when nvfp4's tensor has an inf or NaN (the whole tensor's cast spoils
 * it). */
static mp_status cast_strips(const float *src, float *x, size_t rows, size_t cols, const block_cast_cfg *c,
                             block_scratch *s, block_cast_stat *st)
{
	float s_t = 1.0f;
	size_t bad, br = c->br, strip = br * cols, g = cast_chunk(c) / strip > 0 ? cast_chunk(c) / strip : 1;
	/* the padding's zeros leave the amax, and so s_t, as it is */
	if (c->kind == CAST_SCALING_NVFP4 && quant_bulk_tensor_scale(&s_t, src, rows * cols, &bad) != MP_OK)
		return MP_EUNSUPPORTED;
	/* what cast_run takes, and strip_fused (4 cols), before x is written */
	if (!grow_d(s, 3 * g * cols + 256 * 16 > 4 * cols ? 3 * g * cols + 256 * 16 : 4 * cols))
		return MP_ENOMEM;
	cast_plan p;
	cast_plan_of(&p, c, br, s_t);
	size_t nr = (rows + br - 1) / br;
	bool fused = !p.nvfp4 && c->mode == FMT_RNE && cols % 8 == 0;
	for (size_t t0 = 0; t0 < nr; t0 += fused ? 1 : g) {
		if (fused && strip_fused(src, x, rows, cols, t0, &p, s, st))
			continue;
		size_t t1 = fused ? t0 + 1 : t0 + g < nr ? t0 + g : nr;
		mp_status rc = strips_reordered(src, x, rows, cols, t0, t1, &p, c, s, st);
		if (rc != MP_OK)
			return rc;
	}
	return MP_OK;
}

mp_status block_cast(float *x, size_t rows, size_t cols, const block_cast_cfg *c, block_scratch *s,
                     block_cast_stat *st)
{
	return block_cast_from(x, x, rows, cols, c, s, st);
}

mp_status block_cast_from(const float *src, float *x, size_t rows, size_t cols, const block_cast_cfg *c,
                          block_scratch *s, block_cast_stat *st)
{
	*st = (block_cast_stat){ .n = rows * cols };
	size_t len = c->br * c->bc;
	if (c->br == 0 || c->bc == 0 || len > QUANT_BLOCK_MAX ||
	    (c->kind != CAST_SCALING_BLOCK && c->kind != CAST_SCALING_MX && c->kind != CAST_SCALING_NVFP4) ||
	    (c->kind == CAST_SCALING_NVFP4) != (c->elem == FMT_E2M1) ||
	    (c->kind != CAST_SCALING_NVFP4 && c->elem != FMT_E4M3 && c->elem != FMT_E5M2))
		return MP_EINVAL;
	if (rows == 0 || cols == 0)
		return MP_OK;
	mp_status rc;
	if (c->kind == CAST_SCALING_BLOCK) {   /* in place, whatever the block's shape */
		if ((rc = scratch_grow(s, 2 * cols)) != MP_OK)
			return rc;
		if (src != x)
			memcpy(x, src, rows * cols * sizeof *x);
		cast_fp32_blocks(x, rows, cols, c, s->f, st);
		return MP_OK;
	}
	size_t nb = ((rows + c->br - 1) / c->br) * ((cols + c->bc - 1) / c->bc);
	if ((rc = scratch_grow(s, nb * len)) != MP_OK)
		return rc;
	/* blocks along whole rows are x's own order: cast in place */
	bool in_place = c->br == 1 && cols % c->bc == 0;
	if (in_place)   /* decoded from src into x */
		return cast_quant(src, x, nb, len, c, s, s->b, st);
	if (c->bc == 1 && (c->kind == CAST_SCALING_NVFP4 || c->mode == FMT_RNE) &&
	    (rc = cast_strips(src, x, rows, cols, c, s, st)) != MP_EUNSUPPORTED)
		return rc;
	float *buf = s->f;
	block_reorder(src, x, rows, cols, c->br, c->bc, buf, false);
	if ((rc = cast_quant(buf, buf, nb, len, c, s, s->b, st)) != MP_OK)
		return rc;
	block_reorder(src, x, rows, cols, c->br, c->bc, buf, true);
	return MP_OK;
}

/* Eight lanes of floats at any alignment (two SSE registers where AVX is
 * not enabled): the elementwise steps of the rotation, each lane's bits as
 * the scalar code's. */
typedef float v8f __attribute__((vector_size(32), aligned(4)));

/* The 16 values v[0..16) of one column (or of 8 columns, T v8f) through
 * the signs, v H16 = H16 v (H16 is symmetric: four butterfly stages) and
 * the 1/4. */
#define RHT16(T, v, signs)                                                              \
	do {                                                                            \
		/* unrolled, so that v lives in registers */                            \
		_Pragma("GCC unroll 16") for (int i_ = 0; i_ < 16; i_++)                \
			if ((signs) >> i_ & 1)                                          \
				v[i_] = -v[i_];                                         \
		_Pragma("GCC unroll 4") for (int h_ = 1; h_ < 16; h_ *= 2)              \
			_Pragma("GCC unroll 8") for (int i_ = 0; i_ < 16; i_ += 2 * h_) \
				_Pragma("GCC unroll 8") for (int k_ = i_; k_ < i_ + h_; k_++) { \
					T u_ = v[k_], w_ = v[k_ + h_];                  \
					v[k_] = u_ + w_;                                \
					v[k_ + h_] = u_ - w_;                           \
				}                                                       \
		_Pragma("GCC unroll 16") for (int i_ = 0; i_ < 16; i_++)                \
			v[i_] *= 0.25f;                                                 \
	} while (0)

void block_rht16_rows(float *x, size_t rows, size_t cols, uint16_t signs)
{
	block_rht16_rows_from(x, x, rows, cols, signs);
}

/* block_rht16_rows_from's body, inlined into one instance per path below. */
static inline __attribute__((always_inline)) void rht16_rows(const float *src, float *x, size_t rows, size_t cols,
                                                            uint16_t signs)
{
	size_t r0 = 0;
	for (; r0 + 16 <= rows; r0 += 16) {
		const float *in = src + r0 * cols;
		float *blk = x + r0 * cols;
		size_t j = 0;
		for (; j + 8 <= cols; j += 8) {   /* eight columns at a time, in registers */
			v8f v[16];
			_Pragma("GCC unroll 16") for (int i = 0; i < 16; i++)
				v[i] = *(const v8f *)(in + (size_t)i * cols + j);
			RHT16(v8f, v, signs);
			_Pragma("GCC unroll 16") for (int i = 0; i < 16; i++)
				*(v8f *)(blk + (size_t)i * cols + j) = v[i];
		}
		for (; j < cols; j++) {
			float v[16];
			for (int i = 0; i < 16; i++)
				v[i] = in[(size_t)i * cols + j];
			RHT16(float, v, signs);
			for (int i = 0; i < 16; i++)
				blk[(size_t)i * cols + j] = v[i];
		}
	}
	if (src != x && r0 < rows)
		memcpy(x + r0 * cols, src + r0 * cols, (rows - r0) * cols * sizeof *x);
}

static void rht16_rows_portable(const float *src, float *x, size_t rows, size_t cols, uint16_t signs)
{
	rht16_rows(src, x, rows, cols, signs);
}

#if defined(__x86_64__)
/* The same adds, subtractions and multiplications in 8-lane registers
 * (no FMA enabled, so nothing to contract into): the same bits, twice the
 * lanes per instruction. */
__attribute__((target("avx2"))) static void rht16_rows_avx2(const float *src, float *x, size_t rows, size_t cols,
                                                           uint16_t signs)
{
	rht16_rows(src, x, rows, cols, signs);
}
#endif

void block_rht16_rows_from(const float *src, float *x, size_t rows, size_t cols, uint16_t signs)
{
#if defined(__x86_64__)
	if (layers_path_best() != LAYERS_PORTABLE) {
		rht16_rows_avx2(src, x, rows, cols, signs);
		return;
	}
#endif
	rht16_rows_portable(src, x, rows, cols, signs);
}

void block_rht16_rows_back(float *x, size_t rows, size_t cols, uint16_t signs)
{
	block_rht16_rows(x, rows, cols, 0);
	for (size_t r0 = 0; r0 + 16 <= rows; r0 += 16)
		for (int i = 0; i < 16; i++)
			if (signs >> i & 1)
				for (size_t j = 0; j < cols; j++)
					x[(r0 + (size_t)i) * cols + j] = -x[(r0 + (size_t)i) * cols + j];
}
