#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/fp8scale.h"
#include "train/train_impl.h"
#include "train/train_state.h"

#define STATE_FORMAT "mixprec run state 1"

/* --- the metadata: what the run's numbers depend on --- */

enum { META_MAX = 32, META_VALUE = 320 };

typedef struct {
	const char *key;
	char value[META_VALUE];
} meta_pair;

/* The metadata of t, into out; returns the count. Doubles with 17
 * significant digits, so equal strings are equal values. */
static size_t meta_pairs(const trainer *t, meta_pair out[META_MAX])
{
	const train_config *c = &t->cfg;
	size_t n = 0;
#define PAIR(k, ...) (out[n].key = (k), snprintf(out[n].value, META_VALUE, __VA_ARGS__), n++)
	PAIR("state.format", "%s", STATE_FORMAT);
	PAIR("state.policy", "%s", t->pol.name);
	char parts[META_VALUE];
	policy_describe(&t->pol, parts, sizeof parts);
	PAIR("state.policy_parts", "%s", parts);
	PAIR("state.policy.static_scale", "%.17g", t->pol.static_scale);
	PAIR("state.device", "%s", t->be->name);
	PAIR("state.config.n_layer", "%zu", c->model.L);
	PAIR("state.config.n_head", "%zu", c->model.NH);
	PAIR("state.config.n_embd", "%zu", c->model.C);
	PAIR("state.config.n_positions", "%zu", c->model.T);
	PAIR("state.config.vocab_size", "%zu", c->model.V);
	PAIR("state.config.batch", "%zu", c->B);
	PAIR("state.config.context", "%zu", c->t);
	PAIR("state.config.seed", "%llu", (unsigned long long)c->seed);
	PAIR("state.config.lr", "%.17g", c->lr);
	PAIR("state.config.lr_schedule", "%s", lr_kind_name(c->sched.kind));
	PAIR("state.config.warmup", "%zu", c->sched.warmup);
	PAIR("state.config.lr_min", "%.17g", c->sched.lr_min);
	/* only a cosine's length changes the numbers: a constant lr's run may go on longer */
	if (c->sched.kind == LR_COSINE)
		PAIR("state.config.lr_total", "%zu", c->sched.total);
	else
		PAIR("state.config.lr_total", "%s", "-");
	PAIR("state.config.beta1", "%.17g", c->beta1);
	PAIR("state.config.beta2", "%.17g", c->beta2);
	PAIR("state.config.eps", "%.17g", c->eps);
	PAIR("state.config.weight_decay", "%.17g", c->weight_decay);
	PAIR("state.config.grad_clip", "%.17g", c->grad_clip);
	PAIR("state.config.eval_every", "%zu", c->eval_every);
	PAIR("state.config.eval_batches", "%zu", c->eval_batches);
	PAIR("state.config.resid_offset", "%.17g", (double)c->resid_offset);
	PAIR("state.config.resid_offset_channels", "%d", c->resid_offset_channels);
	PAIR("state.config.init_scale", "%.17g", c->init_scale);
	PAIR("state.config.scale_growth_interval", "%zu", t->scaler.growth_interval);
#undef PAIR
	return n;
}

/* --- the tensors --- */

/* The scalars, by what they hold. */
typedef enum { SC_STEP, SC_ADAM_T, SC_SCALE, SC_CLEAN, SC_SKIPPED, SC_SEED, SC_COUNT } scalar_id;

static const struct {
	const char *name;
	rs_dtype dtype;
} scalars[SC_COUNT] = {
	[SC_STEP] = { "state.step", RS_I64 },
	[SC_ADAM_T] = { "optimizer.step", RS_I64 },
	[SC_SCALE] = { "state.scaler.scale", RS_F64 },
	[SC_CLEAN] = { "state.scaler.clean_steps", RS_I64 },
	[SC_SKIPPED] = { "state.scaler.skipped", RS_I64 },
	[SC_SEED] = { "state.rng.seed", RS_I64 },
};

/* The (P) arrays, their name prefixes. */
static const struct {
	train_state_array which;
	const char *prefix;
} arrays[] = {
	{ TRAIN_STATE_WEIGHTS, "" },
	{ TRAIN_STATE_M, "optimizer.m." },
	{ TRAIN_STATE_V, "optimizer.v." },
	{ TRAIN_STATE_VREF, "optimizer.v_ref." },
	{ TRAIN_STATE_COMP, "optimizer.kahan." },
};
enum { NARRAYS = sizeof arrays / sizeof arrays[0] };

static rs_dtype array_dtype(const train_policy *p, train_state_array which)
{
	switch (which) {
	case TRAIN_STATE_WEIGHTS: return rs_dtype_of_format(p->weight_fmt);
	case TRAIN_STATE_M:
	case TRAIN_STATE_V: return rs_dtype_of_format(p->optim_fmt);
	case TRAIN_STATE_VREF: return RS_F32;
	case TRAIN_STATE_COMP: return rs_dtype_of_format(p->weight_fmt);
	}
	return RS_F32;
}

static void scalar_get(const trainer *t, scalar_id id, void *out)
{
	int64_t i = 0;
	double d = 0;
	switch (id) {
	case SC_STEP: i = (int64_t)t->step; break;
	case SC_ADAM_T: i = (int64_t)t->adam_t; break;
	case SC_SCALE: d = t->scaler.scale; break;
	case SC_CLEAN: i = (int64_t)t->scaler.clean_steps; break;
	case SC_SKIPPED: i = (int64_t)t->scaler.skipped; break;
	case SC_SEED: i = (int64_t)t->cfg.seed; break;
	case SC_COUNT: break;
	}
	if (scalars[id].dtype == RS_F64)
		memcpy(out, &d, sizeof d);
	else
		memcpy(out, &i, sizeof i);
}

static mp_status fp8_export(const trainer *t, run_state *rs);

mp_status trainer_state_export(trainer *t, run_state *rs)
{
	const train_backend *be = t->be;
	if (!be->state_read || !be->state_has)
		return MP_EUNSUPPORTED;
	meta_pair meta[META_MAX];
	size_t nm = meta_pairs(t, meta);
	mp_status st = MP_OK;
	for (size_t i = 0; i < nm && st == MP_OK; i++)
		st = run_state_set_meta(rs, meta[i].key, meta[i].value);
	size_t P = t->model->num_params, nv = gpt_param_view_count(t->cfg.model);
	float *flat = malloc(P * sizeof *flat), *buf = malloc(P * sizeof *buf);
	void *enc = malloc(P * sizeof(float));
	gpt_param_view *views = malloc(nv * sizeof *views);
	if (st == MP_OK && !(flat && buf && enc && views))
		st = MP_ENOMEM;
	if (st == MP_OK)
		gpt_param_views(t->cfg.model, views);
	for (size_t a = 0; a < NARRAYS && st == MP_OK; a++) {
		if (!be->state_has(t->state, arrays[a].which))
			continue;
		st = be->state_read(t->state, arrays[a].which, flat);
		rs_dtype dt = array_dtype(&t->pol, arrays[a].which);
		for (size_t v = 0; v < nv && st == MP_OK; v++) {
			char name[RS_NAME_MAX];
			snprintf(name, sizeof name, "%s%s", arrays[a].prefix, views[v].name);
			gpt_param_gather(&views[v], buf, flat);
			st = rs_encode_floats(dt, enc, buf, views[v].rows * views[v].cols);
			if (st == MP_OK)
				st = run_state_add(rs, name, dt, views[v].ndim, views[v].shape, enc);
		}
	}
	for (size_t i = 0; i < SC_COUNT && st == MP_OK; i++) {
		unsigned char value[8];
		scalar_get(t, (scalar_id)i, value);
		st = run_state_add(rs, scalars[i].name, scalars[i].dtype, 0, NULL, value);
	}
	if (st == MP_OK)
		st = fp8_export(t, rs);
	free(flat);
	free(buf);
	free(enc);
	free(views);
	return st;
}

/* --- import --- */

static mp_status check_meta(const trainer *t, const run_state *rs, char *err, size_t errlen)
{
	meta_pair meta[META_MAX];
	size_t nm = meta_pairs(t, meta);
	for (size_t i = 0; i < nm; i++) {
		const char *have = run_state_meta(rs, meta[i].key);
		if (!have)
			return mp_fail(MP_EINVAL, err, errlen, "metadata %s is missing (not a run state of this version)", meta[i].key);
		if (strcmp(have, meta[i].value))
			return mp_fail(MP_EINVAL, err, errlen, "%s: the saved run has '%s', this one '%s'", meta[i].key, have,
			            meta[i].value);
	}
	return MP_OK;
}

static void shape_text(char *buf, size_t n, size_t ndim, const size_t *shape)
{
	size_t len = (size_t)snprintf(buf, n, "[");
	for (size_t i = 0; i < ndim && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%zu", i ? "," : "", shape[i]);
	if (len < n)
		snprintf(buf + len, n - len, "]");
}

/* The tensor called name, checked against the dtype and shape expected. */
static mp_status expect(const run_state *rs, const char *name, rs_dtype dt, size_t ndim, const size_t *shape,
                        const rs_tensor **out, char *err, size_t errlen)
{
	const rs_tensor *x = run_state_find(rs, name);
	if (!x)
		return mp_fail(MP_EINVAL, err, errlen, "tensor '%s' is missing", name);
	if (x->dtype != dt)
		return mp_fail(MP_EINVAL, err, errlen, "tensor '%s' is %s, expected %s", name, rs_dtype_name(x->dtype), rs_dtype_name(dt));
	bool same = x->ndim == ndim;
	for (size_t i = 0; i < ndim && same; i++)
		same = x->shape[i] == shape[i];
	if (!same || x->nbytes != rs_tensor_count(x) * rs_dtype_size(dt)) {
		char a[64], b[64];
		shape_text(a, sizeof a, x->ndim, x->shape);
		shape_text(b, sizeof b, ndim, shape);
		return mp_fail(MP_EINVAL, err, errlen, "tensor '%s' has shape %s, expected %s", name, a, b);
	}
	*out = x;
	return MP_OK;
}

/* --- per-tensor fp8 scaling --- */

/* Under delayed scaling the running state is each quantized tensor's amax
 * history (newest first) and the scale the next step casts with:
 *   state.fp8.amax_history  F32 (tensors, H)
 *   state.fp8.scale         F32 (tensors)
 * in train/fp8scale.h's tensor order (its names are in --tensor-stats).
 * Current scaling keeps nothing from step to step. */
#define FP8_HIST_NAME "state.fp8.amax_history"
#define FP8_SCALE_NAME "state.fp8.scale"

/* The delayed-scaling state of t, or NULL. */
static fp8_state *fp8_of(const trainer *t)
{
	return t->pol.cast == CAST_SCALING_DELAYED && t->be->fp8 ? t->be->fp8(t->state) : NULL;
}

static mp_status fp8_export(const trainer *t, run_state *rs)
{
	fp8_state *fs = fp8_of(t);
	if (!fs)
		return MP_OK;
	size_t n = fp8_state_count(fs), H = fp8_state_history_len(fs);
	size_t hshape[2] = { n, H }, sshape[1] = { n };
	void *enc = malloc(n * H * sizeof(float));
	if (!enc)
		return MP_ENOMEM;
	mp_status st = rs_encode_floats(RS_F32, enc, fp8_state_histories(fs), n * H);
	if (st == MP_OK)
		st = run_state_add(rs, FP8_HIST_NAME, RS_F32, 2, hshape, enc);
	if (st == MP_OK)
		st = rs_encode_floats(RS_F32, enc, fp8_state_scales(fs), n);
	if (st == MP_OK)
		st = run_state_add(rs, FP8_SCALE_NAME, RS_F32, 1, sshape, enc);
	free(enc);
	return st;
}

/* The fp8 tensors of rs checked (present with t's shape when t keeps
 * them; every amax NaN or >= 0, every scale finite and positive) and
 * decoded into hist (n*H) and scale (n), which the caller frees. */
static mp_status fp8_check(const trainer *t, const run_state *rs, float **hist, float **scale, char *err,
                           size_t errlen)
{
	*hist = *scale = NULL;
	fp8_state *fs = fp8_of(t);
	if (!fs)
		return MP_OK;
	size_t n = fp8_state_count(fs), H = fp8_state_history_len(fs);
	size_t hshape[2] = { n, H }, sshape[1] = { n };
	const rs_tensor *xh, *xs;
	mp_status st = expect(rs, FP8_HIST_NAME, RS_F32, 2, hshape, &xh, err, errlen);
	if (st == MP_OK)
		st = expect(rs, FP8_SCALE_NAME, RS_F32, 1, sshape, &xs, err, errlen);
	if (st != MP_OK)
		return st;
	*hist = malloc(n * H * sizeof **hist);
	*scale = malloc(n * sizeof **scale);
	if (!*hist || !*scale)
		return MP_ENOMEM;
	st = rs_decode_floats(RS_F32, *hist, xh->data, n * H);
	if (st == MP_OK)
		st = rs_decode_floats(RS_F32, *scale, xs->data, n);
	for (size_t i = 0; i < n * H && st == MP_OK; i++)
		if ((*hist)[i] < 0 || isinf((*hist)[i]))
			st = mp_fail(MP_EINVAL, err, errlen, "%s[%zu][%zu] is %g, not an amax", FP8_HIST_NAME, i / H, i % H, (*hist)[i]);
	for (size_t i = 0; i < n && st == MP_OK; i++)
		if (!isfinite((*scale)[i]) || !((*scale)[i] > 0))
			st = mp_fail(MP_EINVAL, err, errlen, "%s[%zu] is %g, not a positive scale", FP8_SCALE_NAME, i, (*scale)[i]);
	return st;
}

/* Whether name is an fp8 tensor t keeps. */
static bool fp8_name(const trainer *t, const char *name)
{
	return fp8_of(t) && (!strcmp(name, FP8_HIST_NAME) || !strcmp(name, FP8_SCALE_NAME));
}

/* Whether name is one of the state's under policy p (an array present or a scalar). */
static bool known_name(const trainer *t, const gpt_param_view *views, size_t nv, const char *name)
{
	if (fp8_name(t, name))
		return true;
	for (size_t i = 0; i < SC_COUNT; i++)
		if (!strcmp(name, scalars[i].name))
			return true;
	for (size_t a = 0; a < NARRAYS; a++) {
		size_t len = strlen(arrays[a].prefix);
		if (!t->be->state_has(t->state, arrays[a].which) || strncmp(name, arrays[a].prefix, len))
			continue;
		for (size_t v = 0; v < nv; v++)
			if (!strcmp(name + len, views[v].name))
				return true;
	}
	return false;
}

/* The scalars' values, checked: counters within int64 and in order, a
 * positive finite scale, the seed the trainer's. */
static mp_status check_scalars(const trainer *t, const run_state *rs, int64_t iv[SC_COUNT], double *scale,
                               char *err, size_t errlen)
{
	for (size_t i = 0; i < SC_COUNT; i++) {
		const rs_tensor *x;
		mp_status st = expect(rs, scalars[i].name, scalars[i].dtype, 0, NULL, &x, err, errlen);
		if (st != MP_OK)
			return st;
		if (scalars[i].dtype == RS_F64)
			memcpy(scale, x->data, sizeof *scale);
		else
			memcpy(&iv[i], x->data, sizeof iv[i]);
	}
	if ((uint64_t)iv[SC_SEED] != t->cfg.seed)
		return mp_fail(MP_EINVAL, err, errlen, "state.rng.seed is %llu, this run's seed %llu", (unsigned long long)iv[SC_SEED],
		            (unsigned long long)t->cfg.seed);
	if (iv[SC_STEP] < 0 || iv[SC_ADAM_T] < 0 || iv[SC_ADAM_T] > iv[SC_STEP])
		return mp_fail(MP_EINVAL, err, errlen, "optimizer.step %lld and state.step %lld: need 0 <= optimizer.step <= state.step",
		            (long long)iv[SC_ADAM_T], (long long)iv[SC_STEP]);
	if (iv[SC_SKIPPED] < 0 || iv[SC_SKIPPED] > iv[SC_STEP] || iv[SC_CLEAN] < 0 ||
	    (size_t)iv[SC_CLEAN] >= t->scaler.growth_interval)
		return mp_fail(MP_EINVAL, err, errlen, "state.scaler.skipped %lld or clean_steps %lld out of range", (long long)iv[SC_SKIPPED],
		            (long long)iv[SC_CLEAN]);
	if (!isfinite(*scale) || !(*scale > 0))
		return mp_fail(MP_EINVAL, err, errlen, "state.scaler.scale is %g, not a positive number", *scale);
	return MP_OK;
}

/* Every expected tensor of arrays and scalars present with its dtype and
 * shape, no unknown one under optimizer.* or state.*. */
static mp_status check_tensors(const trainer *t, const run_state *rs, const gpt_param_view *views, size_t nv,
                               char *err, size_t errlen)
{
	for (size_t a = 0; a < NARRAYS; a++) {
		if (!t->be->state_has(t->state, arrays[a].which))
			continue;
		for (size_t v = 0; v < nv; v++) {
			char name[RS_NAME_MAX];
			snprintf(name, sizeof name, "%s%s", arrays[a].prefix, views[v].name);
			const rs_tensor *x;
			mp_status st = expect(rs, name, array_dtype(&t->pol, arrays[a].which), views[v].ndim, views[v].shape,
			                      &x, err, errlen);
			if (st != MP_OK)
				return st;
		}
	}
	for (size_t i = 0; i < rs->n; i++) {
		const char *name = rs->tensors[i].name;
		if (run_state_is_state_name(name) && !known_name(t, views, nv, name))
			return mp_fail(MP_EINVAL, err, errlen, "unexpected tensor '%s' (not part of policy %s's state)", name, t->pol.name);
	}
	return MP_OK;
}

/* Writes the (checked) arrays of rs into the backend. */
static mp_status apply_arrays(trainer *t, const run_state *rs, const gpt_param_view *views, size_t nv)
{
	size_t P = t->model->num_params;
	float *flat = malloc(P * sizeof *flat), *buf = malloc(P * sizeof *buf);
	mp_status st = flat && buf ? MP_OK : MP_ENOMEM;
	for (size_t a = 0; a < NARRAYS && st == MP_OK; a++) {
		if (!t->be->state_has(t->state, arrays[a].which))
			continue;
		rs_dtype dt = array_dtype(&t->pol, arrays[a].which);
		for (size_t v = 0; v < nv && st == MP_OK; v++) {
			char name[RS_NAME_MAX];
			snprintf(name, sizeof name, "%s%s", arrays[a].prefix, views[v].name);
			st = rs_decode_floats(dt, buf, run_state_find(rs, name)->data, views[v].rows * views[v].cols);
			gpt_param_scatter(&views[v], flat, buf);
		}
		if (st == MP_OK)
			st = t->be->state_write(t->state, arrays[a].which, flat);
	}
	free(flat);
	free(buf);
	return st;
}

mp_status trainer_state_import(trainer *t, const run_state *rs, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s", "");
	if (!t->be->state_write || !t->be->state_has)
		return MP_EUNSUPPORTED;
	mp_status st = check_meta(t, rs, err, errlen);
	int64_t iv[SC_COUNT] = { 0 };
	double scale = 0;
	if (st == MP_OK)
		st = check_scalars(t, rs, iv, &scale, err, errlen);
	size_t nv = gpt_param_view_count(t->cfg.model);
	gpt_param_view *views = malloc(nv * sizeof *views);
	if (st == MP_OK && !views)
		st = MP_ENOMEM;
	if (st == MP_OK) {
		gpt_param_views(t->cfg.model, views);
		st = check_tensors(t, rs, views, nv, err, errlen);
	}
	float *hist = NULL, *fscale = NULL;
	if (st == MP_OK)
		st = fp8_check(t, rs, &hist, &fscale, err, errlen);
	if (st == MP_OK)
		st = apply_arrays(t, rs, views, nv);
	fp8_state *fs = fp8_of(t);
	if (st == MP_OK && fs) {
		size_t n = fp8_state_count(fs);
		memcpy(fp8_state_histories(fs), hist, n * fp8_state_history_len(fs) * sizeof *hist);
		memcpy(fp8_state_scales(fs), fscale, n * sizeof *fscale);
	}
	free(hist);
	free(fscale);
	free(views);
	if (st != MP_OK)
		return st;
	t->step = (size_t)iv[SC_STEP];
	t->adam_t = (size_t)iv[SC_ADAM_T];
	t->scaler.scale = scale;
	t->scaler.clean_steps = (size_t)iv[SC_CLEAN];
	t->scaler.skipped = (size_t)iv[SC_SKIPPED];
	return MP_OK;
}
