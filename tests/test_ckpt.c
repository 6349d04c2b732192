/* Checkpoints (src/ckpt/): a file written by ckpt_save is read back by a
 * minimal safetensors parser written here (not the program's reader), and
 * the names, dtypes, shapes, offsets and values are checked against
 * offsets worked out by hand for a small model whose every weight is its
 * own index. Then the program's reader on crafted bad files: each refusal
 * names the file and the problem. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/gpt2.h"
#include "ckpt/safetensors.h"
#include "testutil.h"

/* V=5, T=3, C=4, L=2, NH=2. The parameter buffer, by hand (train/model.h's
 * order): wte 20 at 0, wpe 12 at 20, ln1w 8 at 32, ln1b 8 at 40, qkvw
 * 2*12*4 = 96 at 48, qkvb 24 at 144, attprojw 32 at 168, attprojb 8 at
 * 200, ln2w 8 at 208, ln2b 8 at 216, fcw 2*16*4 = 128 at 224, fcb 32 at
 * 352, fcprojw 128 at 384, fcprojb 8 at 512, lnfw 4 at 520, lnfb 4 at 524;
 * 528 in all. */
static const gpt_config small = { .V = 5, .T = 3, .C = 4, .L = 2, .NH = 2 };
enum { SMALL_P = 528 };

static char tmpdir[64];

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/test_ckpt.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	ck_assert_ptr_nonnull(fp);
	fseek(fp, 0, SEEK_END);
	long n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	unsigned char *b = malloc((size_t)n + 1);
	ck_assert_uint_eq(fread(b, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	b[n] = 0;
	*len = (size_t)n;
	return b;
}

/* --- the independent reader: just enough safetensors for these files --- */

typedef struct {
	char dtype[8];
	int ndim;
	unsigned long long shape[4];
	unsigned long long begin, end;
} raw_entry;

typedef struct {
	const unsigned char *file;
	size_t len;
	unsigned long long hlen;
	char *header;          /* NUL-terminated copy */
	const unsigned char *data;
} raw_file;

static void raw_open(raw_file *r, const unsigned char *file, size_t len)
{
	ck_assert_uint_ge(len, 8);
	r->file = file;
	r->len = len;
	r->hlen = 0;
	for (int i = 7; i >= 0; i--)
		r->hlen = r->hlen * 256 + file[i];
	ck_assert_uint_le(8 + r->hlen, len);
	r->header = malloc(r->hlen + 1);
	memcpy(r->header, file + 8, r->hlen);
	r->header[r->hlen] = 0;
	r->data = file + 8 + r->hlen;
}

/* The object after "name": in the header, up to its closing brace. */
static bool raw_object(const raw_file *r, const char *name, char *obj, size_t n)
{
	char key[128];
	snprintf(key, sizeof key, "\"%s\":", name);
	const char *p = strstr(r->header, key);
	if (!p)
		return false;
	p += strlen(key);
	while (*p == ' ')
		p++;
	const char *q = strchr(p, '}');
	ck_assert_ptr_nonnull(q);
	size_t len = (size_t)(q - p + 1);
	ck_assert_uint_lt(len, n);
	memcpy(obj, p, len);
	obj[len] = 0;
	return true;
}

static bool raw_find(const raw_file *r, const char *name, raw_entry *e)
{
	char obj[512];
	if (!raw_object(r, name, obj, sizeof obj))
		return false;
	memset(e, 0, sizeof *e);
	const char *d = strstr(obj, "\"dtype\":"), *s = strstr(obj, "\"shape\":["), *o = strstr(obj, "\"data_offsets\":[");
	ck_assert(d && s && o);
	ck_assert_int_eq(sscanf(d, "\"dtype\": \"%7[A-Z0-9]\"", e->dtype), 1);
	s += strlen("\"shape\":[");
	while (*s != ']') {
		ck_assert_int_lt(e->ndim, 4);
		char *end;
		e->shape[e->ndim++] = strtoull(s, &end, 10);
		s = end;
		while (*s == ',' || *s == ' ')
			s++;
	}
	ck_assert_int_eq(sscanf(o, "\"data_offsets\": [ %llu , %llu ]", &e->begin, &e->end), 2);
	return true;
}

/* The string value of a metadata key. */
static bool raw_meta(const raw_file *r, const char *key, char *val, size_t n)
{
	char obj[1024];
	if (!raw_object(r, "__metadata__", obj, sizeof obj))
		return false;
	char k[64];
	snprintf(k, sizeof k, "\"%s\":\"", key);
	const char *p = strstr(obj, k);
	if (!p)
		return false;
	p += strlen(k);
	size_t len = strcspn(p, "\"");
	ck_assert_uint_lt(len, n);
	memcpy(val, p, len);
	val[len] = 0;
	return true;
}

static float raw_f32(const raw_file *r, const raw_entry *e, size_t i)
{
	float v;
	memcpy(&v, r->data + e->begin + 4 * i, 4);
	return v;
}

static uint16_t raw_u16(const raw_file *r, const raw_entry *e, size_t i)
{
	const unsigned char *p = r->data + e->begin + 2 * i;
	return (uint16_t)(p[0] | p[1] << 8);   /* little-endian by definition */
}

/* --- writing: checked by the independent reader --- */

static float *index_weights(float mod)
{
	float *w = malloc(SMALL_P * sizeof *w);
	for (size_t i = 0; i < SMALL_P; i++)
		w[i] = mod > 0 ? (float)(i % (size_t)mod) : (float)i;
	return w;
}

static void save_small(const char *path, const float *w, st_dtype dt, const st_tensor *extra, size_t nextra,
                       const st_meta *xm, size_t nxm)
{
	char err[512];
	ckpt_info info = { .policy = "fp32", .step = 42, .seed = 7, .dtype = dt, .extra = extra, .nextra = nextra,
	                   .extra_meta = xm, .nextra_meta = nxm };
	ck_assert_msg(ckpt_save(path, small, w, &info, err, sizeof err) == MP_OK, "%s", err);
}

/* ckpt_save never writes what the reader refuses: 2112 bytes of fp32
 * weights (528 x 4) plus an extra of 2^31 - 2^20 - 2111 bytes is one byte
 * over CKPT_MAX_TENSOR_BYTES = 2^31 - 2^20; refused before anything is
 * written (the extra's data is never read). One byte less passes the check
 * (not written here: it would be a 2 GiB file). */
START_TEST(save_size_limit)
{
	ck_assert_uint_eq(CKPT_MAX_TENSOR_BYTES, 2147483648u - 1048576u);
	make_tmpdir();
	char path[128], err[512];
	snprintf(path, sizeof path, "%s/big.safetensors", tmpdir);
	float *w = index_weights(0);
	st_tensor big = { .name = "optimizer.big", .dtype = ST_U8, .ndim = 1,
		          .shape = { 2147483648u - 1048576u - 2111u }, .data = NULL,
		          .nbytes = 2147483648u - 1048576u - 2111u };
	ckpt_info info = { .policy = "fp32", .dtype = ST_F32, .extra = &big, .nextra = 1 };
	ck_assert(ckpt_save(path, small, w, &info, err, sizeof err) == MP_EINVAL);
	ck_assert_msg(strstr(err, "the tensors would take 2146435073 bytes, above the 2146435072"), "%s", err);
	ck_assert(access(path, F_OK) != 0);
	free(w);
	remove_tmpdir();
}
END_TEST

START_TEST(independent_reader_f32)
{
	make_tmpdir();
	char path[128];
	snprintf(path, sizeof path, "%s/m.safetensors", tmpdir);
	float *w = index_weights(0);
	save_small(path, w, ST_F32, NULL, 0, NULL, 0);
	size_t len;
	unsigned char *file = slurp(path, &len);
	raw_file r;
	raw_open(&r, file, len);
	/* the data starts 8-byte aligned; the padding is spaces after the object */
	ck_assert_uint_eq((8 + r.hlen) % 8, 0);
	char *close = strrchr(r.header, '}');
	for (char *p = close + 1; *p; p++)
		ck_assert_int_eq(*p, ' ');
	char v[64];
	const char *meta[][2] = { { "format", "pt" }, { "n_layer", "2" }, { "n_head", "2" }, { "n_embd", "4" },
		                  { "n_positions", "3" }, { "vocab_size", "5" }, { "policy", "fp32" },
		                  { "step", "42" }, { "seed", "7" } };
	for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++) {
		ck_assert_msg(raw_meta(&r, meta[i][0], v, sizeof v), "no metadata %s", meta[i][0]);
		ck_assert_str_eq(v, meta[i][1]);
	}
	ck_assert(raw_meta(&r, "mixprec_version", v, sizeof v) && v[0]);

	/* every GPT-2 name, F32, its shape; the ranges tile the data exactly */
	struct {
		const char *name;
		int ndim;
		unsigned long long s0, s1;
	} want[] = {
		{ "wte.weight", 2, 5, 4 },          { "wpe.weight", 2, 3, 4 },         { "ln_f.weight", 1, 4, 0 },
		{ "ln_f.bias", 1, 4, 0 },           { "h.1.ln_1.weight", 1, 4, 0 },     { "h.1.ln_1.bias", 1, 4, 0 },
		{ "h.1.attn.c_attn.weight", 2, 4, 12 }, { "h.1.attn.c_attn.bias", 1, 12, 0 },
		{ "h.1.attn.c_proj.weight", 2, 4, 4 },  { "h.1.attn.c_proj.bias", 1, 4, 0 },
		{ "h.1.ln_2.weight", 1, 4, 0 },     { "h.1.ln_2.bias", 1, 4, 0 },
		{ "h.1.mlp.c_fc.weight", 2, 4, 16 }, { "h.1.mlp.c_fc.bias", 1, 16, 0 },
		{ "h.1.mlp.c_proj.weight", 2, 16, 4 }, { "h.1.mlp.c_proj.bias", 1, 4, 0 },
		{ "h.0.attn.c_attn.weight", 2, 4, 12 },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		raw_entry e;
		ck_assert_msg(raw_find(&r, want[i].name, &e), "no tensor %s", want[i].name);
		ck_assert_str_eq(e.dtype, "F32");
		ck_assert_int_eq(e.ndim, want[i].ndim);
		ck_assert_uint_eq(e.shape[0], want[i].s0);
		if (e.ndim == 2)
			ck_assert_uint_eq(e.shape[1], want[i].s1);
		ck_assert_uint_eq(e.end - e.begin, 4 * want[i].s0 * (e.ndim == 2 ? want[i].s1 : 1));
	}
	ck_assert_uint_eq(len - 8 - r.hlen, 4 * SMALL_P);   /* the weights and nothing else */
	raw_entry e;
	ck_assert(!raw_find(&r, "h.2.ln_1.weight", &e));
	ck_assert(!raw_find(&r, "lm_head.weight", &e));      /* tied: GPT-2 files leave it out */

	/* values: each weight is its index in the parameter buffer */
	ck_assert(raw_find(&r, "wte.weight", &e));
	ck_assert_float_eq(raw_f32(&r, &e, 3 * 4 + 2), 14.0f);       /* wte[3][2] */
	ck_assert(raw_find(&r, "wpe.weight", &e));
	ck_assert_float_eq(raw_f32(&r, &e, 2 * 4 + 1), 20.0f + 9);   /* wpe[2][1] */
	/* Conv1D: c_attn.weight[i][o] is the stored qkvw[o][i] (48 + l*48 + o*4 + i) */
	ck_assert(raw_find(&r, "h.1.attn.c_attn.weight", &e));
	for (size_t i = 0; i < 4; i++)
		for (size_t o = 0; o < 12; o++)
			ck_assert_float_eq(raw_f32(&r, &e, i * 12 + o), (float)(48 + 48 + o * 4 + i));
	ck_assert(raw_find(&r, "h.0.attn.c_proj.weight", &e));
	ck_assert_float_eq(raw_f32(&r, &e, 1 * 4 + 3), (float)(168 + 3 * 4 + 1));   /* [1][3] = attprojw[3][1] */
	ck_assert(raw_find(&r, "h.1.mlp.c_fc.weight", &e));
	ck_assert_float_eq(raw_f32(&r, &e, 2 * 16 + 9), (float)(224 + 64 + 9 * 4 + 2));  /* [2][9] = fcw[1][9][2] */
	/* c_proj: [4C, C]; [i][o] = fcprojw[l][o][i] = 384 + l*64 + o*16 + i */
	ck_assert(raw_find(&r, "h.1.mlp.c_proj.weight", &e));
	ck_assert_float_eq(raw_f32(&r, &e, 13 * 4 + 2), (float)(384 + 64 + 2 * 16 + 13));
	ck_assert(raw_find(&r, "h.1.attn.c_attn.bias", &e));
	ck_assert_float_eq(raw_f32(&r, &e, 11), (float)(144 + 12 + 11));
	ck_assert(raw_find(&r, "h.0.ln_2.bias", &e));
	ck_assert_float_eq(raw_f32(&r, &e, 3), (float)(216 + 3));
	ck_assert(raw_find(&r, "ln_f.bias", &e));
	ck_assert_float_eq(raw_f32(&r, &e, 3), 527.0f);

	/* the program's reader gives the weights back, transposed back */
	char err[512];
	ckpt_model m;
	ck_assert_msg(ckpt_open(&m, path, err, sizeof err) == MP_OK, "%s", err);
	ck_assert_uint_eq(m.num_params, SMALL_P);
	ck_assert_uint_eq(m.step, 42);
	ck_assert_uint_eq(m.seed, 7);
	ck_assert_str_eq(m.policy, "fp32");
	float back[SMALL_P];
	ck_assert(ckpt_weights(&m, back) == MP_OK);
	ck_assert_mem_eq(back, w, sizeof back);
	ck_assert(ckpt_check_shape(&m, small, err, sizeof err) == MP_OK);
	gpt_config other = small;
	other.L = 3;
	ck_assert(ckpt_check_shape(&m, other, err, sizeof err) == MP_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "options ask for"));
	ckpt_close(&m);
	free(r.header);
	free(file);
	free(w);
	remove_tmpdir();
}
END_TEST

/* BF16 and F16: the top halves of the fp32 bits (bf16), IEEE half (fp16),
 * for values both hold exactly. */
START_TEST(sixteen_bit)
{
	make_tmpdir();
	char path[128], err[512];
	snprintf(path, sizeof path, "%s/b.safetensors", tmpdir);
	float *w = index_weights(200);   /* integers below 256: exact in bf16 and fp16 */
	for (int pass = 0; pass < 2; pass++) {
		st_dtype dt = pass == 0 ? ST_BF16 : ST_F16;
		save_small(path, w, dt, NULL, 0, NULL, 0);
		size_t len;
		unsigned char *file = slurp(path, &len);
		raw_file r;
		raw_open(&r, file, len);
		raw_entry e;
		ck_assert(raw_find(&r, "wte.weight", &e));
		ck_assert_str_eq(e.dtype, pass == 0 ? "BF16" : "F16");
		ck_assert_uint_eq(e.end - e.begin, 2 * 20);
		/* wte[0][3] = 3.0: bf16 0x4040 (fp32 0x40400000), fp16 0x4200 */
		ck_assert_uint_eq(raw_u16(&r, &e, 3), (pass == 0 ? 0x4040 : 0x4200));
		ck_assert(raw_find(&r, "h.1.attn.c_attn.weight", &e));
		/* [0][1] = qkvw[1][1][0] = 96 + 4 = 100: bf16 0x42c8, fp16 0x5640 */
		ck_assert_uint_eq(raw_u16(&r, &e, 1), (pass == 0 ? 0x42c8 : 0x5640));
		ckpt_model m;
		ck_assert_msg(ckpt_open(&m, path, err, sizeof err) == MP_OK, "%s", err);
		float back[SMALL_P];
		ck_assert(ckpt_weights(&m, back) == MP_OK);
		ck_assert_mem_eq(back, w, sizeof back);
		ckpt_close(&m);
		free(r.header);
		free(file);
	}
	train_policy p;
	ck_assert(policy_from_name("bf16-pure", &p) == MP_OK);
	ck_assert_int_eq(ckpt_dtype_for_policy(&p), ST_BF16);
	ck_assert(policy_from_name("bf16-mixed", &p) == MP_OK);
	ck_assert_int_eq(ckpt_dtype_for_policy(&p), ST_F32);
	free(w);
	remove_tmpdir();
}
END_TEST

/* Extra tensors and metadata (a run's state) ride along; GPT-2 names stay. */
START_TEST(extras)
{
	make_tmpdir();
	char path[128], err[512];
	snprintf(path, sizeof path, "%s/x.safetensors", tmpdir);
	float *w = index_weights(0);
	int64_t pos[3] = { 5, -1, 1LL << 40 };
	unsigned char flags[5] = { 1, 2, 3, 4, 5 };
	st_tensor extra[2] = {
		{ .name = "state.batch_pos", .dtype = ST_I64, .ndim = 1, .shape = { 3 }, .data = pos, .nbytes = 24 },
		{ .name = "optimizer.flags", .dtype = ST_U8, .ndim = 2, .shape = { 5, 1 }, .data = flags, .nbytes = 5 },
	};
	st_meta xm[1] = { { .key = "state.scaler", .value = "65536" } };
	save_small(path, w, ST_F32, extra, 2, xm, 1);
	size_t len;
	unsigned char *file = slurp(path, &len);
	raw_file r;
	raw_open(&r, file, len);
	raw_entry e;
	ck_assert(raw_find(&r, "state.batch_pos", &e));
	ck_assert_str_eq(e.dtype, "I64");
	int64_t got;
	memcpy(&got, r.data + e.begin + 16, 8);
	ck_assert_int_eq(got, 1LL << 40);
	ck_assert(raw_find(&r, "optimizer.flags", &e));
	ck_assert_str_eq(e.dtype, "U8");
	ck_assert_uint_eq(r.data[e.begin + 4], 5);
	char v[32];
	ck_assert(raw_meta(&r, "state.scaler", v, sizeof v));
	ck_assert_str_eq(v, "65536");
	ckpt_model m;
	ck_assert_msg(ckpt_open(&m, path, err, sizeof err) == MP_OK, "%s", err);
	ck_assert_ptr_nonnull(st_find(&m.file, "state.batch_pos"));
	ck_assert_str_eq(st_meta_get(&m.file, "state.scaler"), "65536");
	ckpt_close(&m);
	/* the writer refuses a name twice, a GPT-2 name as an extra, a size that does not match */
	st_tensor dup[1] = { { .name = "wte.weight", .dtype = ST_U8, .ndim = 1, .shape = { 5 }, .data = flags, .nbytes = 5 } };
	ckpt_info info = { .policy = "p", .dtype = ST_F32, .extra = dup, .nextra = 1 };
	ck_assert(ckpt_save(path, small, w, &info, err, sizeof err) == MP_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "duplicate"));
	st_tensor bad[1] = { { .name = "x", .dtype = ST_F32, .ndim = 1, .shape = { 2 }, .data = flags, .nbytes = 5 } };
	ck_assert(st_write_file(path, bad, 1, NULL, 0, err, sizeof err) == MP_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, path));
	/* the earlier file is intact: the failed writes never replaced it */
	ck_assert_msg(ckpt_open(&m, path, err, sizeof err) == MP_OK, "%s", err);
	ckpt_close(&m);
	ck_assert(st_write_file("/nonexistent-dir/x.safetensors", extra, 1, NULL, 0, err, sizeof err) == MP_EIO);
	free(r.header);
	free(file);
	free(w);
	remove_tmpdir();
}
END_TEST

/* --- the reader on crafted bad files --- */

/* 8-byte length + header + data_len zero bytes (the length is hlen, or the
 * header's when hlen is 0). */
static unsigned char *craft(const char *header, unsigned long long hlen, size_t data_len, size_t *len)
{
	size_t h = strlen(header);
	if (hlen == 0)
		hlen = h;
	*len = 8 + h + data_len;
	unsigned char *b = calloc(1, *len);
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(hlen >> (8 * i));
	memcpy(b + 8, header, h);
	return b;
}

static void expect_refused(const char *header, unsigned long long hlen, size_t data_len, const char *what)
{
	size_t len;
	unsigned char *b = craft(header, hlen, data_len, &len);
	st_file f;
	char err[512] = "";
	mp_status st = st_read_mem(&f, b, len, "t.st", err, sizeof err);
	ck_assert_msg(st == MP_EINVAL, "accepted: %s", header);
	ck_assert_msg(strncmp(err, "t.st: ", 6) == 0, "message does not name the file: %s", err);
	ck_assert_msg(strstr(err, what) != NULL, "'%s' not in: %s", what, err);
	ck_assert_uint_eq(f.n, 0);
	free(b);
}

START_TEST(bad_files)
{
	st_file f;
	char err[512];
	unsigned char tiny[5] = { 0 };
	ck_assert(st_read_mem(&f, tiny, 5, "t.st", err, sizeof err) == MP_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "truncated"));
	expect_refused("{}", 1000, 4, "truncated");
	expect_refused("{}", 1ULL << 40, 0, "too large");
	expect_refused("{not json", 0, 0, "not a JSON object");
	expect_refused("[1, 2]", 0, 0, "not a JSON object");
	expect_refused("{\"a\":1,\"a\":2}", 0, 0, "not a JSON object");
	expect_refused("{\"a\":{\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]}}", 0, 4, "unknown dtype 'F33'");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 0, 4, "data_offsets");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,8]}}", 0, 8, "need 4");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 0, 4, "out of range");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,18446744073709551615]}}", 0, 4,
	               "too big");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
	               "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 0, 4, "overlap");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 0, 8, "gap");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 0, 9, "after the last");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 0, 4, "whole number");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],"
	               "\"data_offsets\":[0,4]}}", 0, 4, "overflows");
	expect_refused("{\"__metadata__\":{\"k\":3}}", 0, 0, "not a string");
	/* a header that claims a huge tensor with a tiny file: refused, nothing allocated for it */
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1000000000000],\"data_offsets\":[0,4000000000000]}}",
	               0, 4, "out of range");
	/* and a good one, with padding after the object */
	size_t len;
	unsigned char *b = craft("{\"__metadata__\":{\"k\":\"v\"},\"a\":{\"dtype\":\"BF16\",\"shape\":[2],"
	                         "\"data_offsets\":[0,4]}}   ", 0, 4, &len);
	ck_assert_msg(st_read_mem(&f, b, len, "t.st", err, sizeof err) == MP_OK, "%s", err);
	ck_assert_uint_eq(f.n, 1);
	ck_assert_str_eq(st_meta_get(&f, "k"), "v");
	ck_assert_int_eq(st_find(&f, "a")->dtype, ST_BF16);
	st_free(&f);
	free(b);
}
END_TEST

/* Many entries: st_find on each of them must not scan the whole index (a
 * linear st_find makes this quadratic, 100000^2/2 name comparisons, and the
 * test runs past Check's timeout; a sorted index answers in well under it). */
START_TEST(many_entries)
{
	enum { N = 100000 };
	size_t cap = (size_t)N * 64 + 16, at = 0;
	char *h = malloc(cap);
	ck_assert_ptr_nonnull(h);
	h[at++] = '{';
	for (size_t i = 0; i < N; i++)   /* names in descending order: header order is not name order */
		at += (size_t)snprintf(h + at, cap - at, "%s\"t%06zu\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}",
		                       i ? "," : "", (size_t)(N - 1 - i));
	h[at++] = '}';
	h[at] = '\0';
	size_t len;
	unsigned char *b = craft(h, 0, 0, &len);
	free(h);
	st_file f;
	char err[512];
	ck_assert_msg(st_read_mem(&f, b, len, "t.st", err, sizeof err) == MP_OK, "%s", err);
	ck_assert_uint_eq(f.n, N);
	ck_assert_str_eq(f.tensors[0].name, "t099999");   /* f.tensors keeps header order */
	for (size_t i = 0; i < N; i++) {
		char name[16];
		snprintf(name, sizeof name, "t%06zu", i);
		const st_tensor *t = st_find(&f, name);
		ck_assert_msg(t && !strcmp(t->name, name), "st_find(%s)", name);
		ck_assert_ptr_eq(t, &f.tensors[N - 1 - i]);
	}
	ck_assert_ptr_null(st_find(&f, "t"));
	ck_assert_ptr_null(st_find(&f, "t100000"));
	ck_assert_ptr_null(st_find(&f, ""));
	st_free(&f);
	free(b);
}
END_TEST

/* A whole file in memory with some GPT-2 tensors changed. */
static unsigned char *small_file(const char *drop, const char *reshape, st_dtype wte_dtype, const char *n_head,
                                 size_t *len)
{
	size_t nt = ckpt_tensor_count(small.L);
	static float w[SMALL_P];
	st_tensor t[64];
	size_t n = 0, at = 0;
	/* the names and sizes of ckpt_save's file, read back from one */
	make_tmpdir();
	char path[128], err[512];
	snprintf(path, sizeof path, "%s/s.safetensors", tmpdir);
	float *iw = index_weights(0);
	save_small(path, iw, ST_F32, NULL, 0, NULL, 0);
	free(iw);
	st_file f;
	ck_assert(st_read_file(&f, path, err, sizeof err) == MP_OK);
	ck_assert_uint_eq(f.n, nt);
	for (size_t k = 0; k < nt; k++) {
		if (drop && !strcmp(f.tensors[k].name, drop))
			continue;
		t[n] = f.tensors[k];
		t[n].data = (const unsigned char *)w + at;
		if (!strcmp(t[n].name, "wte.weight") && wte_dtype != ST_F32) {
			t[n].dtype = wte_dtype;
			t[n].nbytes = 20 * st_dtype_size(wte_dtype);
		}
		if (reshape && !strcmp(t[n].name, reshape)) {
			t[n].nbytes /= t[n].shape[0];
			t[n].shape[0] = 1;
		}
		at += t[n].nbytes;
		n++;
	}
	ck_assert_uint_le(at, sizeof w);
	st_meta m[5] = { { "n_layer", "2" }, { "n_head", n_head }, { "n_embd", "4" }, { "n_positions", "3" },
		         { "vocab_size", "5" } };
	FILE *fp = fopen(path, "wb");
	ck_assert(st_write(fp, t, n, m, n_head ? 5 : 0, err, sizeof err) == MP_OK);
	fclose(fp);
	st_free(&f);
	unsigned char *b = slurp(path, len);
	remove_tmpdir();
	return b;
}

static void expect_ckpt_refused(unsigned char *b, size_t len, const char *what)
{
	ckpt_model m;
	char err[512];
	ck_assert(ckpt_open_mem(&m, b, len, "t.st", err, sizeof err) == MP_EINVAL);
	ck_assert_msg(strncmp(err, "t.st: ", 6) == 0 && strstr(err, what), "'%s' not in: %s", what, err);
	free(b);
}

START_TEST(bad_models)
{
	size_t len;
	unsigned char *b = small_file(NULL, NULL, ST_F32, "2", &len);
	ckpt_model m;
	char err[512];
	ck_assert_msg(ckpt_open_mem(&m, b, len, "t.st", err, sizeof err) == MP_OK, "%s", err);
	ckpt_close(&m);
	free(b);
	b = small_file("ln_f.bias", NULL, ST_F32, "2", &len);
	expect_ckpt_refused(b, len, "missing tensor 'ln_f.bias'");
	b = small_file("h.1.mlp.c_fc.weight", NULL, ST_F32, "2", &len);
	expect_ckpt_refused(b, len, "missing tensor 'h.1.mlp.c_fc.weight'");
	b = small_file(NULL, "wpe.weight", ST_F32, "2", &len);
	expect_ckpt_refused(b, len, "tensor 'wpe.weight' has shape [1, 4]");
	b = small_file(NULL, "h.0.ln_1.bias", ST_F32, "2", &len);
	expect_ckpt_refused(b, len, "tensor 'h.0.ln_1.bias' has shape [1]");
	b = small_file(NULL, NULL, ST_I32, "2", &len);
	expect_ckpt_refused(b, len, "weights must be F32, BF16 or F16");
	b = small_file(NULL, NULL, ST_F32, "3", &len);
	expect_ckpt_refused(b, len, "does not divide");
	b = small_file(NULL, NULL, ST_F32, "two", &len);
	expect_ckpt_refused(b, len, "not a whole number");
	b = small_file(NULL, NULL, ST_F32, NULL, &len);
	expect_ckpt_refused(b, len, "has no 'n_layer'");
	ck_assert(ckpt_open(&m, "/nonexistent/m.safetensors", err, sizeof err) == MP_EIO);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/m.safetensors"));
}
END_TEST

/* A header of the five shape keys only (no tensors), with key set to value. */
static unsigned char *shape_only(const char *key, const char *value, size_t *len)
{
	st_meta m[5] = { { "n_layer", "2" }, { "n_head", "2" }, { "n_embd", "4" }, { "n_positions", "3" },
		         { "vocab_size", "5" } };
	for (size_t i = 0; i < 5; i++)
		if (!strcmp(m[i].key, key))
			m[i].value = value;
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);
	char err[256];
	ck_assert(st_write(fp, NULL, 0, m, 5, err, sizeof err) == MP_OK);
	fclose(fp);
	*len = n;
	return (unsigned char *)buf;
}

/* The reader's shape limits are train's (64 layers and heads, context and
 * channels 4096; a token is a byte: 256): beyond them a file is bad input
 * (MP_EINVAL), not a model that eval would try to allocate. */
START_TEST(shape_limits)
{
	static const struct {
		const char *key, *value, *limit;
	} bad[] = {
		{ "n_layer", "65", "from 1 to 64" },           { "n_layer", "1024", "from 1 to 64" },
		{ "n_head", "65", "from 1 to 64" },            { "n_embd", "4097", "from 1 to 4096" },
		{ "n_positions", "4097", "from 1 to 4096" },   { "n_positions", "1048576", "from 1 to 4096" },
		{ "vocab_size", "257", "from 1 to 256" },      { "vocab_size", "1048576", "from 1 to 256" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		size_t len;
		unsigned char *b = shape_only(bad[i].key, bad[i].value, &len);
		char what[96];
		snprintf(what, sizeof what, "'%s' is '%s', not a whole number %s", bad[i].key, bad[i].value, bad[i].limit);
		expect_ckpt_refused(b, len, what);
	}
	/* at the limits the shape passes, and the next check (the tensors) refuses the file */
	static const char *const at_limit[][2] = { { "n_layer", "64" }, { "n_positions", "4096" }, { "vocab_size", "256" } };
	for (size_t i = 0; i < 3; i++) {
		size_t len;
		unsigned char *b = shape_only(at_limit[i][0], at_limit[i][1], &len);
		expect_ckpt_refused(b, len, "missing tensor 'wte.weight'");
	}
}
END_TEST

START_TEST(config_json)
{
	make_tmpdir();
	char path[128], err[512];
	snprintf(path, sizeof path, "%s/m.safetensors", tmpdir);
	ck_assert_msg(ckpt_write_config(path, small, ST_BF16, err, sizeof err) == MP_OK, "%s", err);
	char cfg[160];
	snprintf(cfg, sizeof cfg, "%s/config.json", tmpdir);
	size_t len;
	char *text = (char *)slurp(cfg, &len);
	const char *want[] = { "\"model_type\": \"gpt2\"", "\"GPT2LMHeadModel\"", "\"activation_function\": \"gelu_new\"",
		               "\"layer_norm_epsilon\": 1e-5", "\"n_layer\": 2", "\"n_head\": 2", "\"n_embd\": 4",
		               "\"n_positions\": 3", "\"vocab_size\": 5", "\"tie_word_embeddings\": true",
		               "\"torch_dtype\": \"bfloat16\"", "tokenizer: characters" };
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		ck_assert_msg(strstr(text, want[i]), "config.json lacks %s:\n%s", want[i], text);
	free(text);
	remove_tmpdir();
}
END_TEST

START_TEST(policy_paths)
{
	char out[64];
	ck_assert(ckpt_policy_path(out, sizeof out, "run.safetensors", "bf16-pure"));
	ck_assert_str_eq(out, "run-bf16-pure.safetensors");
	ck_assert(ckpt_policy_path(out, sizeof out, "d/run", "fp32+loss-scale=static:8"));
	ck_assert_str_eq(out, "d/run-fp32+loss-scale=static_8");
	ck_assert(ckpt_policy_path(out, sizeof out, "a.safetensors", "x/y"));
	ck_assert_str_eq(out, "a-x_y.safetensors");   /* never a folder out of a policy name */
	ck_assert(!ckpt_policy_path(out, 10, "run.safetensors", "fp32"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ckpt");
	TCase *tc = tcase_create("ckpt");
	/* many_entries writes and reads 100,000 tensors: seconds under ASan */
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, independent_reader_f32);
	tcase_add_test(tc, save_size_limit);
	tcase_add_test(tc, sixteen_bit);
	tcase_add_test(tc, extras);
	tcase_add_test(tc, bad_files);
	tcase_add_test(tc, many_entries);
	tcase_add_test(tc, bad_models);
	tcase_add_test(tc, shape_limits);
	tcase_add_test(tc, config_json);
	tcase_add_test(tc, policy_paths);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
