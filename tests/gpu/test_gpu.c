/* The GPU against the CPU: bulk rounding bit for bit and the drift
 * simulation's results exactly, for the same inputs, seeds and indices.
 *
 * The CPU kernels are the oracle here; they are themselves checked against
 * MPFR, hardware conversions and hand-derived values by test_bulk,
 * test_round_mpfr and test_exhaustive. Plain C without Check, so that
 * tests/gpu/device-check.sh can build it on a GPU machine that has only the
 * CUDA toolkit. Prints TAP lines; exits 77 (skip) without a usable GPU, 1 on
 * any mismatch.
 *
 * MIXPREC_GPU_EXHAUSTIVE=1 adds every one of the 2^32 fp32 inputs for bf16,
 * fp16 and fp8-e4m3, RNE and SR.
 *
 * Also the first piece of the GPU training backend, gpu_gemm_nt (cuBLAS),
 * against hand-derived exact products and an fp64 reference within the
 * fp32 accumulation bound. */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drift/drift.h"
#include "fmt/bulk.h"
#include "fmt/decode.h"
#include "gpu/gpu.h"
#include "gpu/gpu_internal.h"
#include "tap.h"
#include "util/rng.h"


static void die(const char *what) __attribute__((noreturn));
static void die(const char *what)
{
	printf("Bail out! %s: %s\n", what, gpu_last_error());
	exit(1);
}

static float u2f(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static uint32_t f2u(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

/* --- inputs --- */

typedef struct {
	float *v;
	size_t n, cap;
} input_set;

static void add(input_set *s, uint32_t bits)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1 << 20;
		s->v = realloc(s->v, s->cap * sizeof *s->v);
		if (!s->v) {
			printf("Bail out! out of memory\n");
			exit(1);
		}
	}
	s->v[s->n++] = u2f(bits);
}

/* Every pattern of each narrow format, as an fp32 value, with its fp32
 * neighbours, the midpoint to the next pattern's value (a tie) and the
 * midpoint's neighbours; every upper half-word with 16 lower ones (all of
 * bf16's rounding cases at every exponent); specials; random patterns. */
static void build_inputs(input_set *s)
{
	static const fmt_id narrow[] = { FMT_FP16, FMT_BF16, FMT_E4M3, FMT_E5M2 };
	for (size_t k = 0; k < sizeof narrow / sizeof narrow[0]; k++) {
		const fmt_info *f = fmt_get(narrow[k]);
		uint32_t count = 1u << f->width;
		for (uint32_t b = 0; b < count; b++) {
			double v = fmt_to_double(f, b);
			if (isnan(v))
				continue;
			uint32_t x = f2u((float)v);
			add(s, x);
			add(s, x + 1);
			if (x & 0x7fffffffu)
				add(s, x - 1);
			uint32_t nb;
			if (!isinf(v) && fmt_next_up(f, b, &nb)) {
				double w = fmt_to_double(f, nb);
				if (isfinite(w)) {
					uint32_t mid = f2u((float)((v + w) / 2));   /* exact: one more bit than f */
					add(s, mid);
					add(s, mid + 1);
					add(s, mid - 1);
				}
			}
		}
	}
	static const uint16_t lows[] = { 0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x3fff, 0x4000, 0x7ffe,
	                                 0x7fff, 0x8000, 0x8001, 0x8fff, 0xc000, 0xfffe, 0xffff, 0x5a5a };
	for (uint32_t hi = 0; hi < 0x10000; hi++)
		for (size_t l = 0; l < sizeof lows / sizeof lows[0]; l++)
			add(s, hi << 16 | lows[l]);
	static const uint32_t specials[] = {
		0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x7f7fffff, 0xff7fffff,
		0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fbfffff, 0x7fffffff,
		0x477fe000, 0x477fefff, 0x477ff000, 0x477ff001, 0x43e00000, 0x43e80000, 0x43f00000, 0x47600000,
		0x47700000, 0x33800000, 0x33000000, 0x33000001, 0x3b000000, 0x3a800000, 0x37800000, 0x37000000,
	};
	for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
		add(s, specials[i]);
	for (uint32_t i = 0; i < (1u << 22); i++)
		add(s, rng_bits(0xfeed, i));
}

/* --- the CPU side, on several threads --- */

typedef enum { OP_ENCODE, OP_QUANTIZE } op_kind;

typedef struct {
	op_kind op;
	fmt_bulk_opts o;
	const float *in;
	void *out;
	size_t begin, end;
} cpu_job;

static void *cpu_run(void *arg)
{
	cpu_job *j = arg;
	fmt_bulk_opts o = j->o;
	o.index0 += j->begin;
	size_t es = fmt_bulk_elem_size(o.fmt), n = j->end - j->begin;
	if (j->op == OP_ENCODE) {
		fmt_bulk_encode(FMT_SIMD_AUTO, &o, (char *)j->out + j->begin * es, j->in + j->begin, n);
	} else {
		float *x = (float *)j->out + j->begin;
		memcpy(x, j->in + j->begin, n * sizeof *x);
		fmt_bulk_quantize(FMT_SIMD_AUTO, &o, x, n);
	}
	return NULL;
}

static void cpu_parallel(op_kind op, const fmt_bulk_opts *o, const float *in, void *out, size_t n)
{
	long nt = sysconf(_SC_NPROCESSORS_ONLN);
	int t = nt < 1 ? 1 : nt > 32 ? 32 : (int)nt;
	pthread_t tid[32];
	cpu_job jobs[32];
	for (int i = 0; i < t; i++) {
		jobs[i] = (cpu_job){ .op = op, .o = *o, .in = in, .out = out, .begin = n * (size_t)i / (size_t)t,
		                     .end = n * (size_t)(i + 1) / (size_t)t };
		if (pthread_create(&tid[i], NULL, cpu_run, &jobs[i]) != 0)
			cpu_run(&jobs[i]), tid[i] = 0;
	}
	for (int i = 0; i < t; i++)
		if (tid[i])
			pthread_join(tid[i], NULL);
}

/* --- comparisons --- */

static uint32_t elem(const void *a, size_t i, size_t es)
{
	uint32_t v = 0;
	memcpy(&v, (const char *)a + i * es, es);
	return v;
}

/* Number of differing elements; *first gets the first one. */
static size_t diff(const void *a, const void *b, size_t n, size_t es, size_t *first)
{
	size_t bad = 0;
	*first = n;
	if (!memcmp(a, b, n * es))
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (elem(a, i, es) != elem(b, i, es)) {
			if (!bad)
				*first = i;
			bad++;
		}
	}
	return bad;
}

typedef struct {
	float *d_in, *d_x, *d_u, *d_c;
	void *d_out;
	size_t cap;
} device_bufs;

static void device_reserve(device_bufs *d, size_t n)
{
	if (n <= d->cap)
		return;
	gpu_free(d->d_in);
	gpu_free(d->d_x);
	gpu_free(d->d_u);
	gpu_free(d->d_c);
	gpu_free(d->d_out);
	size_t b = (n + 4) * sizeof(float);
	if (gpu_alloc((void **)&d->d_in, b) || gpu_alloc((void **)&d->d_x, b) || gpu_alloc((void **)&d->d_u, b) ||
	    gpu_alloc((void **)&d->d_c, b) || gpu_alloc(&d->d_out, b))
		die("gpu_alloc");
	d->cap = n;
}

static const char *mode_name(fmt_mode m)
{
	return m == FMT_SR ? "sr" : "rne";
}

/* Encode and quantize of in[0..n) on both sides; shift (0..3 elements)
 * misaligns the device arrays to exercise the unvectorised loop. */
static void check_rounding(device_bufs *d, const float *in, size_t n, const fmt_bulk_opts *o, size_t shift,
                           const char *label, void *cpu_out, void *gpu_out)
{
	size_t es = fmt_bulk_elem_size(o->fmt);
	device_reserve(d, n + shift);
	float *din = d->d_in + shift;
	void *dout = (char *)d->d_out + shift * es;
	if (gpu_put(din, in, n * sizeof(float)) || gpu_bulk_encode(o, dout, din, n) ||
	    gpu_get(gpu_out, dout, n * es))
		die("encode");
	cpu_parallel(OP_ENCODE, o, in, cpu_out, n);
	size_t first, bad = diff(cpu_out, gpu_out, n, es, &first);
	report(!bad, "encode %s %s%s index0 %" PRIu64 " shift %zu (%s, %zu inputs): %zu differ%s", fmt_get(o->fmt)->name,
	       mode_name(o->mode), o->saturate ? " saturate" : "", o->index0, shift, label, n, bad, bad ? ":" : "");
	if (bad)
		printf("#   first: input 0x%08" PRIx32 " cpu 0x%" PRIx32 " gpu 0x%" PRIx32 "\n", f2u(in[first]),
		       elem(cpu_out, first, es), elem(gpu_out, first, es));

	float *dx = d->d_x + shift;
	if (gpu_put(dx, in, n * sizeof(float)) || gpu_bulk_quantize(o, dx, n) || gpu_get(gpu_out, dx, n * 4))
		die("quantize");
	cpu_parallel(OP_QUANTIZE, o, in, cpu_out, n);
	bad = diff(cpu_out, gpu_out, n, 4, &first);
	report(!bad, "quantize %s %s%s index0 %" PRIu64 " shift %zu (%s): %zu differ", fmt_get(o->fmt)->name,
	       mode_name(o->mode), o->saturate ? " saturate" : "", o->index0, shift, label, bad);
	if (bad)
		printf("#   first: input 0x%08" PRIx32 " cpu 0x%08" PRIx32 " gpu 0x%08" PRIx32 "\n", f2u(in[first]),
		       elem(cpu_out, first, 4), elem(gpu_out, first, 4));
}

/* fp8-e4m3 overflow on the device against hand-derived patterns (no inf:
 * past 464, or an infinity, gives the NaN with the sign, 0x7f or 0xff; a
 * NaN input 0x7f; saturated, +-448 = 0x7e, 0xfe), in each position of a
 * vector group and of the single elements after it (13 elements). */
static void check_e4m3_overflow(void)
{
	static const struct {
		uint32_t in;
		int sat;
		uint8_t out;
	} cases[] = {
		{ 0x447a0000u, 0, 0x7f }, { 0xc47a0000u, 0, 0xff }, { 0x7f800000u, 0, 0x7f }, { 0xff800000u, 0, 0xff },
		{ 0x7fc00000u, 0, 0x7f }, { 0xffc00000u, 0, 0x7f }, { 0xc47a0000u, 1, 0xfe }, { 0xff800000u, 1, 0xfe },
	};
	for (int m = 0; m < 2; m++)
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			float in[13];
			uint8_t out[13];
			for (int j = 0; j < 13; j++)
				in[j] = u2f(cases[i].in);
			fmt_bulk_opts o = { .fmt = FMT_E4M3, .mode = m ? FMT_SR : FMT_RNE, .saturate = cases[i].sat, .seed = 3 };
			if (gpu_round_host(&o, out, in, 13, NULL, 0))
				die("e4m3 overflow");
			int bad = 0;
			for (int j = 0; j < 13; j++)
				bad += out[j] != cases[i].out;
			report(!bad, "e4m3 %s%s of 0x%08" PRIx32 " gives 0x%02x (first element 0x%02x)", mode_name(o.mode),
			       cases[i].sat ? " saturate" : "", cases[i].in, cases[i].out, out[0]);
		}
}

static void check_decode(device_bufs *d, fmt_id fmt, const input_set *s, void *enc, float *cpu, float *gpu)
{
	const fmt_info *f = fmt_get(fmt);
	size_t es = fmt_bulk_elem_size(fmt), n;
	if (f->width <= 16) {
		n = (size_t)1 << f->width;   /* every pattern */
		for (size_t i = 0; i < n; i++)
			memcpy((char *)enc + i * es, &i, es);
	} else {
		n = s->n;                    /* fp32/tf32: the input set's patterns */
		for (size_t i = 0; i < n; i++) {
			uint32_t b = f2u(s->v[i]) >> (fmt == FMT_TF32 ? 13 : 0);
			memcpy((char *)enc + i * es, &b, es);
		}
	}
	device_reserve(d, n);
	if (gpu_put(d->d_out, enc, n * es) || gpu_bulk_decode(fmt, d->d_x, d->d_out, n) ||
	    gpu_get(gpu, d->d_x, n * 4))
		die("decode");
	fmt_bulk_decode(FMT_SIMD_AUTO, fmt, cpu, enc, n);
	size_t first, bad = diff(cpu, gpu, n, 4, &first);
	report(!bad, "decode %s (%zu patterns): %zu differ", f->name, n, bad);
	if (bad)
		printf("#   first: pattern 0x%" PRIx32 " cpu 0x%08" PRIx32 " gpu 0x%08" PRIx32 "\n", elem(enc, first, es),
		       f2u(cpu[first]), f2u(gpu[first]));
}

/* x (finite inputs) += u (small), plain and Kahan, both sides. */
static void check_accumulate(device_bufs *d, const input_set *s, fmt_id fmt, fmt_mode mode, bool kahan)
{
	size_t n = 1 << 20;
	float *x = malloc(n * 4), *u = malloc(n * 4), *c = malloc(n * 4), *gx = malloc(n * 4), *gc = malloc(n * 4);
	if (!x || !u || !c || !gx || !gc) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		float v;
		do
			v = s->v[(j++ * 7919) % s->n];
		while (!isfinite(v) || fabsf(v) > 1e30f);
		fmt_bulk_opts q = { .fmt = fmt, .mode = FMT_RNE, .saturate = true };
		fmt_bulk_quantize(FMT_SIMD_PORTABLE, &q, &v, 1);   /* a value of the format */
		x[i] = v;
		/* updates from far below half a spacing to several spacings */
		u[i] = ldexpf((float)(rng_bits(3, i) >> 8) * 0x1p-24f - 0.5f, (int)(rng_bits(4, i) % 40) - 20) * fabsf(v);
		c[i] = kahan ? ldexpf(u[i], -9) : 0;
	}
	fmt_bulk_opts o = { .fmt = fmt, .mode = mode, .seed = 77, .index0 = 0xfffff000ull };
	device_reserve(d, n);
	if (gpu_put(d->d_x, x, n * 4) || gpu_put(d->d_u, u, n * 4) || gpu_put(d->d_c, c, n * 4))
		die("accumulate upload");
	size_t gsame, csame;
	if (gpu_bulk_accumulate(&o, d->d_x, kahan ? d->d_c : NULL, d->d_u, n, &gsame) || gpu_get(gx, d->d_x, n * 4) ||
	    gpu_get(gc, d->d_c, n * 4))
		die("accumulate");
	fmt_bulk_accumulate(FMT_SIMD_AUTO, &o, x, kahan ? c : NULL, u, n, &csame);
	size_t first, bad = diff(x, gx, n, 4, &first), badc = kahan ? diff(c, gc, n, 4, &first) : 0;
	report(!bad && !badc && gsame == csame, "accumulate %s %s%s: %zu values and %zu compensations differ, "
	       "unchanged cpu %zu gpu %zu", fmt_get(fmt)->name, mode_name(mode), kahan ? " kahan" : "", bad, badc, csame,
	       gsame);
	free(x), free(u), free(c), free(gx), free(gc);
}

/* --- drift --- */

static bool same_double(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

/* Runs p on both devices, advancing in the pieces given (0-terminated; the
 * last repeats), and compares every field of every variant's state. */
static void check_drift(const char *label, drift_params p, const size_t *pieces)
{
	drift_state st[2][DRIFT_VARIANT_COUNT];
	for (int dev = 0; dev < 2; dev++) {
		p.device = dev ? DRIFT_DEVICE_CUDA : DRIFT_DEVICE_CPU;
		drift_sim *s;
		char err[512];
		mp_status rc = drift_create(&s, &p, err, sizeof err);
		if (rc != MP_OK) {
			report(false, "drift %s: create on %s: %s (%s)", label, dev ? "cuda" : "cpu", mp_status_message(rc),
			       err);
			return;
		}
		size_t k = 0;
		while (drift_step_count(s) < p.steps && drift_status(s) == MP_OK) {
			drift_advance(s, pieces[k]);
			if (pieces[k + 1])
				k++;
		}
		drift_snapshot(s, st[dev]);
		if (drift_status(s) != MP_OK) {
			report(false, "drift %s: GPU failed: %s", label, drift_error(s));
			drift_free(s);
			return;
		}
		drift_free(s);
	}
	int bad = 0;
	for (int v = 0; v < DRIFT_VARIANT_COUNT; v++) {
		const drift_state *a = &st[0][v], *b = &st[1][v];
		bool ok = same_double(a->start, b->start) && same_double(a->mean, b->mean) &&
		          same_double(a->drift, b->drift) && same_double(a->retained, b->retained) &&
		          a->unchanged_frac == b->unchanged_frac;
		if (!ok) {
			bad++;
			printf("#   %s: cpu mean %.17g unchanged %.17g, gpu mean %.17g unchanged %.17g\n",
			       drift_variant_name((drift_variant)v), a->mean, a->unchanged_frac, b->mean, b->unchanged_frac);
		}
	}
	report(!bad, "drift %s (E %zu, T %zu, %s, x0 %g): %d variants differ (bf16-rne retained %.4f, bf16-sr %.4f)",
	       label, p.elements, p.steps, drift_dist_name(p.dist), p.x0, bad, st[0][DRIFT_BF16_RNE].retained,
	       st[0][DRIFT_BF16_SR].retained);
}

/* --- GEMM (the training backend's Linear product) --- */

/* Operands as the GPU reads them: fp32 arrays, or 16-bit patterns rounded
 * (RNE) from them on the CPU; *exact gets their values. */
static void *gemm_operand(fmt_id fmt, const float *v, size_t n, double *exact)
{
	bool narrow = fmt == FMT_BF16 || fmt == FMT_FP16;
	void *enc = malloc(n * (narrow ? 2 : 4));
	if (!enc) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	if (narrow) {
		fmt_bulk_opts o = { .fmt = fmt, .mode = FMT_RNE };
		fmt_bulk_encode(FMT_SIMD_AUTO, &o, enc, v, n);
		for (size_t i = 0; i < n; i++)
			exact[i] = fmt_to_double(fmt_get(fmt), ((uint16_t *)enc)[i]);
	} else {
		memcpy(enc, v, n * 4);
		for (size_t i = 0; i < n; i++)
			exact[i] = v[i];
	}
	return enc;
}

/* out = a b^T + beta c on the GPU; returns out (M x N, malloc'd) or NULL after
 * reporting a failure. */
static float *gemm_on_gpu(fmt_id fmt, const void *a, const void *b, const float *c, size_t M, size_t N, size_t K,
                          float beta)
{
	size_t es = fmt == FMT_BF16 || fmt == FMT_FP16 ? 2 : 4;
	void *da = NULL, *db = NULL;
	float *dc = NULL, *out = malloc(M * N * 4);
	if (!out || gpu_alloc(&da, M * K * es) || gpu_alloc(&db, N * K * es) || gpu_alloc((void **)&dc, M * N * 4))
		die("gemm alloc");
	mp_status st = gpu_put(da, a, M * K * es);
	if (st == MP_OK)
		st = gpu_put(db, b, N * K * es);
	if (st == MP_OK)
		st = gpu_put(dc, c, M * N * 4);
	if (st == MP_OK)
		st = gpu_gemm_nt(fmt, dc, da, db, M, N, K, beta);
	if (st == MP_OK)
		st = gpu_get(out, dc, M * N * 4);
	gpu_free(da), gpu_free(db), gpu_free(dc);
	if (st != MP_OK) {
		report(false, "gemm %s %zux%zux%zu: %s", fmt_get(fmt)->name, M, N, K, gpu_last_error());
		free(out);
		return NULL;
	}
	return out;
}

/* Random operands of mixed sign and magnitude against an fp64 sum of the
 * stored operands' exact products: within the fp32 accumulation bound
 * K 2^-22 sum|a b| (twice the textbook gamma_K, for tensor cores' internal
 * order), plus for tf32 the operands' own rounding (2^-8: cut or rounded to 11 bits). A
 * transposed or misplaced operand misses by order 1. */
static void check_gemm_random(fmt_id fmt, size_t M, size_t N, size_t K, float beta)
{
	float *a = malloc(M * K * 4), *b = malloc(N * K * 4), *c = malloc(M * N * 4);
	double *ea = malloc(M * K * 8), *eb = malloc(N * K * 8);
	if (!a || !b || !c || !ea || !eb) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < M * K; i++)
		a[i] = ldexpf((float)(rng_bits(21, i) >> 8) * 0x1p-24f - 0.5f, (int)(rng_bits(22, i) % 9) - 4);
	for (size_t i = 0; i < N * K; i++)
		b[i] = ldexpf((float)(rng_bits(23, i) >> 8) * 0x1p-24f - 0.5f, (int)(rng_bits(24, i) % 9) - 4);
	for (size_t i = 0; i < M * N; i++)
		c[i] = (float)(rng_bits(25, i) >> 8) * 0x1p-24f;
	void *sa = gemm_operand(fmt, a, M * K, ea), *sb = gemm_operand(fmt, b, N * K, eb);
	float *g = gemm_on_gpu(fmt, sa, sb, c, M, N, K, beta);
	if (g) {
		size_t bad = 0, worst_i = 0;
		double worst = 0;
		for (size_t i = 0; i < M; i++) {
			for (size_t j = 0; j < N; j++) {
				double ref = beta * (double)c[i * N + j], mag = fabs(ref);
				for (size_t k = 0; k < K; k++) {
					ref += ea[i * K + k] * eb[j * K + k];
					mag += fabs(ea[i * K + k] * eb[j * K + k]);
				}
				double tol = ((double)K * 0x1p-22 + 0x1p-23 + (fmt == FMT_TF32 ? 0x1p-8 : 0)) * mag + 1e-30;
				double err = fabs((double)g[i * N + j] - ref);
				if (!(err <= tol))
					bad++;
				if (!(err / tol <= worst))
					worst = err / tol, worst_i = i * N + j;
			}
		}
		report(!bad, "gemm %s %zux%zux%zu beta %g: %zu outside the bound (worst at %.3g of it, index %zu)",
		       fmt_get(fmt)->name, M, N, K, (double)beta, bad, worst, worst_i);
	}
	free(g), free(a), free(b), free(c), free(ea), free(eb), free(sa), free(sb);
}

/* tf32: 64 x (1 + 2^-16) is 64 + 2^-10 in fp32 (every partial sum
 * j + j 2^-16, j <= 64, is exact in fp32, whatever the order) but 64 when the
 * operands are cut to TF32's 11 bits. cuBLAS may pick a kernel without tensor cores for
 * a tiny product, and NVIDIA_TF32_OVERRIDE=0 turns TF32 off, so a 64^3
 * product is used (large enough for a tensor-core kernel) and either result is
 * accepted when every element agrees; anything else fails. */
static void check_gemm_tf32(void)
{
	enum { D = 64 };
	float *a = malloc(D * D * 4), *b = malloc(D * D * 4), *c = calloc(D * D, 4);
	if (!a || !b || !c)
		die("tf32 alloc");
	for (int i = 0; i < D * D; i++)
		a[i] = 1.0f + 0x1p-16f, b[i] = 1.0f;
	float *g = gemm_on_gpu(FMT_TF32, a, b, c, D, D, D, 0.0f);
	if (g) {
		size_t cut = 0, full = 0;
		for (int i = 0; i < D * D; i++) {
			cut += g[i] == 64.0f;
			full += g[i] == 64.0f + 0x1p-10f;
		}
		const char *env = getenv("NVIDIA_TF32_OVERRIDE");
		report(cut == D * D || full == D * D,
		       "gemm tf32 64x64x64: %s (%zu elements 64 = operands cut to 11 bits, %zu 64+2^-10 = fp32; "
		       "NVIDIA_TF32_OVERRIDE=%s)",
		       cut == D * D ? "tensor cores, operands cut to TF32" : full == D * D ? "fp32 (TF32 not used)" : "mixed",
		       cut, full, env ? env : "unset");
	}
	free(g), free(a), free(b), free(c);
}

/* Hand-derived exact results. fp32 must not run on TF32: 8 x (1 + 2^-20)
 * is 8 + 2^-17 in fp32 (21 significant bits) but 8 when operands are cut to
 * TF32's 11 bits, which the tf32 format must then give. Small integers in
 * bf16 and fp16 multiply and add exactly in fp32. */
static void check_gemm_exact(void)
{
	float a8[8], b8[8], c1 = 0;
	for (int k = 0; k < 8; k++)
		a8[k] = 1.0f + 0x1p-20f, b8[k] = 1.0f;
	float *g = gemm_on_gpu(FMT_FP32, a8, b8, &c1, 1, 1, 8, 0.0f);
	if (g)
		report(g[0] == 8.0f + 0x1p-17f, "gemm fp32 keeps fp32 operands (TF32 off): %a, expected 0x1.00004p+3",
		       (double)g[0]);
	free(g);
	check_gemm_tf32();
	/* M = 3, N = 5, K = 64: a[i][k] = (i + k) % 7 - 3, b[j][k] = (2j + k) % 5 - 2 */
	enum { EM = 3, EN = 5, EK = 64 };
	float a[EM * EK], b[EN * EK], c[EM * EN];
	for (int i = 0; i < EM; i++)
		for (int k = 0; k < EK; k++)
			a[i * EK + k] = (float)((i + k) % 7 - 3);
	for (int j = 0; j < EN; j++)
		for (int k = 0; k < EK; k++)
			b[j * EK + k] = (float)((2 * j + k) % 5 - 2);
	for (int i = 0; i < EM * EN; i++)
		c[i] = (float)i;
	static const fmt_id f16[] = { FMT_BF16, FMT_FP16 };
	for (int f = 0; f < 2; f++) {
		double ea[EM * EK], eb[EN * EK];
		void *sa = gemm_operand(f16[f], a, EM * EK, ea), *sb = gemm_operand(f16[f], b, EN * EK, eb);
		g = gemm_on_gpu(f16[f], sa, sb, c, EM, EN, EK, 1.0f);
		int bad = 0;
		for (int i = 0; g && i < EM; i++) {
			for (int j = 0; j < EN; j++) {
				int ref = i * EN + j;   /* c */
				for (int k = 0; k < EK; k++)
					ref += ((i + k) % 7 - 3) * ((2 * j + k) % 5 - 2);
				bad += g[i * EN + j] != (float)ref;
			}
		}
		if (g)
			report(!bad, "gemm %s small integers exact (3x5x64, beta 1): %d wrong", fmt_get(f16[f])->name, bad);
		free(g), free(sa), free(sb);
	}
	/* the fp8 formats are refused, naming what is supported */
	mp_status st = gpu_gemm_nt(FMT_E4M3, NULL, NULL, NULL, 1, 1, 1, 0.0f);
	report(st == MP_EUNSUPPORTED && strstr(gpu_last_error(), "bf16"), "gemm fp8-e4m3 refused: %s",
	       gpu_last_error());
}

/* --- every fp32 input --- */

static void exhaustive(device_bufs *d, fmt_id fmt, fmt_mode mode)
{
	size_t chunk = (size_t)1 << 26, es = fmt_bulk_elem_size(fmt), bad = 0;
	float *in = malloc(chunk * 4);
	void *c = malloc(chunk * es), *g = malloc(chunk * es);
	if (!in || !c || !g) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	uint32_t bad_in = 0;
	for (uint64_t base = 0; base < (1ull << 32); base += chunk) {
		for (size_t i = 0; i < chunk; i++)
			in[i] = u2f((uint32_t)(base + i));
		fmt_bulk_opts o = { .fmt = fmt, .mode = mode, .seed = 99, .index0 = base };
		device_reserve(d, chunk);
		if (gpu_put(d->d_in, in, chunk * 4) || gpu_bulk_encode(&o, d->d_out, d->d_in, chunk) ||
		    gpu_get(g, d->d_out, chunk * es))
			die("exhaustive encode");
		cpu_parallel(OP_ENCODE, &o, in, c, chunk);
		size_t first, b = diff(c, g, chunk, es, &first);
		if (b && !bad)
			bad_in = (uint32_t)(base + first);
		bad += b;
	}
	report(!bad, "exhaustive encode %s %s, all 2^32 fp32 inputs: %zu differ%s", fmt_get(fmt)->name,
	       mode_name(mode), bad, bad ? " (see below)" : "");
	if (bad)
		printf("#   first: input 0x%08" PRIx32 "\n", bad_in);
	free(in), free(c), free(g);
}

/* --- the steps of the run, in order --- */

/* Every format's bulk rounding, RNE and SR, plain and saturated, on the
 * structured and random inputs; SR across the 2^32 index boundaries and
 * unaligned arrays with odd lengths; the CPU-only formats refused. */
static void check_all_rounding(device_bufs *d, const input_set *s, void *cpu_out, void *gpu_out)
{
	for (int f = 0; f < FMT_COUNT; f++) {
		if (!fmt_is_kernel((fmt_id)f)) {   /* fp6, fp4, FNUZ, e8m0: CPU only, refused with a reason */
			fmt_bulk_opts o = { .fmt = (fmt_id)f, .mode = FMT_RNE };
			report(gpu_bulk_encode(&o, NULL, NULL, 0) == MP_EUNSUPPORTED &&
			           gpu_bulk_decode((fmt_id)f, NULL, NULL, 0) == MP_EUNSUPPORTED &&
			           strstr(gpu_last_error(), fmt_get((fmt_id)f)->name) != NULL,
			       "%s: the GPU kernels refuse it, naming it", fmt_get((fmt_id)f)->name);
			char err[512] = "";   /* a boundary: the same sentence in the caller's buffer */
			report(gpu_round_host(&o, NULL, NULL, 0, err, sizeof err) == MP_EUNSUPPORTED &&
			           strstr(err, fmt_get((fmt_id)f)->name) != NULL,
			       "%s: gpu_round_host refuses it, naming it in err: %s", fmt_get((fmt_id)f)->name, err);
			continue;
		}
		for (int m = 0; m < 2; m++) {
			for (int sat = 0; sat < 2; sat++) {
				fmt_bulk_opts o = { .fmt = (fmt_id)f, .mode = m ? FMT_SR : FMT_RNE, .saturate = sat, .seed = 12345 };
				check_rounding(d, s->v, s->n, &o, 0, "structured + random", cpu_out, gpu_out);
			}
		}
		/* SR across the 2^32 index boundary, where the stream's key changes, and
		 * unaligned arrays with odd lengths */
		fmt_bulk_opts o = { .fmt = (fmt_id)f, .mode = FMT_SR, .seed = 9, .index0 = (1ull << 32) - 100003 };
		check_rounding(d, s->v, 200001, &o, 0, "across 2^32", cpu_out, gpu_out);
		o.index0 = (7ull << 32) - 5;   /* the key changes inside the first vector group */
		check_rounding(d, s->v, 4099, &o, 0, "across 7 * 2^32", cpu_out, gpu_out);
		o.index0 = 5;
		check_rounding(d, s->v + 1, 100003, &o, 1, "unaligned", cpu_out, gpu_out);
		o.mode = FMT_RNE;
		check_rounding(d, s->v + 3, 1001, &o, 3, "unaligned", cpu_out, gpu_out);
	}
}

/* Every GPU format's decode of the encoded inputs. */
static void check_all_decode(device_bufs *d, const input_set *s)
{
	float *cf = malloc(s->n * 4), *gf = malloc(s->n * 4);
	void *enc = malloc(s->n * 4);
	if (!cf || !gf || !enc) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	for (int f = 0; f < FMT_COUNT; f++)
		if (fmt_is_kernel((fmt_id)f))
			check_decode(d, (fmt_id)f, s, enc, cf, gf);
	free(cf), free(gf), free(enc);
}

/* Accumulation in every GPU format, RNE and SR, plain and Kahan. */
static void check_all_accumulate(device_bufs *d, const input_set *s)
{
	static const fmt_id acc_fmts[] = { FMT_FP32, FMT_BF16, FMT_FP16, FMT_E4M3, FMT_E5M2, FMT_TF32 };
	for (size_t f = 0; f < sizeof acc_fmts / sizeof acc_fmts[0]; f++)
		for (int m = 0; m < 2; m++)
			for (int k = 0; k < 2; k++)
				check_accumulate(d, s, acc_fmts[f], m ? FMT_SR : FMT_RNE, k);
}

/* drift: every distribution, starts that fp16 cannot hold, several
 * advance patterns, element counts off the launch shape, and one run of
 * 10^8 updates */
static void check_drift_runs(void)
{
	drift_params p = drift_defaults();
	p.elements = 100003;
	p.steps = 64;
	p.seed = 5;
	check_drift("normal, pieces 1,7,56", p, (const size_t[]){ 1, 7, 56, 0 });
	p.dist = DRIFT_DIST_UNIFORM;
	p.elements = 4099;
	p.steps = 500;
	p.x0 = 1;
	check_drift("uniform from 1", p, (const size_t[]){ 33, 0 });
	p.dist = DRIFT_DIST_CONSTANT;
	p.mean = 0.5;
	p.x0 = 600;
	p.elements = 1000;
	p.steps = 300;
	check_drift("constant 0.5 at 600", p, (const size_t[]){ 300, 0 });
	p = drift_defaults();
	p.x0 = 1e5;   /* beyond fp16's 65504: that variant starts at inf */
	p.elements = 1000;
	p.steps = 50;
	check_drift("x0 beyond fp16", p, (const size_t[]){ 50, 0 });
	p = drift_defaults();
	p.mean = 0;
	p.std = 1e-3;
	p.x0 = 0.01;
	p.elements = 77777;
	p.steps = 200;
	p.seed = 1ull << 40;
	check_drift("zero-mean small steps", p, (const size_t[]){ 13, 0 });
	p = drift_defaults();
	p.elements = (size_t)1 << 20;
	p.steps = 96;
	p.seed = 2;
	check_drift("10^8 updates", p, (const size_t[]){ 32, 0 });
}

/* the training backend's GEMM: hand-derived exact cases, then random
 * shapes off the tensor cores' tile sizes */
static void check_gemm(void)
{
	check_gemm_exact();
	static const fmt_id gemm_fmts[] = { FMT_FP32, FMT_TF32, FMT_BF16, FMT_FP16 };
	for (size_t f = 0; f < sizeof gemm_fmts / sizeof gemm_fmts[0]; f++) {
		check_gemm_random(gemm_fmts[f], 64, 96, 128, 0.0f);
		check_gemm_random(gemm_fmts[f], 37, 53, 211, 1.0f);
		check_gemm_random(gemm_fmts[f], 256, 768, 192, 0.5f);
	}
}

/* With MIXPREC_GPU_EXHAUSTIVE=1: every fp32 input for bf16, fp16 and
 * fp8-e4m3, RNE and SR. */
static void check_exhaustive_if_asked(device_bufs *d)
{
	if (getenv("MIXPREC_GPU_EXHAUSTIVE") && !strcmp(getenv("MIXPREC_GPU_EXHAUSTIVE"), "1")) {
		static const fmt_id ex[] = { FMT_BF16, FMT_FP16, FMT_E4M3 };
		for (size_t f = 0; f < sizeof ex / sizeof ex[0]; f++)
			for (int m = 0; m < 2; m++)
				exhaustive(d, ex[f], m ? FMT_SR : FMT_RNE);
	}
}

int main(void)
{
	char why[384];
	gpu_info info;
	if (gpu_ready(&info, why, sizeof why) != MP_OK) {
		printf("1..0 # SKIP %s\n", why);
		return 77;
	}
	printf("# %s, compute capability %d.%d, %.1f GiB, driver %d, runtime %d, CPU path %s\n", info.name,
	       info.cc_major, info.cc_minor, (double)info.memory / (1 << 30), info.driver_version, info.runtime_version,
	       fmt_simd_name(fmt_simd_best()));

	input_set s = { 0 };
	build_inputs(&s);
	printf("# %zu rounding inputs\n", s.n);
	device_bufs d = { 0 };
	void *cpu_out = malloc((s.n + 4) * 4), *gpu_out = malloc((s.n + 4) * 4);
	if (!cpu_out || !gpu_out) {
		printf("Bail out! out of memory\n");
		return 1;
	}

	check_all_rounding(&d, &s, cpu_out, gpu_out);
	check_e4m3_overflow();
	check_all_decode(&d, &s);
	check_all_accumulate(&d, &s);
	check_drift_runs();
	check_gemm();
	check_exhaustive_if_asked(&d);

	printf("1..%d\n", ntests);
	printf("# %d of %d checks failed\n", nfailed, ntests);
	free(s.v);
	free(cpu_out);
	free(gpu_out);
	return nfailed ? 1 : 0;
}
