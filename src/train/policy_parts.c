/* The policy parts modelled on two emulators:
 *
 * - microxcaling's mx_specs (microsoft/microxcaling, mx/specs.py at
 *   21221c0, mx/linear.py at 2b7c540): a format per operand of each of a
 *   Linear's three GEMMs. Its names and ours: the forward's input
 *   a_elem_format (fwd=x:F) and weight w_elem_format (fwd=w:F); the input
 *   gradient's output gradient a_elem_format_bp_os (dgrad=dy:F) and weight
 *   w_elem_format_bp (dgrad=w:F); the weight gradient's two operands,
 *   which microxcaling gives one format, a_elem_format_bp_ex (wgrad=x:F,
 *   wgrad=dy:F, which may differ here). microxcaling quantizes each to an
 *   MX block format; here each is rounded elementwise, to nearest even,
 *   into its format, unscaled (the format's own overflow rule: fp8-e4m3
 *   gives NaN, the IEEE-like formats inf), as gemm= rounds them.
 * - its elementwise emulation (mx_specs' bfloat, mx/softmax.py at 142efb9
 *   and mx/activations.py at 2b7c540): there every vector op inside
 *   softmax, LayerNorm and GELU is rounded, forward and backward; here only
 *   the op's output is, in the forward pass (softmax=, layernorm=, gelu=).
 * - CPFloat's soft errors (fmt/flip.h): flip=CLASS:P[:BITS]. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/policy.h"

/* Each GEMM part: its key and its two operands' names and slots. */
static const struct {
	const char *key;
	const char *names[2];
	gemm_operand ops[2];
} gemm_parts[] = {
	{ .key = "fwd", .names = { "x", "w" }, .ops = { GEMM_FWD_X, GEMM_FWD_W } },
	{ .key = "dgrad", .names = { "dy", "w" }, .ops = { GEMM_DGRAD_DY, GEMM_DGRAD_W } },
	{ .key = "wgrad", .names = { "x", "dy" }, .ops = { GEMM_WGRAD_X, GEMM_WGRAD_DY } },
};
enum { GEMM_PARTS = sizeof gemm_parts / sizeof gemm_parts[0] };

static const char *const flip_classes[] = {
	[POLICY_FLIP_NONE] = "none", [POLICY_FLIP_WEIGHTS] = "weights",
	[POLICY_FLIP_ACTIVATIONS] = "activations", [POLICY_FLIP_GRADS] = "grads",
};

static const char *const flip_spans[] = { [FLIP_ANY] = "any", [FLIP_FRAC] = "frac", [FLIP_EXP] = "exp" };

bool policy_part_is(const char *key)
{
	static const char *const keys[] = { "fwd", "dgrad", "wgrad", "softmax", "layernorm", "gelu", "elementwise",
	                                    "flip" };
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (!strcmp(key, keys[i]))
			return true;
	return false;
}

/* A training format named name (length len) into *f; err names the part. */
static bool part_fmt(const char *key, const char *name, size_t len, fmt_id *f, char *err, size_t errlen)
{
	char buf[64];
	snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), name);
	const fmt_info *fi = fmt_find(buf);
	if (!fi || !fmt_is_kernel(fi->id)) {
		snprintf(err, errlen, "%s: %s format '%s' (known: %s)", key, fi ? "training policies take no" : "unknown",
		         buf, fmt_kernel_names());
		return false;
	}
	*f = fi->id;
	return true;
}

/* One "name:F" item (len characters at s) of GEMM part g into f and given. */
static bool gemm_item(size_t g, const char *s, size_t len, fmt_id f[2], bool given[2], char *err, size_t errlen)
{
	const char *key = gemm_parts[g].key, *colon = memchr(s, ':', len);
	for (int k = 0; k < 2 && colon; k++) {
		const char *name = gemm_parts[g].names[k];
		if ((size_t)(colon - s) != strlen(name) || strncmp(s, name, strlen(name)))
			continue;
		if (given[k])
			break;
		given[k] = true;
		return part_fmt(key, colon + 1, len - (size_t)(colon - s) - 1, &f[k], err, errlen);
	}
	snprintf(err, errlen, "%s: '%.*s' is not %s:F or %s:F (each at most once)", key, (int)len, s,
	         gemm_parts[g].names[0], gemm_parts[g].names[1]);
	return false;
}

/* fwd=, dgrad=, wgrad= (part g): "F" for both operands, or "a:F" for one,
 * or "a:F/b:G" for both ('/', not ',': a comma separates the policies of
 * --policy). A later part changes only the operands it names. */
static mp_status gemm_part(train_policy *p, size_t g, const char *value, char *err, size_t errlen)
{
	const char *key = gemm_parts[g].key;
	if (p->cast != CAST_SCALING_NONE) {
		snprintf(err, errlen, "%s: policy %s casts its Linears with per-tensor or per-block scales (fp8-scaling); "
		         "%s= rounds unscaled GEMM operands (add fp8-scaling=none first)", key, p->name, key);
		return MP_EUNSUPPORTED;
	}
	fmt_id f[2] = { FMT_FP32, FMT_FP32 };
	bool given[2] = { false, false };
	if (!strchr(value, ':')) {
		if (!part_fmt(key, value, strlen(value), &f[0], err, errlen))
			return MP_EINVAL;
		f[1] = f[0];
		given[0] = given[1] = true;
	} else {
		const char *s = value;
		for (;;) {
			const char *comma = strchr(s, '/');
			size_t len = comma ? (size_t)(comma - s) : strlen(s);
			if (!gemm_item(g, s, len, f, given, err, errlen))
				return MP_EINVAL;
			if (!comma)
				break;
			s = comma + 1;
		}
	}
	for (int i = 0; i < 2; i++) {
		if (!given[i])
			continue;
		p->op_set |= 1u << gemm_parts[g].ops[i];
		p->op_fmt[gemm_parts[g].ops[i]] = f[i];
	}
	return MP_OK;
}

/* flip=CLASS:P[:BITS] or flip=none. */
static mp_status flip_part(train_policy *p, const char *value, char *err, size_t errlen)
{
	if (!strcmp(value, "none")) {
		p->flip_class = POLICY_FLIP_NONE;
		p->flip_p = 0;
		return MP_OK;
	}
	char buf[96];
	snprintf(buf, sizeof buf, "%s", value);
	char *prob = strchr(buf, ':'), *bits = prob ? strchr(prob + 1, ':') : NULL;
	if (prob)
		*prob++ = '\0';
	if (bits)
		*bits++ = '\0';
	int cls = -1;
	for (int i = POLICY_FLIP_WEIGHTS; i <= POLICY_FLIP_GRADS; i++)
		if (!strcmp(buf, flip_classes[i]))
			cls = i;
	if (cls < 0 || !prob) {
		snprintf(err, errlen, "flip: '%s' is not CLASS:P[:BITS] with CLASS weights, activations or grads (or none)",
		         value);
		return MP_EINVAL;
	}
	char *end;
	errno = 0;
	double pr = strtod(prob, &end);
	if (!*prob || *end || errno || !(pr >= 0 && pr <= 1)) {
		snprintf(err, errlen, "flip: probability '%s' is not a number in 0..1", prob);
		return MP_EINVAL;
	}
	flip_where w = FLIP_ANY;
	if (bits) {
		int k = -1;
		for (int i = FLIP_ANY; i <= FLIP_EXP; i++)
			if (!strcmp(bits, flip_spans[i]))
				k = i;
		if (k < 0) {
			snprintf(err, errlen, "flip: bits '%s' are not any, frac or exp", bits);
			return MP_EINVAL;
		}
		w = (flip_where)k;
	}
	p->flip_class = (policy_flip)cls;
	p->flip_p = pr;
	p->flip_bits = w;
	return MP_OK;
}

mp_status policy_part_set(train_policy *p, const char *key, const char *value, char *err, size_t errlen)
{
	for (size_t g = 0; g < GEMM_PARTS; g++)
		if (!strcmp(key, gemm_parts[g].key))
			return gemm_part(p, g, value, err, errlen);
	if (!strcmp(key, "flip"))
		return flip_part(p, value, err, errlen);
	fmt_id f;
	if (!part_fmt(key, value, strlen(value), &f, err, errlen))
		return MP_EINVAL;
	bool all = !strcmp(key, "elementwise");
	if (all || !strcmp(key, "softmax"))
		p->softmax_fmt = f;
	if (all || !strcmp(key, "layernorm"))
		p->layernorm_fmt = f;
	if (all || !strcmp(key, "gelu"))
		p->gelu_fmt = f;
	return MP_OK;
}

void policy_parts_describe(const train_policy *p, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
#define ADD(...) (len += (size_t)snprintf(buf + len, len < n ? n - len : 0, __VA_ARGS__))
	for (size_t g = 0; g < GEMM_PARTS; g++) {
		unsigned mask = 1u << gemm_parts[g].ops[0] | 1u << gemm_parts[g].ops[1];
		if (!(p->op_set & mask))
			continue;
		ADD(", %s", gemm_parts[g].key);
		for (int i = 0; i < 2; i++)
			if (p->op_set & (1u << gemm_parts[g].ops[i]))
				ADD(" %s:%s", gemm_parts[g].names[i], fmt_get(p->op_fmt[gemm_parts[g].ops[i]])->name);
	}
	const char *names[3] = { "softmax", "layernorm", "gelu" };
	fmt_id f[3] = { p->softmax_fmt, p->layernorm_fmt, p->gelu_fmt };
	for (int i = 0; i < 3; i++)
		if (f[i] != FMT_FP32)
			ADD(", %s out %s", names[i], fmt_get(f[i])->name);
	if (p->flip_class != POLICY_FLIP_NONE)
		ADD(", flips in %s p=%.6g (%s bits)", flip_classes[p->flip_class], p->flip_p, flip_spans[p->flip_bits]);
#undef ADD
}
