/* Solving an exercise: the helpers every kind fills a solution with, the
 * table of kinds (designated initialisers: the kind an exercise names holds
 * its solver) and ex_solve, which checks what a kind answered against the
 * fields the exercise declares. The kinds live in exercise_kinds_*.c. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/round.h"
#include "teach/exercise.h"
#include "teach/exercise_solve.h"
#include "util/numtext.h"

/* ---- helpers to fill a solution -------------------------------------------- */

int exs_fidx(solve_ctx *c, const char *name)
{
	return ex_field_index(c->ex, name);
}

/* The expected value of field, NULL when the exercise has no such field. */
static ex_value *slot(solve_ctx *c, const char *field)
{
	int i = exs_fidx(c, field);
	return i < 0 ? NULL : &c->sol->expect[i];
}

/* The text an answer key shows: whole numbers without an exponent. */
void exs_short_text(char *out, size_t n, double x)
{
	if (x == floor(x) && fabs(x) < 1e15)
		snprintf(out, n, "%.0f", x);
	else
		numtext_short(out, n, x);
}

void exs_set_num(solve_ctx *c, const char *field, double x)
{
	ex_value *e = slot(c, field);
	if (!e)
		return;
	e->type = EX_NUMBER;
	e->number = x;
	exs_short_text(e->text, sizeof e->text, x);
}

void exs_set_bits(solve_ctx *c, const char *field, const fmt_info *f, uint32_t bits)
{
	ex_value *e = slot(c, field);
	if (!e)
		return;
	e->type = EX_BITS;
	e->bits = bits;
	snprintf(e->text, sizeof e->text, "0x%0*x", fmt_hex_digits(f), (unsigned)bits);
}

/* A bare field of width bits (the kept fraction), shown in binary. */
void exs_set_field_bits(solve_ctx *c, const char *field, int width, uint32_t bits)
{
	ex_value *e = slot(c, field);
	if (!e)
		return;
	e->type = EX_BITS;
	e->bits = bits;
	int n = 0;
	for (int k = width - 1; k >= 0 && n < (int)sizeof e->text - 1; k--)
		e->text[n++] = (bits >> k) & 1 ? '1' : '0';
	e->text[n] = '\0';
}

void exs_set_choice(solve_ctx *c, const char *field, const char *choice)
{
	ex_value *e = slot(c, field);
	if (!e)
		return;
	e->type = EX_CHOICE;
	snprintf(e->choice, sizeof e->choice, "%s", choice);
	snprintf(e->text, sizeof e->text, "%s", choice);
}

/* The next mistake on field, its message fmt filled from ap and its tag fmt
 * itself (the same sentence for every variant, before its numbers go in);
 * value, when given, is the wrong answer it stands for. NULL, and nothing
 * added, when the exercise has no such field, value is the right answer
 * (two figures can coincide for some parameters) or the list is full. */
static ex_mistake *add_mistake(solve_ctx *c, const char *field, const ex_value *value, const char *fmt,
                               va_list ap)
{
	const ex_value *e = slot(c, field);
	if (!e || c->sol->nmistakes == EX_MAX_MISTAKES)
		return NULL;
	if (value && value->type == EX_NUMBER && e->number == value->number)
		return NULL;
	if (value && value->type == EX_CHOICE && strcmp(e->choice, value->choice) == 0)
		return NULL;
	ex_mistake *m = &c->sol->mistakes[c->sol->nmistakes++];
	memset(m, 0, sizeof *m);
	m->field = (size_t)(e - c->sol->expect);
	if (value)
		m->value = *value;
	m->tag = fmt;
	vsnprintf(m->message, sizeof m->message, fmt, ap);
	return m;
}

ex_mistake *exs_mistake(solve_ctx *c, const char *field, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ex_mistake *m = add_mistake(c, field, NULL, fmt, ap);
	va_end(ap);
	return m;
}

/* A wrong number, not taken when it is the right answer too. */
void exs_mistake_num(solve_ctx *c, const char *field, double x, const char *fmt, ...)
{
	ex_value v = { .type = EX_NUMBER, .number = x };
	va_list ap;
	va_start(ap, fmt);
	add_mistake(c, field, &v, fmt, ap);
	va_end(ap);
}

/* Whether x is within 1e-9 relative of field's expected number: a mistake
 * too close to the answer would shadow it. */
bool exs_number_close(solve_ctx *c, const char *field, double x)
{
	int i = exs_fidx(c, field);
	if (i < 0)
		return true;
	double e = c->sol->expect[i].number;
	return fabs(x - e) <= 1e-9 * fabs(e);
}

/* A wrong choice word for field and what to tell a student who picks it. */
void exs_mistake_choice(solve_ctx *c, const char *field, const char *word, const char *fmt, ...)
{
	ex_value v = { .type = EX_CHOICE };
	snprintf(v.choice, sizeof v.choice, "%s", word);
	va_list ap;
	va_start(ap, fmt);
	add_mistake(c, field, &v, fmt, ap);
	va_end(ap);
}

bool exs_fail(solve_ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return false;
}

/* A parameter as an exact number. */
bool exs_param_exact(solve_ctx *c, const char *name, fmt_num *out)
{
	const char *t = ex_variant_get(c->ex, c->v, name);
	char perr[160];
	if (!t)
		return exs_fail(c, "parameter %s is missing", name);
	if (fmt_parse_number(out, t, perr, sizeof perr) != MP_OK)
		return exs_fail(c, "parameter %s = '%s': %s", name, t, perr);
	if (out->kind != NUM_FINITE)
		return exs_fail(c, "parameter %s = '%s' must be finite", name, t);
	return true;
}

bool exs_param_double(solve_ctx *c, const char *name, double *out)
{
	fmt_num x;
	fmt_num_init(&x);
	bool ok = exs_param_exact(c, name, &x);
	if (ok) {
		*out = fmt_num_to_double(&x);   /* signed */
		if (!isfinite(*out))
			ok = exs_fail(c, "parameter %s is out of range", name);
	}
	fmt_num_clear(&x);
	return ok;
}

bool exs_param_positive(solve_ctx *c, const char *name, double *out)
{
	if (!exs_param_double(c, name, out))
		return false;
	if (!(*out > 0))
		return exs_fail(c, "parameter %s must be positive", name);
	return true;
}

/* The format named by parameter name, or def when the exercise has none. */
const fmt_info *exs_param_format(solve_ctx *c, const char *name, fmt_id def)
{
	const char *t = ex_variant_get(c->ex, c->v, name);
	if (!t)
		return fmt_get(def);
	const fmt_info *f = fmt_find(t);
	if (!f)
		exs_fail(c, "parameter %s = '%s' is not a format (%s)", name, t, fmt_known_names());
	return f;
}

/* Short texts for the worked solutions: each call gets its own buffer from a
 * ring, so several can appear in one printf. */
char *exs_ring(void)
{
	static _Thread_local char pool[16][40];
	static _Thread_local unsigned next;
	return pool[next++ % 16];
}

const char *exs_g(double x)
{
	char *buf = exs_ring();
	snprintf(buf, 40, "%.6g", x);
	return buf;
}

/* "2^-14" for a power of two. */
const char *exs_pow2_text(double x)
{
	int e;
	double m = frexp(x, &e);
	char *buf = exs_ring();
	if (m == 0.5)
		snprintf(buf, 40, "2^%d", e - 1);
	else
		snprintf(buf, 40, "%.6g", x);
	return buf;
}

bool exs_rne_flushes(const fmt_info *f, double x)
{
	fmt_round_ctl ctl = { .mode = FMT_RNE };
	uint32_t b = fmt_round_double(f, &ctl, fabs(x), NULL);
	return b == 0;
}

/* floor(log2 |x|) for a nonzero finite double, exactly. */
int exs_floor_log2(double x)
{
	int e;
	frexp(fabs(x), &e);
	return e - 1;
}

/* Spacing of f's grid around |x| (toward larger magnitude). */
double exs_spacing_at(const fmt_info *f, double x)
{
	int e = x == 0 ? fmt_emin(f) : exs_floor_log2(x);
	if (e < fmt_emin(f))
		e = fmt_emin(f);
	return ldexp(1.0, e - f->frac_bits);
}

/* The formats whose fields an exercise names ("fp16_bits", "e4m3_rel_error"). */
int exs_format_suffix(const char *field, const char *const *suffix, size_t n, fmt_id *id)
{
	for (size_t k = 0; k < n; k++) {
		size_t fl = strlen(field), sl = strlen(suffix[k]);
		if (fl > sl && strcmp(field + fl - sl, suffix[k]) == 0) {
			char name[EX_NAME_MAX];
			snprintf(name, sizeof name, "%.*s", (int)(fl - sl), field);
			const fmt_info *f = fmt_find(name);
			if (f) {
				*id = f->id;
				return (int)k;
			}
		}
	}
	return -1;
}

bool exs_field_format(const char *field, fmt_id *id)
{
	static const char *const suffix[] = { "_bits", "_value", "_rel_error" };
	return exs_format_suffix(field, suffix, sizeof suffix / sizeof suffix[0], id) >= 0;
}

void exs_field_name(char *out, size_t n, const char *prefix, const char *suffix)
{
	snprintf(out, n, "%s%s", prefix, suffix);
}

/* ---- the table ----------------------------------------------------------------- */

static const ex_kind kinds[] = {
	{ .name = "underflow",
	  .summary = "smallest normal and subnormal values; which formats flush a small gradient",
	  .params = "G",
	  .fields = "*_min_normal *_min_subnormal *_flushes *_stored",
	  .solve = exs_solve_underflow },
	{ .name = "loss-scale",
	  .summary = "scaling the loss by S scales every gradient by S",
	  .params = "S g",
	  .fields = "dscaled_dloss factor unscale scaled_grad unscaled_flushes scaled_flushes",
	  .solve = exs_solve_loss_scale },
	{ .name = "memory",
	  .summary = "training memory per parameter in bf16 mixed precision with Adam",
	  .params = "P",
	  .fields = "bytes_per_param total_gb total_gib rule_gb",
	  .solve = exs_solve_memory },
	{ .name = "zero",
	  .summary = "per-GPU training memory under ZeRO stage S on G GPUs",
	  .params = "P gpus stage",
	  .fields = "gpu_gb total_gb gpu_bytes_per_param",
	  .solve = exs_solve_zero },
	{ .name = "parallel",
	  .summary = "per-GPU model state under tensor parallelism t and pipeline parallelism p, for a recipe",
	  .params = "P recipe t p",
	  .fields = "gpu_gb gpus bytes_per_param",
	  .solve = exs_solve_parallel },
	{ .name = "kv-cache",
	  .summary = "a server's KV cache: bytes per token with grouped-query attention, and for a batch",
	  .params = "layers heads kv_heads head_dim bytes context batch",
	  .fields = "per_token_bytes per_token_kib total_gib total_gb",
	  .solve = exs_solve_kv_cache },
	{ .name = "hand-round",
	  .summary = "round a value by hand: bits, value and relative error per format",
	  .params = "V",
	  .fields = "*_bits *_value *_rel_error best worst",
	  .solve = exs_solve_hand_round },
	{ .name = "spacing",
	  .summary = "the spacing of a format's grid at a value, and the largest update that vanishes",
	  .params = "x",
	  .fields = "spacing vanish_below exponent",
	  .solve = exs_solve_spacing },
	{ .name = "update-vanish",
	  .summary = "why bf16 weights need fp32 master copies: vanishing updates and error growth",
	  .params = "w",
	  .fields = "spacing vanish_below steps",
	  .solve = exs_solve_update_vanish },
	{ .name = "overflow",
	  .summary = "a format's largest value and where overflow starts",
	  .params = "",
	  .fields = "max overflow_at min_normal min_subnormal epsilon max_spacing",
	  .solve = exs_solve_overflow },
	{ .name = "scale-choice",
	  .summary = "choosing a loss scale: the powers of two that keep a gradient range in fp16",
	  .params = "gmax gmin",
	  .fields = "max_scale min_scale fits",
	  .solve = exs_solve_scale_choice },
	{ .name = "lost-updates",
	  .summary = "repeated small updates to a low-precision value: how many are lost",
	  .params = "x0 u n",
	  .fields = "lost kept final",
	  .solve = exs_solve_lost_updates },
	{ .name = "drift-retained",
	  .summary = "the share of the drift each variant of mixprec drift keeps",
	  .params = "x0 u T",
	  .fields = "retained_fp32 retained_rne retained_kahan retained_fp16 retained_sr",
	  .solve = exs_solve_drift_retained },
	{ .name = "ema-stall",
	  .summary = "Adam's second moment v stored in a 16-bit format: where it stops growing",
	  .params = "beta2",
	  .fields = "stall_value steps",
	  .solve = exs_solve_ema_stall },
	{ .name = "round-steps",
	  .summary = "round a value by hand one step at a time: exponent, guard/round/sticky, decision, bits",
	  .params = "V",
	  .fields = "*_exponent *_exp_field *_fraction *_guard *_round *_sticky *_round_up *_bits",
	  .solve = exs_solve_round_steps },
	{ .name = "accum-error",
	  .summary = "K equal products summed by an accumulator of N truncated bits: result and error",
	  .params = "K N p",
	  .fields = "exact result rel_error exact_steps",
	  .solve = exs_solve_accum_error },
	{ .name = "fp8-delayed-scale",
	  .summary = "the scale TE's delayed recipe gives the next step after an amax history (max and most_recent)",
	  .params = "hist H",
	  .fields = "history_amax scale recent_scale",
	  .solve = exs_solve_fp8_delayed_scale },
	{ .name = "fp8-spike",
	  .summary = "a spike in a steady amax: the step delayed scaling saturates, by how much, for how long",
	  .params = "a F s H",
	  .fields = "overflow_step overshoot reduced_steps recovered_step why_current",
	  .solve = exs_solve_fp8_spike },
	{ .name = "mx-scale",
	  .summary = "an MX block's e8m0 scale and one element's bits under OCP's floor rule and the ceil rule",
	  .params = "block i",
	  .fields = "amax ocp_exponent ceil_exponent ocp_scale_bits ceil_scale_bits ocp_elem_bits ceil_elem_bits "
	            "ocp_elem_value ceil_elem_value",
	  .solve = exs_solve_mx_scale },
	{ .name = "nvfp4-decode",
	  .summary = "the value of an NVFP4 element from its bits, its block's e4m3 scale and the fp32 tensor scale",
	  .params = "elem scale tensor_scale",
	  .fields = "value elem_value block_scale",
	  .solve = exs_solve_nvfp4_decode },
	{ .name = "block-bits",
	  .summary = "bits per parameter of a block format, scales included, and the bytes of P parameters",
	  .params = "format P",
	  .fields = "bits_per_param scale_bits_per_param total_gb",
	  .solve = exs_solve_block_bits },
	{ .name = "mx-saturate",
	  .summary = "which element of an MX block OCP's floor rule saturates, and what it is stored as",
	  .params = "block",
	  .fields = "saturates stored",
	  .solve = exs_solve_mx_saturate },
	{ .name = "sr-bias",
	  .summary = "a value between two grid points: stochastic rounding's probability up and variance, nearest's bias",
	  .params = "t format",
	  .fields = "down up p_up variance rne_bias",
	  .solve = exs_solve_sr_bias },
	{ .name = "rounding-rules",
	  .summary = "a value between two grid points: round to odd, nearest ties toward zero, equal-probability SR's "
	             "mean and bias",
	  .params = "t format",
	  .fields = "down up rto rnz sre_mean sre_bias",
	  .solve = exs_solve_rounding_rules },
};

#define NKINDS (sizeof kinds / sizeof kinds[0])

const ex_kind *ex_kind_find(const char *name)
{
	for (size_t i = 0; i < NKINDS; i++)
		if (strcmp(kinds[i].name, name) == 0)
			return &kinds[i];
	return NULL;
}

const ex_kind *ex_kind_at(size_t i)
{
	return i < NKINDS ? &kinds[i] : NULL;
}

/* Whether every '|'-separated word of answer is one of f's choices (format
 * names compared by their canonical names). */
static bool choice_declared(const ex_field *f, const char *answer)
{
	char buf[EX_NAME_MAX];
	snprintf(buf, sizeof buf, "%s", answer);
	char *save = NULL;
	for (char *w = strtok_r(buf, "|", &save); w; w = strtok_r(NULL, "|", &save)) {
		bool found = false;
		for (size_t k = 0; k < f->nchoices && !found; k++) {
			const fmt_info *fi = fmt_find(f->choices[k]);
			found = strcmp(fi ? fi->name : f->choices[k], w) == 0;
		}
		if (!found)
			return false;
	}
	return true;
}

mp_status ex_solve(const ex_exercise *ex, const ex_variant *v, ex_solution *sol, char *err, size_t errlen)
{
	memset(sol, 0, sizeof *sol);
	if (errlen)
		err[0] = '\0';
	if (!ex->kind || !ex->kind->solve) {
		snprintf(err, errlen, "exercise %s has no kind", ex->id);
		return MP_EINVAL;
	}
	solve_ctx c = { .ex = ex, .v = v, .sol = sol, .err = err, .errlen = errlen };
	bool ok = ex->kind->solve(&c);
	if (ok && c.w.oom) {
		free(c.w.buf);
		return MP_ENOMEM;
	}
	if (ok) {
		for (size_t i = 0; i < ex->nfields; i++) {
			const ex_value *e = &sol->expect[i];
			if (!e->text[0]) {
				snprintf(err, errlen, "field %s: kind %s cannot answer it", ex->fields[i].name, ex->kind->name);
				ok = false;
			} else if ((e->type == EX_NUMBER) != (ex->fields[i].type == EX_NUMBER) ||
			           (e->type == EX_BITS) != (ex->fields[i].type == EX_BITS)) {
				snprintf(err, errlen, "field %s: kind %s answers it as %s", ex->fields[i].name, ex->kind->name,
				         e->type == EX_NUMBER ? "a number" : e->type == EX_BITS ? "bits" : "a choice");
				ok = false;
			} else if (e->type == EX_BITS && ex->fields[i].width && strspn(e->text, "01") != strlen(e->text)) {
				snprintf(err, errlen, "field %s holds a format's bits: declare it as 'bits FORMAT'", ex->fields[i].name);
				ok = false;
			} else if (e->type == EX_BITS && ex->fields[i].width && (int)strlen(e->text) != ex->fields[i].width) {
				snprintf(err, errlen, "field %s holds %zu bits: declare it as 'bits %zu'", ex->fields[i].name,
				         strlen(e->text), strlen(e->text));
				ok = false;
			} else if (e->type == EX_BITS && !ex->fields[i].width && strncmp(e->text, "0x", 2) != 0) {
				snprintf(err, errlen, "field %s holds %zu bits: declare it as 'bits %zu'", ex->fields[i].name,
				         strlen(e->text), strlen(e->text));
				ok = false;
			} else if (e->type == EX_BITS) {
				fmt_id id;
				if (exs_field_format(ex->fields[i].name, &id) && id != ex->fields[i].format) {
					snprintf(err, errlen, "field %s holds %s bits: declare it as 'bits %s'",
					         ex->fields[i].name, fmt_get(id)->name, fmt_get(id)->name);
					ok = false;
				}
			} else if (e->type == EX_CHOICE && !choice_declared(&ex->fields[i], e->choice)) {
				snprintf(err, errlen, "field %s: the answer '%s' is not among its choices", ex->fields[i].name,
				         e->choice);
				ok = false;
			}
		}
	}
	if (!ok) {
		free(c.w.buf);
		sol->worked = NULL;
		if (!err[0])
			snprintf(err, errlen, "cannot solve %s", ex->id);
		return MP_EINVAL;
	}
	sol->worked = c.w.buf ? c.w.buf : strdup("");
	return sol->worked ? MP_OK : MP_ENOMEM;
}
