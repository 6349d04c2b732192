#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/gpt2.h"
#include "fmt/bulk.h"
#include "util/file.h"

/* --- the GPT-2 names of the parameter buffer --- */

/* The twelve tensors of a block: name after "h.{i}.", the gpt_params tensor
 * (index in gpt_param_sizes order) and, for a projection, its input width
 * in units of C (the weight is stored (out, in) here, [in, out] in GPT-2's
 * Conv1D). */
static const struct {
	const char *name;
	int param;
	size_t in_c;   /* 0: a vector */
} block[] = {
	{ .name = "ln_1.weight", .param = 2 },                  { .name = "ln_1.bias", .param = 3 },
	{ .name = "attn.c_attn.weight", .param = 4, .in_c = 1 }, { .name = "attn.c_attn.bias", .param = 5 },
	{ .name = "attn.c_proj.weight", .param = 6, .in_c = 1 }, { .name = "attn.c_proj.bias", .param = 7 },
	{ .name = "ln_2.weight", .param = 8 },                  { .name = "ln_2.bias", .param = 9 },
	{ .name = "mlp.c_fc.weight", .param = 10, .in_c = 1 },   { .name = "mlp.c_fc.bias", .param = 11 },
	{ .name = "mlp.c_proj.weight", .param = 12, .in_c = 4 }, { .name = "mlp.c_proj.bias", .param = 13 },
};
enum { BLOCK_TENSORS = sizeof block / sizeof block[0] };

/* Where GPT-2 tensor k of config c is: its name, its offset and length in
 * the parameter buffer, its GPT-2 shape, and whether it is a transposed
 * projection (rows = out, cols = in as stored here). */
typedef struct {
	char name[64];
	size_t offset, count;
	size_t ndim;
	uint64_t shape[2];
	bool transpose;
	size_t rows, cols;
} tensor_spec;

size_t ckpt_tensor_count(size_t L)
{
	return 2 + BLOCK_TENSORS * L + 2;
}

static void spec_of(gpt_config c, size_t k, tensor_spec *s)
{
	size_t sizes[GPT_NUM_PARAM_TENSORS], off[GPT_NUM_PARAM_TENSORS];
	gpt_param_sizes(sizes, c);
	for (size_t i = 0, o = 0; i < GPT_NUM_PARAM_TENSORS; o += sizes[i], i++)
		off[i] = o;
	memset(s, 0, sizeof *s);
	size_t nblock = BLOCK_TENSORS * c.L;
	if (k < 2 || k >= 2 + nblock) {
		static const char *const ends[4] = { "wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias" };
		size_t e = k < 2 ? k : k - nblock;
		int param = k < 2 ? (int)k : 14 + (int)(e - 2);
		snprintf(s->name, sizeof s->name, "%s", ends[e]);
		s->offset = off[param];
		s->count = sizes[param];
		s->ndim = e < 2 ? 2 : 1;
		s->shape[0] = e == 0 ? c.V : e == 1 ? c.T : c.C;
		s->shape[1] = c.C;
		return;
	}
	size_t l = (k - 2) / BLOCK_TENSORS, b = (k - 2) % BLOCK_TENSORS;
	int param = block[b].param;
	size_t per = sizes[param] / c.L;
	snprintf(s->name, sizeof s->name, "h.%zu.%s", l, block[b].name);
	s->offset = off[param] + l * per;
	s->count = per;
	if (block[b].in_c) {
		s->transpose = true;
		s->cols = block[b].in_c * c.C;
		s->rows = per / s->cols;
		s->ndim = 2;
		s->shape[0] = s->cols;
		s->shape[1] = s->rows;
	} else {
		s->ndim = 1;
		s->shape[0] = per;
	}
}

const char *ckpt_tensor_name(gpt_config c, size_t k, char *buf, size_t n)
{
	tensor_spec s;
	spec_of(c, k, &s);
	snprintf(buf, n, "%s", s.name);
	return buf;
}

st_dtype ckpt_dtype_for_policy(const train_policy *p)
{
	if (p->weight_fmt == FMT_BF16)
		return ST_BF16;
	if (p->weight_fmt == FMT_FP16)
		return ST_F16;
	return ST_F32;
}

/* --- writing --- */

static fmt_id fmt_of(st_dtype d)
{
	return d == ST_BF16 ? FMT_BF16 : d == ST_F16 ? FMT_FP16 : FMT_FP32;
}

/* The weights in GPT-2's order and layout, encoded in dtype, into bytes. */
static mp_status encode_weights(gpt_config c, const float *params, st_dtype dtype, unsigned char *bytes,
                                size_t P)
{
	float *hf = malloc(P * sizeof *hf);
	if (!hf)
		return MP_ENOMEM;
	size_t at = 0;
	for (size_t k = 0; k < ckpt_tensor_count(c.L); k++) {
		tensor_spec s;
		spec_of(c, k, &s);
		const float *src = params + s.offset;
		if (s.transpose)
			for (size_t i = 0; i < s.cols; i++)
				for (size_t o = 0; o < s.rows; o++)
					hf[at + i * s.rows + o] = src[o * s.cols + i];
		else
			memcpy(hf + at, src, s.count * sizeof *hf);
		at += s.count;
	}
	mp_status st = MP_OK;
	if (dtype == ST_F32) {
		memcpy(bytes, hf, P * sizeof *hf);
	} else {
		fmt_bulk_opts o = { .fmt = fmt_of(dtype), .mode = FMT_RNE };
		st = fmt_bulk_encode(FMT_SIMD_AUTO, &o, bytes, hf, P);
	}
	free(hf);
	return st;
}

/* The metadata: format, shape, run, version, then the extras. */
static size_t fill_meta(st_meta *m, char num[7][32], gpt_config c, const ckpt_info *info)
{
	uint64_t v[7] = { c.L, c.NH, c.C, c.T, c.V, info->step, info->seed };
	static const char *const keys[7] = { "n_layer", "n_head", "n_embd", "n_positions", "vocab_size", "step", "seed" };
	size_t n = 0;
	m[n++] = (st_meta){ .key = "format", .value = "pt" };
	for (size_t i = 0; i < 7; i++) {
		snprintf(num[i], 32, "%" PRIu64, v[i]);
		m[n++] = (st_meta){ .key = keys[i], .value = num[i] };
	}
	m[n++] = (st_meta){ .key = "policy", .value = info->policy ? info->policy : "" };
	m[n++] = (st_meta){ .key = "mixprec_version", .value = PACKAGE_VERSION };
	for (size_t i = 0; i < info->nextra_meta; i++)
		m[n++] = info->extra_meta[i];
	return n;
}

bool ckpt_weight_bytes(gpt_config c, st_dtype dtype, uint64_t *bytes)
{
	size_t sizes[GPT_NUM_PARAM_TENSORS];
	uint64_t P = 0, es = st_dtype_size(dtype);
	gpt_param_sizes(sizes, c);
	for (size_t i = 0; i < GPT_NUM_PARAM_TENSORS; i++) {
		if (sizes[i] > UINT64_MAX - P)
			return false;
		P += sizes[i];
	}
	if (es == 0 || P > UINT64_MAX / es)
		return false;
	*bytes = P * es;
	return true;
}

/* The file's size but for the header: every tensor's bytes. */
static uint64_t data_bytes(const st_tensor *t, size_t n, uint64_t weights)
{
	uint64_t total = weights;
	for (size_t i = 0; i < n; i++)
		total = t[i].nbytes > UINT64_MAX - total ? UINT64_MAX : total + t[i].nbytes;
	return total;
}

mp_status ckpt_save(const char *path, gpt_config c, const float *params, const ckpt_info *info, char *err,
                    size_t errlen)
{
	size_t sizes[GPT_NUM_PARAM_TENSORS], P = 0, nt = ckpt_tensor_count(c.L);
	gpt_param_sizes(sizes, c);
	for (size_t i = 0; i < GPT_NUM_PARAM_TENSORS; i++)
		P += sizes[i];
	st_dtype dt = info->dtype;
	if (dt != ST_F32 && dt != ST_BF16 && dt != ST_F16) {
		snprintf(err, errlen, "%s: weights must be F32, BF16 or F16 (not %s)", path, st_dtype_name(dt));
		return MP_EINVAL;
	}
	size_t es = st_dtype_size(dt);
	uint64_t wb = 0;
	uint64_t total = ckpt_weight_bytes(c, dt, &wb) ? data_bytes(info->extra, info->nextra, wb) : UINT64_MAX;
	if (total > CKPT_MAX_TENSOR_BYTES) {
		snprintf(err, errlen, "%s: the tensors would take %" PRIu64 " bytes, above the %llu that a checkpoint "
		         "may hold (files up to %zu bytes are read)", path, total, (unsigned long long)CKPT_MAX_TENSOR_BYTES,
		         ST_MAX_FILE);
		return MP_EINVAL;
	}
	unsigned char *bytes = malloc(P * es);
	st_tensor *t = calloc(nt + info->nextra, sizeof *t);
	tensor_spec *specs = calloc(nt, sizeof *specs);
	st_meta *m = calloc(10 + info->nextra_meta, sizeof *m);   /* fill_meta: 10 of its own */
	mp_status st = bytes && t && specs && m ? MP_OK : MP_ENOMEM;
	if (st == MP_OK)
		st = encode_weights(c, params, dt, bytes, P);
	if (st == MP_OK) {
		size_t at = 0;
		for (size_t k = 0; k < nt; k++) {
			spec_of(c, k, &specs[k]);
			t[k] = (st_tensor){ .name = specs[k].name, .dtype = dt, .ndim = specs[k].ndim,
			                    .shape = { specs[k].shape[0], specs[k].shape[1] }, .data = bytes + at * es,
			                    .nbytes = specs[k].count * es };
			at += specs[k].count;
		}
		for (size_t i = 0; i < info->nextra; i++)
			t[nt + i] = info->extra[i];
		char num[7][32];
		size_t nm = fill_meta(m, num, c, info);
		st = st_write_file(path, t, nt + info->nextra, m, nm, err, errlen);
	} else {
		snprintf(err, errlen, "%s: out of memory", path);
	}
	free(bytes);
	free(t);
	free(specs);
	free(m);
	return st;
}

bool ckpt_policy_path(char *out, size_t n, const char *file, const char *policy)
{
	static const char ext[] = ".safetensors";
	size_t len = strlen(file), el = strlen(ext), pl = strlen(policy);
	size_t stem = len >= el && !strcmp(file + len - el, ext) ? len - el : len;
	int w = snprintf(out, n, "%.*s-%s%s", (int)stem, file, policy, file + stem);
	if (w < 0 || (size_t)w >= n)
		return false;
	for (char *p = out + stem + 1; p < out + stem + 1 + pl; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr("._+=-", *p)))
			*p = '_';
	return true;
}

/* --- config.json --- */

/* Where the tiny GPT differs from GPT-2 (README.md says the same). */
static const char *const differences[] = {
	"tokenizer: characters, token id = the byte's value (ASCII below 128; other bytes became '?' in training); "
	"no BPE, no tokenizer files, no BOS/EOS token",
	"vocab_size, n_positions, n_embd, n_layer, n_head: the tiny GPT's shape, not GPT-2's 50257/1024/768/12/12",
	"no dropout in training (the pdrop fields are 0)",
	"gelu_new is computed as 0.5x(1+tanh(u)) with 1+tanh(u) = 2/(1+exp(-2u)): equal in exact arithmetic, "
	"float rounding differs in the last bits",
	"LayerNorm: eps 1e-5 as GPT-2, the variance in two passes in fp32",
	"a policy trained in low precision (GEMM operands, residual stream, reductions) ran a forward pass that an "
	"fp32 PyTorch forward does not reproduce; the stored weights are exact",
};

static json_t *config_object(gpt_config c, st_dtype dtype)
{
	json_t *diff = json_array();
	for (size_t i = 0; diff && i < sizeof differences / sizeof differences[0]; i++)
		json_array_append_new(diff, json_string(differences[i]));
	const char *torch_dtype = dtype == ST_BF16 ? "bfloat16" : dtype == ST_F16 ? "float16" : "float32";
	return json_pack("{s:[s], s:s, s:I, s:I, s:I, s:I, s:I, s:n, s:s, s:f, s:f, s:f, s:f, s:f, s:b, s:b, "
	                 "s:b, s:n, s:n, s:s, s:{s:s, s:s, s:o}}",
	                 "architectures", "GPT2LMHeadModel", "model_type", "gpt2", "vocab_size", (json_int_t)c.V,
	                 "n_positions", (json_int_t)c.T, "n_embd", (json_int_t)c.C, "n_layer", (json_int_t)c.L,
	                 "n_head", (json_int_t)c.NH, "n_inner", "activation_function", "gelu_new",
	                 "layer_norm_epsilon", 1e-5, "resid_pdrop", 0.0, "embd_pdrop", 0.0, "attn_pdrop", 0.0,
	                 "initializer_range", 0.02, "scale_attn_weights", 1, "tie_word_embeddings", 1, "use_cache", 1,
	                 "bos_token_id", "eos_token_id", "torch_dtype", torch_dtype, "mixprec", "version",
	                 PACKAGE_VERSION, "tokenizer", "bytes", "differences_from_gpt2", diff);
}

mp_status ckpt_write_config(const char *path, gpt_config c, st_dtype dtype, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char cfg[4096];
	int n = slash ? snprintf(cfg, sizeof cfg, "%.*s/config.json", (int)(slash - path), path)
	              : snprintf(cfg, sizeof cfg, "config.json");
	if (n < 0 || (size_t)n >= sizeof cfg) {
		snprintf(err, errlen, "%s: path too long for config.json beside it", path);
		return MP_EINVAL;
	}
	json_t *root = config_object(c, dtype);
	if (!root) {
		snprintf(err, errlen, "%s: out of memory", cfg);
		return MP_ENOMEM;
	}
	file_atomic a;
	mp_status st = file_atomic_open(&a, cfg, err, errlen);
	if (st == MP_OK) {
		bool ok = json_dumpf(root, a.fp, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) == 0 && fputc('\n', a.fp) != EOF;
		if (!ok) {
			file_atomic_abort(&a);
			snprintf(err, errlen, "%s: write failed: %s", cfg, strerror(errno ? errno : EIO));
			st = MP_EIO;
		} else {
			st = file_atomic_commit(&a, err, errlen);
		}
	}
	json_decref(root);
	return st;
}

/* --- reading --- */

void ckpt_close(ckpt_model *m)
{
	if (m)
		st_free(&m->file);
}

/* Metadata key as a whole number in [lo, hi] into *v. */
static bool meta_num(const ckpt_model *m, const char *key, uint64_t lo, uint64_t hi, uint64_t *v,
                     const char *name, char *err, size_t errlen)
{
	const char *s = st_meta_get(&m->file, key);
	if (!s) {
		snprintf(err, errlen, "%s: __metadata__ has no '%s' (a mixprec checkpoint records the model's shape)",
		         name, key);
		return false;
	}
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end || errno || x < lo || x > hi) {
		snprintf(err, errlen, "%s: __metadata__ '%s' is '%s', not a whole number from %llu to %llu", name, key,
		         s, (unsigned long long)lo, (unsigned long long)hi);
		return false;
	}
	*v = x;
	return true;
}

/* The shape from the metadata; the tensors checked against it. */
static mp_status check_model(ckpt_model *m, const char *name, char *err, size_t errlen)
{
	uint64_t L, NH, C, T, V;
	/* train's own limits: a larger model is no mixprec checkpoint, and eval or
	 * sample would try to allocate what its shape implies */
	if (!meta_num(m, "n_layer", 1, GPT_MAX_LAYERS, &L, name, err, errlen) ||
	    !meta_num(m, "n_head", 1, GPT_MAX_HEADS, &NH, name, err, errlen) ||
	    !meta_num(m, "n_embd", 1, GPT_MAX_CHANNELS, &C, name, err, errlen) ||
	    !meta_num(m, "n_positions", 1, GPT_MAX_CONTEXT, &T, name, err, errlen) ||
	    !meta_num(m, "vocab_size", 1, GPT_MAX_VOCAB, &V, name, err, errlen))
		return MP_EINVAL;
	if (C % NH != 0) {
		snprintf(err, errlen, "%s: n_head %llu does not divide n_embd %llu", name, (unsigned long long)NH,
		         (unsigned long long)C);
		return MP_EINVAL;
	}
	m->config = (gpt_config){ .V = V, .T = T, .C = C, .L = L, .NH = NH };
	size_t P = 0;
	for (size_t k = 0; k < ckpt_tensor_count(L); k++) {
		tensor_spec s;
		spec_of(m->config, k, &s);
		const st_tensor *t = st_find(&m->file, s.name);
		if (!t) {
			snprintf(err, errlen, "%s: missing tensor '%s'", name, s.name);
			return MP_EINVAL;
		}
		if (t->dtype != ST_F32 && t->dtype != ST_BF16 && t->dtype != ST_F16) {
			snprintf(err, errlen, "%s: tensor '%s' is %s; weights must be F32, BF16 or F16", name, s.name,
			         st_dtype_name(t->dtype));
			return MP_EINVAL;
		}
		if (t->ndim != s.ndim || t->shape[0] != s.shape[0] || (s.ndim == 2 && t->shape[1] != s.shape[1])) {
			char want[64], got[96] = "";
			snprintf(want, sizeof want, s.ndim == 2 ? "[%llu, %llu]" : "[%llu]", (unsigned long long)s.shape[0],
			         (unsigned long long)s.shape[1]);
			for (size_t d = 0; d < t->ndim && strlen(got) < 64; d++)
				snprintf(got + strlen(got), sizeof got - strlen(got), "%s%llu", d ? ", " : "",
				         (unsigned long long)t->shape[d]);
			snprintf(err, errlen, "%s: tensor '%s' has shape [%s]; the metadata's shape needs %s", name, s.name,
			         got, want);
			return MP_EINVAL;
		}
		P += s.count;
	}
	m->num_params = P;
	uint64_t v;
	m->policy = st_meta_get(&m->file, "policy");
	m->step = st_meta_get(&m->file, "step") && meta_num(m, "step", 0, UINT64_MAX, &v, name, err, errlen) ? v : 0;
	m->seed = st_meta_get(&m->file, "seed") && meta_num(m, "seed", 0, UINT64_MAX, &v, name, err, errlen) ? v : 0;
	if (err[0])
		return MP_EINVAL;
	return MP_OK;
}

mp_status ckpt_open_mem(ckpt_model *m, const void *data, size_t len, const char *name, char *err, size_t errlen)
{
	memset(m, 0, sizeof *m);
	err[0] = '\0';
	mp_status st = st_read_mem(&m->file, data, len, name, err, errlen);
	if (st == MP_OK && (st = check_model(m, name, err, errlen)) != MP_OK)
		ckpt_close(m);
	return st;
}

mp_status ckpt_open(ckpt_model *m, const char *path, char *err, size_t errlen)
{
	memset(m, 0, sizeof *m);
	err[0] = '\0';
	mp_status st = st_read_file(&m->file, path, err, errlen);
	if (st == MP_OK && (st = check_model(m, path, err, errlen)) != MP_OK)
		ckpt_close(m);
	return st;
}

mp_status ckpt_check_shape(const ckpt_model *m, gpt_config w, char *err, size_t errlen)
{
	gpt_config c = m->config;
	if (c.V == w.V && c.T == w.T && c.C == w.C && c.L == w.L && c.NH == w.NH)
		return MP_OK;
	snprintf(err, errlen,
	         "the checkpoint's model has %zu layers, %zu heads, %zu channels, context %zu, vocabulary %zu; the "
	         "options ask for %zu, %zu, %zu, %zu, %zu (give --layers %zu --heads %zu --channels %zu --context %zu)",
	         c.L, c.NH, c.C, c.T, c.V, w.L, w.NH, w.C, w.T, w.V, c.L, c.NH, c.C, c.T);
	return MP_EINVAL;
}

mp_status ckpt_weights(const ckpt_model *m, float *params)
{
	for (size_t k = 0; k < ckpt_tensor_count(m->config.L); k++) {
		tensor_spec s;
		spec_of(m->config, k, &s);
		const st_tensor *t = st_find(&m->file, s.name);
		float *x = malloc(s.count * sizeof *x);
		void *raw = malloc(t->nbytes ? t->nbytes : 1);
		if (!x || !raw) {
			free(x);
			free(raw);
			return MP_ENOMEM;
		}
		memcpy(raw, t->data, t->nbytes);   /* the file's data need not be aligned */
		if (t->dtype == ST_F32)
			memcpy(x, raw, s.count * sizeof *x);
		else
			(void)fmt_bulk_decode(FMT_SIMD_AUTO, fmt_of(t->dtype), x, raw, s.count);   /* exact: cannot fail */
		float *dst = params + s.offset;
		if (s.transpose)
			for (size_t i = 0; i < s.cols; i++)
				for (size_t o = 0; o < s.rows; o++)
					dst[o * s.cols + i] = x[i * s.rows + o];
		else
			memcpy(dst, x, s.count * sizeof *x);
		free(x);
		free(raw);
	}
	return MP_OK;
}
