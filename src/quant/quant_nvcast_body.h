/* The nvfp4 cast that fuses encode and decode (quant_nv_rows, blocks of 16
 * along rows), part of quant/quant_body.h (each of its instances includes
 * this once, after its encoders): each block's scale code as nv_rne_n and
 * nv_sr_n work it out, each element's code as theirs (rne: the count of
 * the decision patterns below |x|; sr: nv_sr_v), and at once that code's
 * value, the block's table row of 8 magnitudes (one register permute)
 * with x's sign, with the statistics quant_bulk_decode_stats gathers. */

/* One block of 16 at in, scale code c: values into out, the counts into u
 * and cnt; b and idx: sr's index of in[0] and those of in[0..VB_W), ct the
 * keyed counters' state. */
VB_INLINE void VB_NAME(nv_row_block)(float *out, const float *in, uint32_t c, const quant_nv_cast *t, bool sr,
                                      uint32_t b, VB_U idx, VB_NAME(ctr) *ct, VB_U k2, VB_U *u, VB_U *cnt)
{
	const VB_U g = VB_NAME(splat)(t->over[c]);
	if (sr)
		VB_NAME(ctr_step)(ct, b, idx, 16 / VB_W);
	#pragma GCC unroll 16
	for (int i = 0; i < 16 / VB_W; i++) {
		VB_U x = VB_NAME(load)(in + VB_W * i), a = x & 0x7fffffffu;
		VB_U k = sr ? VB_NAME(nv_sr_v)(x, VB_NAME(ctr_h1)(ct, i), c, t->sr, k2) & 7u
		            : VB_NAME(count_row)(a, t->g[c]);
		VB_F q = (VB_F)((VB_U)VB_NAME(lookup8)(t->mag[c], k) | (x & 0x80000000u));
		*u -= (VB_U)((VB_F)x != 0.0f) & (VB_U)(q == 0.0f);
		*cnt -= (VB_U)(a > g);
		VB_NAME(store)(out + VB_W * i, (VB_U)q);
	}
}

/* quant_nv_rows over n (a multiple of 16) at in: the next group's scale
 * codes while this one is cast (nv_rne_n); block by block from the first
 * group holding an inf or NaN, up to that block. Returns the elements done. */
VB_INLINE size_t VB_NAME(nv_rows_n)(float *out, const float *in, size_t n, double six_st, const quant_nv_cast *t,
                                     bool sr, quant_fused_stats *cs)
{
	rng_key key = rng_key_for(t->seed, t->index0);
	const VB_U k1f = VB_NAME(splat)(key.k1 ^ (key.k1 >> 16)), k2 = VB_NAME(splat)(key.k2);
	const VB_U lanes = VB_NAME(lanes)();
	VB_NAME(ctr) ct = VB_NAME(ctr_of)(k1f);
	VB_U u = { 0 }, cnt = { 0 };
	uint32_t code[2][VB_W], am[2][VB_W];
	size_t b = 0;
	const size_t grp = 16 * VB_W;
	bool ok = grp <= n && VB_NAME(nv_codes)(code[0], am[0], in, six_st);
	for (int cur = 0; ok; b += grp, cur ^= 1) {
		ok = b + 2 * grp <= n && VB_NAME(nv_codes)(code[cur ^ 1], am[cur ^ 1], in + b + grp, six_st);
		quant_prefetch_ahead(in + b, grp);
		#pragma GCC unroll 16
		for (int j = 0; j < VB_W; j++) {
			size_t o = b + 16 * (size_t)j;
			cs->scales[o / 16] = (uint8_t)code[cur][j];
			memcpy(&cs->amax[o / 16], &am[cur][j], 4);
			uint32_t io = (uint32_t)(t->index0 + o);
			VB_NAME(nv_row_block)(out + o, in + o, code[cur][j], t, sr, io, lanes + io, &ct, k2, &u, &cnt);
		}
	}
	for (; b < n; b += 16) {
		uint32_t c, a;
		if (!VB_NAME(nv_scale)(&c, &a, in + b, six_st))
			break;
		cs->scales[b / 16] = (uint8_t)c;
		memcpy(&cs->amax[b / 16], &a, 4);
		uint32_t io = (uint32_t)(t->index0 + b);
		VB_NAME(nv_row_block)(out + b, in + b, c, t, sr, io, lanes + io, &ct, k2, &u, &cnt);
	}
	cs->under += VB_NAME(lane_sum)(u);
	cs->count += VB_NAME(lane_sum)(cnt);
	return b;
}

/* The entry point (quant_impl.h's signature): one loop per mode. */
static VB_TARGET size_t VB_NAME(nv_rows)(float *out, const float *in, size_t n, double six_st,
                                         const quant_nv_cast *t, quant_fused_stats *cs)
{
	if (t->sr)
		return VB_NAME(nv_rows_n)(out, in, n, six_st, t, true, cs);
	return VB_NAME(nv_rows_n)(out, in, n, six_st, t, false, cs);
}
