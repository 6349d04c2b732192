/* The decode kernels of quant_impl.h and the MX rne casts that fuse
 * encode and decode (blocks along rows, and down columns), part of
 * quant/quant_body.h (each of its instances includes this once, after its
 * encoders). */

/* How decode_n looks codes up. In general a gather; on AVX2, rows of 16
 * entries by two register permutes, and a table of 256 that is a sign and
 * magnitude float format's (fp8) by arithmetic: a normal magnitude's bits
 * shifted into an fp32 pattern and rebiased by an integer add, a
 * subnormal one's (below 2^M, M fraction bits) converted and scaled by
 * its unit (exact: at most M bits; no fp32 subnormal is formed, whose
 * arithmetic takes an assist on x86 cores), then the sign; the top (at
 * most 4) magnitudes of either sign (inf, NaN) from a register of 8. The
 * arithmetic is used only after it gave every one of the 256 entries'
 * patterns (VB_NAME(dplan_of)), so the bits are the table's. */
typedef struct {
	int how;           /* 0 gather, 1 rows of 16, 2 arithmetic */
	uint32_t sh, lim;  /* arithmetic: mag << sh rebiased by rb; magnitudes >= lim from sp */
	uint32_t rb, sub;  /* (127 - bias) << 23; magnitudes below sub (2^M) are subnormal, mag x unit */
	float unit;
	uint32_t sp[8];    /* the patterns of codes lim + j (sp[j]) and 0x80 + lim + j (sp[4 + j]) */
} VB_NAME(dplan);

/* The formula's pattern for code c, the top magnitudes not set apart. */
static inline uint32_t VB_NAME(dform1)(const VB_NAME(dplan) *p, uint32_t c)
{
	uint32_t mag = c & 0x7fu, sign = (c & 0x80u) << 24, r = (mag << p->sh) + p->rb;
	if (mag < p->sub) {
		float f = (float)mag * p->unit;
		memcpy(&r, &f, 4);
	}
	return r | sign;
}

/* The plan's pattern for code c, as dlook gives it one lane at a time. */
static inline uint32_t VB_NAME(darith1)(const VB_NAME(dplan) *p, uint32_t c)
{
	uint32_t mag = c & 0x7fu;
	return mag >= p->lim ? p->sp[((mag - p->lim) + ((c >> 5) & 4u)) & 7u] : VB_NAME(dform1)(p, c);
}

static inline uint32_t VB_NAME(tbits)(const float *tab, uint32_t c)
{
	uint32_t u;
	memcpy(&u, &tab[c], 4);
	return u;
}

/* The arithmetic for tab (256 entries) with M fraction bits, if it gives
 * every entry. */
static inline bool VB_NAME(dplan_try)(VB_NAME(dplan) *p, const float *tab, int M)
{
	int k;
	float one = tab[1u << M];   /* exponent field 1, fraction 0: 2^(1 - bias) */
	if (!(one > 0.0f) || frexpf(one, &k) != 0.5f)
		return false;
	int bias = 2 - k;
	if (127 - bias < -126 || 127 - bias > 127)
		return false;
	p->sh = 23u - (uint32_t)M;
	p->rb = (uint32_t)(127 - bias) << 23;
	p->sub = 1u << M;
	p->unit = ldexpf(1.0f, 1 - bias - M);
	/* the top magnitudes the formula misses (inf, NaN), at most 4 */
	uint32_t lim = 0x80u;
	while (lim > 0x7cu && VB_NAME(dform1)(p, lim - 1u) != VB_NAME(tbits)(tab, lim - 1u))
		lim--;
	p->lim = lim;
	for (uint32_t j = 0; j < 4; j++) {
		p->sp[j] = lim + j < 0x80u ? VB_NAME(tbits)(tab, lim + j) : 0u;
		p->sp[4 + j] = lim + j < 0x80u ? VB_NAME(tbits)(tab, 0x80u + lim + j) : 0u;
	}
	for (uint32_t c = 0; c < 256; c++)
		if (VB_NAME(darith1)(p, c) != VB_NAME(tbits)(tab, c))
			return false;
	return true;
}

static inline VB_NAME(dplan) VB_NAME(dplan_of)(const float *tab, size_t stride, size_t nvals)
{
	VB_NAME(dplan) p = { .how = 0 };
#if VB_AVX2
	if (nvals == 16) {
		p.how = 1;
	} else if (nvals == 256 && stride == 0) {
		/* the last table's plan, per thread: a cast asks once per chunk
		 * or strip, and checking the 256 entries costs about as much as
		 * decoding a chunk */
		static _Thread_local struct {
			float tab[256];
			VB_NAME(dplan) p;
			bool set;
		} memo;
		if (memo.set && !memcmp(memo.tab, tab, sizeof memo.tab))
			return memo.p;
		for (int M = 1; M <= 6 && !p.how; M++)
			if (VB_NAME(dplan_try)(&p, tab, M))
				p.how = 2;
		memcpy(memo.tab, tab, sizeof memo.tab);
		memo.p = p;
		memo.set = true;
	}
#else
	(void)tab;
	(void)stride;
	(void)nvals;
#endif
	return p;
}

/* The table values of VB_W codes c under the plan (t: the block's row);
 * how is p->how, a constant where decode_n is inlined. */
VB_INLINE VB_F VB_NAME(dlook)(const VB_NAME(dplan) *p, int how, const float *t, VB_U c)
{
#if VB_AVX2
	if (how == 1) {
		__m256i ci = (__m256i)c;
		__m256 lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(t), ci);
		__m256 hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(t + 8), ci);
		return (VB_F)VB_NAME(sel)((VB_U)((c & 8u) != 0u), (VB_U)hi, (VB_U)lo);
	}
	if (how == 2) {
		VB_U mag = c & 0x7fu, sign = (c & 0x80u) << 24;
		VB_U sub = (VB_U)(VB_NAME(u2f)(mag) * p->unit);
		VB_U f = VB_NAME(sel)((VB_U)((VB_I)mag < (int32_t)p->sub), sub, (mag << p->sh) + p->rb);
		VB_U k = (mag - p->lim) + ((c >> 5) & 4u);
		VB_U s = (VB_U)_mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)p->sp), (__m256i)k);
		return (VB_F)VB_NAME(sel)(VB_NAME(ge)(mag, VB_NAME(splat)(p->lim)), s, f | sign);
	}
#else
	(void)p;
	(void)how;
#endif
	return VB_NAME(gather)(t, c);
}

/* The sum of v's lanes (counts of at most 2^32 each). */
VB_INLINE size_t VB_NAME(lane_sum)(VB_U v)
{
	uint32_t l[VB_W];
	memcpy(l, &v, sizeof l);
	size_t s = 0;
	for (int j = 0; j < VB_W; j++)
		s += l[j];
	return s;
}

/* quant_bulk_decode and quant_bulk_decode_stats (quant.h; ds NULL: the
 * first) under plan pl, how its pl->how. The amax and the count compare
 * patterns: |old| is finite, so its pattern orders as its value. */
VB_INLINE size_t VB_NAME(decode_n)(float *v, const uint8_t *elems, size_t n, size_t bs, const float *tab,
                                    size_t stride, const VB_NAME(dplan) *pl, int how, const uint8_t *rows,
                                    const float *mul, quant_decode_stats *ds)
{
	VB_U u = { 0 }, cnt = { 0 };
	size_t under = 0, count = 0;
	const float *old = ds ? ds->old : v;
	for (size_t b = 0, k = 0; b < n; b += bs, k++) {
		size_t len = n - b < bs ? n - b : bs, i = 0;
		const float *t = tab + (rows ? rows[k] : k) * stride;
		float m = mul ? mul[k] : 1.0f;
		uint32_t g = ds ? ds->over[k] : UINT32_MAX;
		VB_U mx = { 0 };
		for (; i + VB_W <= len; i += VB_W) {
			VB_F q = VB_NAME(dlook)(pl, how, t, VB_NAME(load_elems)(elems + b + i, 1)) * m;
			VB_U ob = VB_NAME(load)(old + b + i), a = ob & 0x7fffffffu;
			u -= (VB_U)((VB_F)ob != 0.0f) & (VB_U)(q == 0.0f);
			mx = VB_NAME(maxu)(mx, a);
			cnt -= (VB_U)(a > g);
			VB_NAME(store)(v + b + i, (VB_U)q);
		}
		uint32_t am = VB_NAME(hmax)(mx);
		for (; i < len; i++) {
			float q = t[elems[b + i]] * m, o = old[b + i];
			uint32_t a;
			memcpy(&a, &o, 4);
			a &= 0x7fffffffu;
			am = a > am ? a : am;
			count += a > g;
			under += (o != 0) & (q == 0.0f);
			v[b + i] = q;
		}
		if (ds)
			memcpy(&ds->amax[k], &am, 4);
	}
	under += VB_NAME(lane_sum)(u);
	if (ds)
		ds->count += count + VB_NAME(lane_sum)(cnt);
	return under;
}

/* The entry points. */
static VB_TARGET size_t VB_NAME(decode)(float *v, const uint8_t *elems, size_t n, size_t bs, const float *tab,
                                        size_t stride, size_t nvals, const uint8_t *rows, const float *mul,
                                        quant_decode_stats *ds)
{
	/* one loop per plan, so that no lane test is left in it */
	const VB_NAME(dplan) pl = VB_NAME(dplan_of)(tab, stride, nvals);
	switch (pl.how) {
	case 1:  return VB_NAME(decode_n)(v, elems, n, bs, tab, stride, &pl, 1, rows, mul, ds);
	case 2:  return VB_NAME(decode_n)(v, elems, n, bs, tab, stride, &pl, 2, rows, mul, ds);
	default: return VB_NAME(decode_n)(v, elems, n, bs, tab, stride, &pl, 0, rows, mul, ds);
	}
}


/* MX rne of VB_W lanes x with the scale's inverse mul, as the fp32
 * pattern of the element's value rather than its code (mx_rne_v's steps):
 * at or above the min normal the carry into the kept bits and the
 * discarded ones cleared, below it the add of magic and its subtraction
 * (exact: the two are within a factor of two, Sterbenz), then the
 * saturation at the largest value and p's sign. Each code's value is an
 * fp32 exactly, so this is the pattern of the code's value, without a
 * table and without an fp32 subnormal on the way (an arithmetic assist
 * on x86 cores). */
VB_INLINE VB_U VB_NAME(mx_rne_q)(VB_U x, VB_F mul, const VB_NAME(menc) *e)
{
	VB_U p = (VB_U)((VB_F)x * mul), a = p & 0x7fffffffu;
	VB_U nrm = (a + e->half_m1 + ((a >> e->shift) & 1u)) & e->kept;
	VB_U sub = (VB_U)(((VB_F)a + (VB_F)e->magic) - (VB_F)e->magic);
	VB_U c = VB_NAME(sel)((VB_U)((VB_I)a < (VB_I)e->min_normal), sub, nrm);
	return VB_NAME(minu)(c, e->max_val) | (p & 0x80000000u);
}

/* quant_mx_rne_cols's values and counts, the columns' amax already in
 * cs->amax: the columns' scales (as mx_scales), then row by row, in
 * memory order, each lane's value (mx_rne_q) multiplied by its column's
 * scale value. */
VB_INLINE void VB_NAME(mx_cols_n)(float *out, const float *in, size_t h, size_t cols, size_t ld,
                                   const quant_mx_rule *r, const VB_NAME(menc) *e, const quant_mx_tabs *t,
                                   quant_fused_stats *cs)
{
	uint32_t *mulw = cs->work, *svw = cs->work + cols, *gw = cs->work + 2 * cols;
	for (size_t j = 0; j < cols; j += VB_W) {
		VB_U k = VB_NAME(mx_exp_v)(VB_NAME(load)(cs->amax + j), r), sc = k + 127u;
		VB_NAME(store_elems)(cs->scales + j, 1, sc);
		VB_NAME(store)(mulw + j, (127u - k) << 23);
		for (int l = 0; l < VB_W; l++) {
			memcpy(&svw[j + (size_t)l], &t->sval[sc[l]], 4);
			gw[j + (size_t)l] = t->over[sc[l]];
		}
	}
	VB_U u = { 0 }, cnt = { 0 };
	for (size_t i = 0; i < h; i++) {
		const float *row = in + i * ld;
		float *o = out + i * ld;
		for (size_t j = 0; j < cols; j += VB_W) {
			VB_U x = VB_NAME(load)(row + j), a = x & 0x7fffffffu;
			VB_F q = (VB_F)VB_NAME(mx_rne_q)(x, (VB_F)VB_NAME(load)(mulw + j), e) * (VB_F)VB_NAME(load)(svw + j);
			u -= (VB_U)((VB_F)x != 0.0f) & (VB_U)(q == 0.0f);
			cnt -= (VB_U)(a > VB_NAME(load)(gw + j));
			VB_NAME(store)(o + j, (VB_U)q);
		}
	}
	cs->under += VB_NAME(lane_sum)(u);
	cs->count += VB_NAME(lane_sum)(cnt);
}

/* quant_mx_rne_cols (cols a multiple of VB_W): every column's amax first,
 * row by row, so that nothing is written when one holds an inf or NaN (in
 * may be out). */
static VB_TARGET bool VB_NAME(mx_rne_cols)(float *out, const float *in, size_t h, size_t cols, size_t ld,
                                           const quant_mx_rule *rule, const quant_elem_enc *enc,
                                           const quant_mx_tabs *t, quant_fused_stats *cs)
{
	for (size_t j = 0; j < cols; j += VB_W)
		VB_NAME(store)(cs->amax + j, VB_NAME(load)(in + j) & 0x7fffffffu);
	for (size_t i = 1; i < h; i++)
		for (size_t j = 0; j < cols; j += VB_W)
			VB_NAME(store)(cs->amax + j, VB_NAME(maxu)(VB_NAME(load)(cs->amax + j),
			                                           VB_NAME(load)(in + i * ld + j) & 0x7fffffffu));
	VB_U bad = { 0 };
	for (size_t j = 0; j < cols; j += VB_W)
		bad |= (VB_U)((VB_I)VB_NAME(load)(cs->amax + j) >= 0x7f800000);
	if (VB_NAME(any)(bad))
		return false;
	const quant_mx_rule rl = *rule;
	VB_ELEM_CONST(enc, ec, {
		const VB_NAME(menc) em = VB_NAME(menc_of)(&ec);
		VB_NAME(mx_cols_n)(out, in, h, cols, ld, &rl, &em, t, cs);
	});
	return true;
}

/* One MX block of bs at in (scale code sc, inverse mul) as mx_cols_n does
 * a column: values scaled, the counts into u and cnt. */
VB_INLINE void VB_NAME(mx_row_block)(float *out, const float *in, size_t bs, VB_F mul, uint32_t sc,
                                      const VB_NAME(menc) *e, const quant_mx_tabs *t, VB_U *u, VB_U *cnt)
{
	uint32_t svb;
	memcpy(&svb, &t->sval[sc], 4);
	const VB_F sv = (VB_F)VB_NAME(splat)(svb);
	const VB_U g = VB_NAME(splat)(t->over[sc]);
	for (size_t i = 0; i < bs; i += VB_W) {
		VB_U x = VB_NAME(load)(in + i), a = x & 0x7fffffffu;
		VB_F q = (VB_F)VB_NAME(mx_rne_q)(x, mul, e) * sv;
		*u -= (VB_U)((VB_F)x != 0.0f) & (VB_U)(q == 0.0f);
		*cnt -= (VB_U)(a > g);
		VB_NAME(store)(out + i, (VB_U)q);
	}
}

/* quant_mx_rne_rows: VB_W blocks' scales at once, then their elements
 * (mx_rne_n's order); block by block from the first group holding an inf
 * or NaN, up to that block. */
VB_INLINE size_t VB_NAME(mx_rows_n)(float *out, const float *in, size_t n, size_t bs, const quant_mx_rule *r,
                                     const VB_NAME(menc) *e, const quant_mx_tabs *t, quant_fused_stats *cs)
{
	VB_U u = { 0 }, cnt = { 0 };
	uint32_t mul[VB_W];
	size_t b = 0, k = 0;
	for (; b + VB_W * bs <= n && VB_NAME(mx_scales)(cs->scales + k, mul, cs->amax + k, in + b, bs, r);
	     b += VB_W * bs, k += VB_W) {
		quant_prefetch_ahead(in + b, VB_W * bs);
		for (int j = 0; j < VB_W; j++)
			VB_NAME(mx_row_block)(out + b + j * bs, in + b + j * bs, bs, (VB_F)VB_NAME(splat)(mul[j]),
			                      cs->scales[k + j], e, t, &u, &cnt);
	}
	for (; b < n; b += bs, k++) {
		VB_F m;
		if (!VB_NAME(mx_scale)(cs->scales + k, &m, cs->amax + k, in + b, bs, r))
			break;
		VB_NAME(mx_row_block)(out + b, in + b, bs, m, cs->scales[k], e, t, &u, &cnt);
	}
	cs->under += VB_NAME(lane_sum)(u);
	cs->count += VB_NAME(lane_sum)(cnt);
	return b;
}

static VB_TARGET size_t VB_NAME(mx_rne_rows)(float *out, const float *in, size_t n, size_t bs,
                                             const quant_mx_rule *rule, const quant_elem_enc *enc,
                                             const quant_mx_tabs *t, quant_fused_stats *cs)
{
	const quant_mx_rule rl = *rule;
	if (bs == 32) {   /* OCP's block of 32 as a constant, and its elements' shifts (mx_rne) */
		VB_ELEM_CONST(enc, ec, {
			const VB_NAME(menc) em = VB_NAME(menc_of)(&ec);
			return VB_NAME(mx_rows_n)(out, in, n, 32, &rl, &em, t, cs);
		});
	}
	const VB_NAME(menc) em = VB_NAME(menc_of)(enc);
	return VB_NAME(mx_rows_n)(out, in, n, bs, &rl, &em, t, cs);
}
