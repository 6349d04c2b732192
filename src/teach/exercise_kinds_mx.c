/* Exercise kinds about block-scaled formats (lesson low-precision): the MX
 * shared scale under OCP's floor rule and the ceil rule (mx.1), decoding an
 * NVFP4 element (mx.2), bits per parameter with scales (mx.3) and the
 * element the floor rule saturates (mx.4). Every answer comes from quant/
 * (quant_run, quant_decode, quant_bits_per_elem) and fmt/. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/decode.h"
#include "fmt/format.h"
#include "fmt/parse.h"
#include "quant/quant.h"
#include "teach/exercise.h"
#include "teach/exercise_solve.h"
#include "util/strbuf.h"

#define MX_BLOCK_MAX 32

/* ---- shared helpers ---------------------------------------------------------- */

/* A block given as one parameter word, comma-separated ("7,0.3,-1.2,2.5"):
 * exact values into xs (initialised here; the caller clears n of them). */
static bool block_param(solve_ctx *c, const char *name, fmt_num *xs, size_t *n)
{
	const char *t = ex_variant_get(c->ex, c->v, name);
	*n = 0;
	if (!t)
		return exs_fail(c, "parameter %s is missing", name);
	char buf[EX_VALUE_MAX];
	snprintf(buf, sizeof buf, "%s", t);
	char *save = NULL;
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (*n == MX_BLOCK_MAX)
			return exs_fail(c, "parameter %s holds more than %d values", name, MX_BLOCK_MAX);
		char perr[160];
		fmt_num_init(&xs[*n]);
		(*n)++;
		if (fmt_parse_number(&xs[*n - 1], w, perr, sizeof perr) != MP_OK)
			return exs_fail(c, "parameter %s, value %zu '%s': %s", name, *n, w, perr);
		if (xs[*n - 1].kind != NUM_FINITE)
			return exs_fail(c, "parameter %s, value %zu '%s' must be finite", name, *n, w);
	}
	if (*n == 0)
		return exs_fail(c, "parameter %s holds no value", name);
	return true;
}

static void block_clear(fmt_num *xs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fmt_num_clear(&xs[i]);
}

/* The block format named by parameter name (def when absent); MX only when
 * mx_only. NULL with c->err set. */
static const quant_info *quant_param(solve_ctx *c, const char *name, quant_id def, bool mx_only)
{
	const char *t = ex_variant_get(c->ex, c->v, name);
	const quant_info *q = t ? quant_find(t) : quant_get(def);
	if (!q) {
		exs_fail(c, "parameter %s = '%s' is not a block format (%s)", name, t, quant_known_names());
		return NULL;
	}
	if (mx_only && q->nvfp4) {
		exs_fail(c, "parameter %s: %s has no floor or ceil rule; use an MX format", name, q->name);
		return NULL;
	}
	return q;
}

/* The whole block [0, n) as one block under rule. */
static bool quantize(solve_ctx *c, const quant_info *q, quant_rule rule, const fmt_num *xs, size_t n, quant_result *r)
{
	quant_opts o = { .fmt = q->id, .rule = rule, .mode = FMT_RNE, .block = n };
	memset(r, 0, sizeof *r);
	char err[256];
	if (quant_run(&o, xs, n, r, err, sizeof err) != MP_OK) {
		quant_result_free(r);
		return exs_fail(c, "cannot quantize the block: %s", err);
	}
	return true;
}

static uint32_t expected_bits(solve_ctx *c, const char *field)
{
	int i = exs_fidx(c, field);
	return i < 0 ? 0 : c->sol->expect[i].bits;
}

/* A wrong bit pattern on field (skipped when it is the answer). The message
 * is the tag too, so it is a literal with the variant's numbers after it. */
#define MISTAKE_BITS(c, field, wrong, ...)                                          \
	do {                                                                         \
		uint32_t w_ = (wrong);                                               \
		if (exs_fidx((c), (field)) >= 0 && w_ != expected_bits((c), (field))) { \
			ex_mistake *m_ = exs_mistake((c), (field), __VA_ARGS__);     \
			if (m_) {                                                    \
				m_->value.type = EX_BITS;                            \
				m_->value.bits = w_;                                 \
			}                                                            \
		}                                                                    \
	} while (0)

/* V rounded to nearest even with the element's significand width but no
 * largest value: what a student gets who forgets the clip. */
static double round_unclipped(double y, int frac_bits)
{
	if (y == 0 || !isfinite(y))
		return y;
	int e = exs_floor_log2(y);
	double u = ldexp(1, e - frac_bits);
	return nearbyint(y / u) * u;
}

/* ---- kind: mx-scale (mx.1) ------------------------------------------------------ */

typedef struct {
	quant_result r;
	int exp;
	uint32_t sbits, ebits;
	double evalue;   /* the element alone: V_i / X rounded */
	double value;    /* element x X */
} mx_rule_answer;

static bool mx_rule(solve_ctx *c, const quant_info *q, quant_rule rule, const fmt_num *xs, size_t n, size_t i,
                    mx_rule_answer *a)
{
	if (!quantize(c, q, rule, xs, n, &a->r))
		return false;
	const quant_block *b = &a->r.blocks[0];
	a->exp = b->scale_exp;
	a->sbits = b->scale_bits;
	a->ebits = a->r.elems[i].bits;
	a->value = a->r.elems[i].value;
	a->evalue = fmt_to_double(fmt_get(q->elem), a->ebits);
	return true;
}

static void mx_scale_mistakes(solve_ctx *c, const quant_info *q, const mx_rule_answer *oc, const mx_rule_answer *ce,
                              double vi, size_t i, int fl)
{
	const fmt_info *ef = fmt_get(q->elem);
	int emax = q->emax_elem;
	exs_mistake_num(c, "ocp_exponent", ce->exp, "That is the ceil rule's exponent, ceil(log2(amax / max)); OCP's rule "
	                                        "is floor(log2 amax) - emax_elem.");
	exs_mistake_num(c, "ocp_exponent", fl, "You left out emax_elem: OCP's exponent is floor(log2 amax) - emax_elem "
	                                   "= %d - %d.",
	            fl, emax);
	exs_mistake_num(c, "ocp_exponent", fl - emax - 1, "Off by one in emax_elem: %s's largest value %s has exponent "
	                                              "%d, so emax_elem = %d.",
	            ef->name, exs_g(fmt_max(ef)), emax, emax);
	exs_mistake_num(c, "ocp_exponent", fl - emax + 1, "Off by one in emax_elem: %s's largest value %s has exponent "
	                                              "%d, so emax_elem = %d.",
	            ef->name, exs_g(fmt_max(ef)), emax, emax);
	exs_mistake_num(c, "ceil_exponent", oc->exp, "That is OCP's floor rule, floor(log2 amax) - emax_elem; the ceil "
	                                         "rule is ceil(log2(amax / max)).");
	exs_mistake_num(c, "ceil_exponent", ce->exp - 1, "One binade too low: 2^%d is below amax / %s, so the amax would "
	                                             "saturate. Take the ceiling of log2(amax / max).",
	            ce->exp - 1, exs_g(fmt_max(ef)));
	exs_mistake_num(c, "ceil_exponent", ce->exp + 1, "One binade too high: 2^%d already brings amax under %s. Take "
	                                             "the ceiling of log2(amax / max), not one more.",
	            ce->exp, exs_g(fmt_max(ef)));
	MISTAKE_BITS(c, "ocp_scale_bits", (uint32_t)oc->exp & 0xffu,
	             "That is the exponent itself; the e8m0 byte is the exponent plus the bias 127.");
	MISTAKE_BITS(c, "ceil_scale_bits", (uint32_t)ce->exp & 0xffu,
	             "That is the exponent itself; the e8m0 byte is the exponent plus the bias 127.");
	MISTAKE_BITS(c, "ocp_scale_bits", ce->sbits, "That is the ceil rule's scale byte; OCP's rule floors.");
	MISTAKE_BITS(c, "ceil_scale_bits", oc->sbits, "That is OCP's floor-rule scale byte; the ceil rule rounds up.");
	MISTAKE_BITS(c, "ocp_scale_bits", (uint32_t)(oc->exp + 126) & 0xffu, "Off by one in the bias: e8m0's bias is 127.");
	MISTAKE_BITS(c, "ocp_scale_bits", (uint32_t)(oc->exp + 128) & 0xffu, "Off by one in the bias: e8m0's bias is 127.");
	MISTAKE_BITS(c, "ocp_elem_bits", ce->ebits, "That is the element under the ceil rule's scale 2^%d; OCP's scale is "
	                                        "2^%d.",
	             ce->exp, oc->exp);
	MISTAKE_BITS(c, "ceil_elem_bits", oc->ebits, "That is the element under OCP's scale 2^%d; the ceil rule's is 2^%d.",
	             oc->exp, ce->exp);
	fmt_round_ctl rne = { .mode = FMT_RNE };
	uint32_t raw = fmt_round_double(ef, &rne, vi, NULL);
	MISTAKE_BITS(c, "ocp_elem_bits", raw, "That is V_i itself in %s: divide by the scale first.", ef->name);
	MISTAKE_BITS(c, "ceil_elem_bits", raw, "That is V_i itself in %s: divide by the scale first.", ef->name);
	uint32_t sign = 1u << (ef->width - 1);
	if (vi < 0) {
		MISTAKE_BITS(c, "ocp_elem_bits", oc->ebits & ~sign, "The sign bit is missing: V_i is negative.");
		MISTAKE_BITS(c, "ceil_elem_bits", ce->ebits & ~sign, "The sign bit is missing: V_i is negative.");
	}
	exs_mistake_num(c, "ocp_elem_value", oc->evalue, "That is the element alone; the value it stands for is the element "
	                                            "times the scale 2^%d.",
	            oc->exp);
	exs_mistake_num(c, "ceil_elem_value", ce->evalue, "That is the element alone; the value it stands for is the "
	                                              "element times the scale 2^%d.",
	            ce->exp);
	/* before the other rule's value, which can coincide: the clip is the likelier slip */
	double un = round_unclipped(vi / ldexp(1, oc->exp), ef->frac_bits) * ldexp(1, oc->exp);
	if ((oc->r.elems[i].flags & QUANT_SATURATED) && un != oc->value)
		exs_mistake_num(c, "ocp_elem_value", un, "%s has no value beyond %s: V_i / X = %s is clipped to the largest "
		                                     "element (it saturates).",
		            ef->name, exs_g(fmt_max(ef)), exs_g(vi / ldexp(1, oc->exp)));
	exs_mistake_num(c, "ocp_elem_value", ce->value, "That is the value under the ceil rule's scale.");
	exs_mistake_num(c, "ceil_elem_value", oc->value, "That is the value under OCP's floor-rule scale.");
}

static void mx_scale_worked(solve_ctx *c, const quant_info *q, const mx_rule_answer *oc, const mx_rule_answer *ce,
                            double amax, double vi, size_t i, int fl)
{
	const fmt_info *ef = fmt_get(q->elem);
	strbuf_printf(&c->w, "Step 1: amax = max |V| = %s; %s = 2^%d x %s, so floor(log2 amax) = %d.\n", exs_g(amax),
	              exs_g(amax), fl, exs_g(amax / ldexp(1, fl)), fl);
	strbuf_printf(&c->w, "Step 2 (OCP): %s's largest value %s = %s x 2^%d, so emax_elem = %d.\n"
	              "  X = 2^(%d - %d) = 2^%d; the e8m0 byte is %d + 127 = %d = 0x%02x.\n",
	              ef->name, exs_g(fmt_max(ef)), exs_g(fmt_max(ef) / ldexp(1, q->emax_elem)), q->emax_elem, q->emax_elem, fl,
	              q->emax_elem, oc->exp, oc->exp, oc->exp + 127, (unsigned)oc->sbits);
	double qo = vi / ldexp(1, oc->exp), qc = vi / ldexp(1, ce->exp);
	strbuf_printf(&c->w, "  V_%zu / X = %s / 2^%d = %s -> %s %s = 0x%0*x%s; it stands for %s x 2^%d = %s.\n", i,
	              exs_g(vi), oc->exp, exs_g(qo), ef->name, exs_g(oc->evalue), fmt_hex_digits(ef), (unsigned)oc->ebits,
	              (oc->r.elems[i].flags & QUANT_SATURATED) ? " (its nearest value lies past the largest: saturated)"
	                                                       : " (nearest, ties to even)",
	              exs_g(oc->evalue), oc->exp, exs_g(oc->value));
	strbuf_printf(&c->w, "Step 3 (ceil): amax / %s = %s; the smallest power of two at least that is 2^%d.\n"
	              "  X = 2^%d; the e8m0 byte is %d + 127 = %d = 0x%02x.\n",
	              exs_g(fmt_max(ef)), exs_g(amax / fmt_max(ef)), ce->exp, ce->exp, ce->exp, ce->exp + 127, (unsigned)ce->sbits);
	strbuf_printf(&c->w, "  V_%zu / X = %s / 2^%d = %s -> %s %s = 0x%0*x; it stands for %s x 2^%d = %s.\n", i, exs_g(vi),
	              ce->exp, exs_g(qc), ef->name, exs_g(ce->evalue), fmt_hex_digits(ef), (unsigned)ce->ebits,
	              exs_g(ce->evalue), ce->exp, exs_g(ce->value));
	strbuf_printf(&c->w, "\nThe floor rule %s.\nThe ceil rule never saturates, %s.\n",
	              oc->r.nsaturated ? "saturates the amax here (its nearest value lies past the element's largest)"
	                               : "saturates nothing here",
	              ce->exp > oc->exp ? "at the price of a scale one binade higher: the smallest elements lose bits or flush"
	                                : "and costs nothing here: its scale is the same");
}

bool exs_solve_mx_scale(solve_ctx *c)
{
	const quant_info *q = quant_param(c, "format", QUANT_MXFP4, true);
	double di;
	if (!q || !exs_param_double(c, "i", &di))
		return false;
	fmt_num xs[MX_BLOCK_MAX];
	size_t n;
	bool ok = block_param(c, "block", xs, &n);
	if (ok && (di < 0 || di != floor(di) || di >= (double)n))
		ok = exs_fail(c, "parameter i = %g must be a whole number from 0 to %zu", di, n - 1);
	mx_rule_answer oc = { 0 }, ce = { 0 };
	size_t i = ok ? (size_t)di : 0;
	ok = ok && mx_rule(c, q, QUANT_RULE_OCP, xs, n, i, &oc) && mx_rule(c, q, QUANT_RULE_CEIL, xs, n, i, &ce);
	double vi = ok ? fmt_num_to_double(&xs[i]) : 0, amax = ok ? oc.r.blocks[0].amax : 0;
	block_clear(xs, n);
	if (ok && (amax == 0 || oc.r.blocks[0].clamped || ce.r.blocks[0].clamped))
		ok = exs_fail(c, "parameter block: amax must be nonzero and its scale within e8m0's range");
	if (!ok) {
		quant_result_free(&oc.r);
		quant_result_free(&ce.r);
		return false;
	}
	int fl = exs_floor_log2(amax);
	const fmt_info *e8 = fmt_get(FMT_E8M0), *ef = fmt_get(q->elem);
	exs_set_num(c, "amax", amax);
	exs_set_num(c, "ocp_exponent", oc.exp);
	exs_set_num(c, "ceil_exponent", ce.exp);
	exs_set_bits(c, "ocp_scale_bits", e8, oc.sbits);
	exs_set_bits(c, "ceil_scale_bits", e8, ce.sbits);
	exs_set_bits(c, "ocp_elem_bits", ef, oc.ebits);
	exs_set_bits(c, "ceil_elem_bits", ef, ce.ebits);
	exs_set_num(c, "ocp_elem_value", oc.value);
	exs_set_num(c, "ceil_elem_value", ce.value);
	mx_scale_mistakes(c, q, &oc, &ce, vi, i, fl);
	mx_scale_worked(c, q, &oc, &ce, amax, vi, i, fl);
	quant_result_free(&oc.r);
	quant_result_free(&ce.r);
	return true;
}

/* ---- kind: nvfp4-decode (mx.2) -------------------------------------------------- */

/* A bit-pattern parameter of f (0x.. or binary). */
static bool bits_param(solve_ctx *c, const char *name, const fmt_info *f, uint32_t *out)
{
	const char *t = ex_variant_get(c->ex, c->v, name);
	char perr[160];
	if (!t)
		return exs_fail(c, "parameter %s is missing", name);
	if (ex_parse_bits(t, f->width, out, perr, sizeof perr) != MP_OK)
		return exs_fail(c, "parameter %s = '%s' (%s bits): %s", name, t, f->name, perr);
	return true;
}

bool exs_solve_nvfp4_decode(solve_ctx *c)
{
	const fmt_info *e2m1 = fmt_get(FMT_E2M1), *e4m3 = fmt_get(FMT_E4M3);
	uint32_t eb, sb;
	double ts;
	if (!bits_param(c, "elem", e2m1, &eb) || !bits_param(c, "scale", e4m3, &sb) ||
	    !exs_param_positive(c, "tensor_scale", &ts))
		return false;
	if ((double)(float)ts != ts)
		return exs_fail(c, "parameter tensor_scale = %s must be an fp32 value", exs_g(ts));
	double ev = fmt_to_double(e2m1, eb), sv = fmt_to_double(e4m3, sb);
	if (!(sv > 0) || ev == 0)
		return exs_fail(c, "the element must be nonzero and the block scale positive (elem 0x%x, scale 0x%02x)",
		                (unsigned)eb, (unsigned)sb);
	double v = quant_decode(quant_get(QUANT_NVFP4), eb, sb, ts);
	exs_set_num(c, "value", v);
	exs_set_num(c, "elem_value", ev);
	exs_set_num(c, "block_scale", sv);
	exs_mistake_num(c, "value", ev * sv, "You left out the tensor scale: NVFP4's value is element x s_b x s_t, with "
	                                 "s_t = %s.",
	            exs_g(ts));
	exs_mistake_num(c, "value", ev * ts, "You left out the block scale s_b = %s (the e4m3 byte 0x%02x).", exs_g(sv),
	            (unsigned)sb);
	exs_mistake_num(c, "value", -v, "The sign is the element's top bit: 0x%x is %s.", (unsigned)eb,
	            ev < 0 ? "negative" : "positive");
	exs_mistake_num(c, "value", ev * sv / ts, "Multiply by the tensor scale; dividing by it is the quantizer's step, "
	                                      "not the decoder's.");
	double as_e8m0 = ldexp(1, (int)sb - 127);
	exs_mistake_num(c, "value", ev * as_e8m0 * ts, "That reads the block scale as an e8m0 power of two (MX's scale); "
	                                           "NVFP4's block scale is an fp8-e4m3 number.");
	exs_mistake_num(c, "block_scale", as_e8m0, "That reads 0x%02x as e8m0 (2^(byte - 127)); NVFP4's block scale is "
	                                       "fp8-e4m3, bias 7, 3 fraction bits.",
	            (unsigned)sb);
	exs_mistake_num(c, "block_scale", sb, "That is the byte as an integer; decode it as fp8-e4m3.");
	exs_mistake_num(c, "block_scale", fmt_to_double(fmt_get(FMT_E4M3FNUZ), sb), "That decodes the byte with bias 8 "
	                                                                         "(e4m3fnuz); OCP e4m3 has bias 7.");
	exs_mistake_num(c, "elem_value", fabs(ev), "The element's top bit is its sign: 0x%x is negative.", (unsigned)eb);
	exs_mistake_num(c, "elem_value", eb & 7u, "That is the 3 magnitude bits as an integer; decode them as e2m1 "
	                                      "(bias 1, 1 fraction bit).");
	strbuf_printf(&c->w, "Step 1: the element 0x%x = %d %d%d %d (sign, exponent, fraction) is e2m1 %s.\n", (unsigned)eb,
	              (int)(eb >> 3) & 1, (int)(eb >> 2) & 1, (int)(eb >> 1) & 1, (int)eb & 1, exs_g(ev));
	strbuf_printf(&c->w, "  E2M1 magnitudes: 000 0, 001 0.5 (subnormal), 010 1, 011 1.5, 100 2, 101 3, 110 4, 111 6.\n");
	int se = (int)(sb >> 3) & 15, sf = (int)sb & 7;
	strbuf_printf(&c->w, "Step 2: the block scale 0x%02x is e4m3 exponent field %d, fraction %d: ", (unsigned)sb, se, sf);
	if (se)
		strbuf_printf(&c->w, "2^(%d - 7) x (1 + %d/8) = %s.\n", se, sf, exs_g(sv));
	else
		strbuf_printf(&c->w, "subnormal, 2^-6 x %d/8 = %s.\n", sf, exs_g(sv));
	strbuf_printf(&c->w, "Step 3: the value is element x s_b x s_t = %s x %s x %s = %s.\n", exs_g(ev), exs_g(sv), exs_g(ts),
	              exs_g(v));
	return true;
}

/* ---- kind: block-bits (mx.3) ----------------------------------------------------- */

bool exs_solve_block_bits(solve_ctx *c)
{
	const quant_info *q = quant_param(c, "format", QUANT_MXFP4, false);
	double P;
	if (!q || !exs_param_positive(c, "P", &P))
		return false;
	double blk = q->block;
	if (ex_variant_get(c->ex, c->v, "block")) {
		if (!exs_param_positive(c, "block", &blk))
			return false;
		if (blk != floor(blk) || blk > QUANT_BLOCK_MAX)
			return exs_fail(c, "parameter block must be a whole number from 1 to %d", QUANT_BLOCK_MAX);
	}
	int w = fmt_get(q->elem)->width;
	double bits = quant_bits_per_elem(q, (size_t)blk);
	exs_set_num(c, "bits_per_param", bits);
	exs_set_num(c, "scale_bits_per_param", 8 / blk);
	exs_set_num(c, "total_gb", P * bits / 8 / 1e9);
	exs_mistake_num(c, "bits_per_param", w, "That is the element alone; each block of %g also stores an 8-bit scale.",
	            blk);
	exs_mistake_num(c, "bits_per_param", w + 8, "The 8-bit scale is shared by the %g elements of a block: it adds "
	                                        "8 / %g bits to each, not 8.",
	            blk, blk);
	exs_mistake_num(c, "bits_per_param", w + 32 / blk, "The block scale is 8 bits (%s), not a 32-bit float.",
	            q->nvfp4 ? "fp8-e4m3" : "e8m0");
	double other = q->nvfp4 ? 32 : 16;
	exs_mistake_num(c, "bits_per_param", w + 8 / other, "That counts one scale per %g elements; %s has one per %g.",
	            other, q->name, blk);
	exs_mistake_num(c, "scale_bits_per_param", 8, "The scale's 8 bits are shared by %g elements: 8 / %g per element.",
	            blk, blk);
	exs_mistake_num(c, "scale_bits_per_param", 8 / other, "That is one scale per %g elements; %s has one per %g.",
	            other, q->name, blk);
	exs_mistake_num(c, "total_gb", P * bits / 1e9, "That is in gigabits: divide by 8 for bytes.");
	exs_mistake_num(c, "total_gb", P * bits / 8 / 1073741824.0, "That is GiB (2^30 bytes); the question asks for GB "
	                                                        "(10^9).");
	exs_mistake_num(c, "total_gb", P * w / 8 / 1e9, "That leaves out the block scales (8 / %g bits per parameter).",
	            blk);
	strbuf_printf(&c->w, "Step 1: %s stores each element in %d bits (%s).\n", q->name, w, fmt_get(q->elem)->name);
	strbuf_printf(&c->w, "Step 2: one 8-bit scale (%s) per block of %g elements: 8 / %g = %s bits per element.\n",
	              q->nvfp4 ? "fp8-e4m3" : "e8m0", blk, blk, exs_g(8 / blk));
	strbuf_printf(&c->w, "Step 3: %d + %s = %s bits per parameter%s.\n", w, exs_g(8 / blk), exs_g(bits),
	              q->nvfp4 ? " (the fp32 tensor scale adds 32 bits per tensor, nothing per element)" : "");
	strbuf_printf(&c->w, "Step 4: P = %s parameters: %s x %s / 8 = %s bytes = %s GB (bf16 would take %s GB).\n",
	              exs_g(P), exs_g(P), exs_g(bits), exs_g(P * bits / 8), exs_g(P * bits / 8 / 1e9), exs_g(P * 2 / 1e9));
	return true;
}

/* ---- kind: mx-saturate (mx.4) ---------------------------------------------------- */

static void saturate_mistakes(solve_ctx *c, const quant_info *q, const quant_result *oc, const quant_result *ce,
                              const double *vd, size_t n, size_t s)
{
	const fmt_info *ef = fmt_get(q->elem);
	size_t pos = 0;
	for (size_t k = 1; k < n; k++)
		if (vd[k] > vd[pos])
			pos = k;
	exs_mistake_num(c, "saturates", (double)s + 1, "Count from 0: the first element is index 0.");
	if (pos != s)
		exs_mistake_num(c, "saturates", (double)pos, "%s is the largest value, but amax is taken over magnitudes: "
		                                         "|%s| is larger.",
		            exs_g(vd[pos]), exs_g(vd[s]));
	double X = oc->blocks[0].scale;
	exs_mistake_num(c, "stored", -oc->elems[s].value, "The clipped element keeps the sign of V.");
	exs_mistake_num(c, "stored", round_unclipped(vd[s] / X, ef->frac_bits) * X,
	            "%s would need a value beyond %s's largest, %s: the element is clipped to %s x X.", exs_g(vd[s] / X),
	            ef->name, exs_g(fmt_max(ef)), exs_g(fmt_max(ef)));
	exs_mistake_num(c, "stored", ce->elems[s].value, "That is the value under the ceil rule's scale, which does not "
	                                             "saturate.");
	exs_mistake_num(c, "stored", vd[s], "V itself cannot be stored: %s / X is beyond %s's largest value.", exs_g(vd[s]),
	            ef->name);
}

bool exs_solve_mx_saturate(solve_ctx *c)
{
	const quant_info *q = quant_param(c, "format", QUANT_MXFP8_E4M3, true);
	if (!q)
		return false;
	fmt_num xs[MX_BLOCK_MAX];
	double vd[MX_BLOCK_MAX];
	size_t n;
	quant_result oc = { 0 }, ce = { 0 };
	bool ok = block_param(c, "block", xs, &n);
	for (size_t k = 0; ok && k < n; k++)
		vd[k] = fmt_num_to_double(&xs[k]);
	ok = ok && quantize(c, q, QUANT_RULE_OCP, xs, n, &oc) && quantize(c, q, QUANT_RULE_CEIL, xs, n, &ce);
	block_clear(xs, n);
	if (ok && oc.nsaturated != 1)
		ok = exs_fail(c, "parameter block: the floor rule saturates %zu elements, not exactly one", oc.nsaturated);
	if (ok && ce.nsaturated != 0)
		ok = exs_fail(c, "parameter block: the ceil rule saturates an element");
	if (!ok) {
		quant_result_free(&oc);
		quant_result_free(&ce);
		return false;
	}
	const fmt_info *ef = fmt_get(q->elem);
	size_t s = 0;
	while (!(oc.elems[s].flags & QUANT_SATURATED))
		s++;
	double amax = oc.blocks[0].amax, X = oc.blocks[0].scale;
	int fl = exs_floor_log2(amax);
	exs_set_num(c, "saturates", (double)s);
	exs_set_num(c, "stored", oc.elems[s].value);
	saturate_mistakes(c, q, &oc, &ce, vd, n, s);
	strbuf_printf(&c->w, "Step 1: amax = %s (element %zu); floor(log2 amax) = %d, and %s's emax_elem is %d (its\n"
	              "  largest value %s = %s x 2^%d), so X = 2^(%d - %d) = 2^%d.\n",
	              exs_g(amax), s, fl, ef->name, q->emax_elem, exs_g(fmt_max(ef)), exs_g(fmt_max(ef) / ldexp(1, q->emax_elem)),
	              q->emax_elem, fl, q->emax_elem, oc.blocks[0].scale_exp);
	double thr;
	bool tie_over;
	quant_overflow_threshold(ef, &thr, &tie_over);
	strbuf_printf(&c->w, "Step 2: divide every element by X and compare with %s, halfway from %s's largest value %s\n"
	              "  to the next one a wider format would have (past it, the nearest value is out of range):\n",
	              exs_g(thr), ef->name, exs_g(fmt_max(ef)));
	for (size_t k = 0; k < n; k++)
		strbuf_printf(&c->w, "  [%zu] %s / X = %s%s\n", k, exs_g(vd[k]), exs_g(vd[k] / X),
		              k == s ? "   past it: saturated" : "");
	strbuf_printf(&c->w, "Step 3: element %zu is clipped to %s%s x 2^%d = %s (saturates = %zu, stored = %s).\n", s,
	              vd[s] < 0 ? "-" : "", exs_g(fmt_max(ef)), oc.blocks[0].scale_exp, exs_g(oc.elems[s].value), s,
	              exs_g(oc.elems[s].value));
	strbuf_printf(&c->w, "  Its significand %s is beyond %s (%s's largest, %s, plus half a step); the ceil rule's\n"
	              "  scale 2^%d would keep it (as %s).\n",
	              exs_g(fabs(amax) / ldexp(1, fl)), exs_g(thr / ldexp(1, q->emax_elem)), ef->name,
	              exs_g(fmt_max(ef) / ldexp(1, q->emax_elem)),
	              ce.blocks[0].scale_exp, exs_g(ce.elems[s].value));
	quant_result_free(&oc);
	quant_result_free(&ce);
	return true;
}
