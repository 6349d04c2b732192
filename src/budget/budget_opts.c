#include <math.h>
#include <string.h>

#include "budget/budget_opts.h"
#include "fmt/parse.h"
#include "fmt/round.h"
#include "util/optwalk.h"

/* the parallel layout's options, past any character getopt could return */
enum { BUDGET_OPT_TP = 0x100, BUDGET_OPT_SP, BUDGET_OPT_PP, BUDGET_OPT_VPP, BUDGET_OPT_CP, BUDGET_OPT_DP };
/* The serving options' getopt codes, above every character code. */
enum { SV_SERVE = 0x5e00, SV_WEIGHTS, SV_KV, SV_KV_HEADS, SV_HEAD_DIM, SV_GPU_MEM, SV_GPU_UTIL, SV_RESERVE,
       SV_BLOCK };

static const struct option budget_options[] = {
	{ "params", required_argument, NULL, 'p' },
	{ "preset", required_argument, NULL, 'P' },
	{ "recipe", required_argument, NULL, 'r' },
	{ "optimizer", required_argument, NULL, 'o' },
	{ "convention", required_argument, NULL, 'C' },
	{ "zero", required_argument, NULL, 'z' },
	{ "gpus", required_argument, NULL, 'g' },
	{ "layers", required_argument, NULL, 'L' },
	{ "channels", required_argument, NULL, 'H' },
	{ "hidden", required_argument, NULL, 'H' },   /* aliases: train's names are canonical */
	{ "heads", required_argument, NULL, 'A' },
	{ "context", required_argument, NULL, 'S' },
	{ "seq", required_argument, NULL, 'S' },
	{ "batch", required_argument, NULL, 'b' },
	{ "micro-batch", required_argument, NULL, 'b' },
	{ "recompute", required_argument, NULL, 'R' },
	{ "vocab", required_argument, NULL, 'V' },
	{ "offload", required_argument, NULL, 'O' },
	{ "nodes", required_argument, NULL, 'N' },
	{ "largest-layer", required_argument, NULL, 'Y' },
	{ "csv", no_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	/* parallel layout */
	{ "tp", required_argument, NULL, BUDGET_OPT_TP },
	{ "sp", no_argument, NULL, BUDGET_OPT_SP },
	{ "pp", required_argument, NULL, BUDGET_OPT_PP },
	{ "vpp", required_argument, NULL, BUDGET_OPT_VPP },
	{ "cp", required_argument, NULL, BUDGET_OPT_CP },
	{ "dp", required_argument, NULL, BUDGET_OPT_DP },
	/* serving */
	{ "serve", no_argument, NULL, SV_SERVE },
	{ "weights-dtype", required_argument, NULL, SV_WEIGHTS },
	{ "kv-dtype", required_argument, NULL, SV_KV },
	{ "kv-heads", required_argument, NULL, SV_KV_HEADS },
	{ "head-dim", required_argument, NULL, SV_HEAD_DIM },
	{ "gpu-mem", required_argument, NULL, SV_GPU_MEM },
	{ "gpu-util", required_argument, NULL, SV_GPU_UTIL },
	{ "reserve", required_argument, NULL, SV_RESERVE },
	{ "block-size", required_argument, NULL, SV_BLOCK },
	{ 0 },
};

/* What the options say before the checks that need several of them. */
typedef struct {
	double params;
	budget_shape shape, given;   /* the preset's; the explicit shape options */
	bool have_gpus, have_zero, have_mb, have_rc;
	const char *ds_only;         /* an option that only the deepspeed convention reads */
} budget_read;

/* The parallel layout's options into o->cfg.par; MP_EUNSUPPORTED for
 * another option. */
static mp_status parallel_option(budget_opts *o, int c, const char *v, char *err, size_t errlen)
{
	budget_parallel *q = &o->cfg.par;
	double *axis;
	const char *name;
	switch (c) {
	case BUDGET_OPT_SP: q->sp = q->given = true; return MP_OK;
	case BUDGET_OPT_TP: axis = &q->tp; name = "--tp"; break;
	case BUDGET_OPT_PP: axis = &q->pp; name = "--pp"; break;
	case BUDGET_OPT_VPP: axis = &q->vpp; name = "--vpp"; break;
	case BUDGET_OPT_CP: axis = &q->cp; name = "--cp"; break;
	case BUDGET_OPT_DP: axis = &q->dp; name = "--dp"; break;
	default: return MP_EUNSUPPORTED;
	}
	q->given = true;
	double x;
	char why[256];
	if (budget_parse_count(v, &x, why, sizeof why) != MP_OK)
		return mp_fail(MP_EINVAL, err, errlen, "%s: %s", name, why);
	if (x > BUDGET_GPUS_MAX)
		return mp_fail(MP_EINVAL, err, errlen, "%s: %s is out of range (1 to %d)", name, v, BUDGET_GPUS_MAX);
	*axis = x;
	return MP_OK;
}

/* The layout's checks once every option is read: without --gpus the GPUs
 * are t*p*c*d (d = 1 without --dp); budget_parallel_check says what else is wrong. */
static mp_status parallel_ok(budget_opts *o, bool have_gpus, char *err, size_t errlen)
{
	budget_config *cfg = &o->cfg;
	budget_parallel *q = &cfg->par;
	if (!q->given)
		return MP_OK;
	if (!have_gpus) {
		double world = budget_par_axis(q->tp) * budget_par_axis(q->pp) * budget_par_axis(q->cp) *
		               budget_par_axis(q->dp);
		if (world > BUDGET_GPUS_MAX)
			return mp_fail(MP_EINVAL, err, errlen, "the layout t*p*c*d = %.0f GPUs is out of range (1 to %d)",
			               world, BUDGET_GPUS_MAX);
		cfg->gpus = world;
	}
	double d;
	return budget_parallel_check(cfg, &d, err, errlen);
}

static mp_status count_value(const char *opt, const char *text, double *v, char *err, size_t errlen)
{
	char why[256];
	mp_status st = budget_parse_count(text, v, why, sizeof why);
	if (st != MP_OK)
		return mp_fail(MP_EINVAL, err, errlen, "%s: %s", opt, why[0] ? why : mp_status_message(st));
	return MP_OK;
}

/* A name looked up (st) for option opt. */
static mp_status named(const char *opt, const char *what, const char *v, mp_status st, const char *known, char *err,
                       size_t errlen)
{
	if (st != MP_OK)
		return mp_fail(MP_EINVAL, err, errlen, "%s: unknown %s '%s' (known: %s)", opt, what, v, known);
	return MP_OK;
}

/* The options only the deepspeed convention reads; MP_EUNSUPPORTED for
 * another option. */
static mp_status ds_option(budget_opts *o, budget_read *r, int c, const char *v, char *err, size_t errlen)
{
	switch (c) {
	case 'O':
		r->ds_only = "--offload";
		return named("--offload", "setting", v, budget_offload_from_name(v, &o->cfg.offload),
		             budget_offload_known(), err, errlen);
	case 'N': r->ds_only = "--nodes"; return count_value("--nodes", v, &o->cfg.nodes, err, errlen);
	case 'Y':
		r->ds_only = "--largest-layer";
		return count_value("--largest-layer", v, &o->cfg.largest_layer, err, errlen);
	default: return MP_EUNSUPPORTED;
	}
}

/* The shape options. */
static mp_status shape_option(budget_read *r, int c, const char *v, char *err, size_t errlen)
{
	switch (c) {
	case 'L': return count_value("--layers", v, &r->given.layers, err, errlen);
	case 'H': return count_value("--channels", v, &r->given.hidden, err, errlen);
	case 'A': return count_value("--heads", v, &r->given.heads, err, errlen);
	case 'S': return count_value("--context", v, &r->given.seq, err, errlen);
	case 'V': return count_value("--vocab", v, &r->given.vocab, err, errlen);
	default:   /* 'b' */
		r->have_mb = true;
		return count_value("--batch", v, &r->given.micro_batch, err, errlen);
	}
}

/* One option (getopt's c, its value v) into o and r. */
static mp_status budget_option(budget_opts *o, budget_read *r, int c, const char *v, char *err, size_t errlen)
{
	budget_config *cfg = &o->cfg;
	mp_status st = ds_option(o, r, c, v, err, errlen);
	if (st == MP_EUNSUPPORTED)
		st = parallel_option(o, c, v, err, errlen);
	if (st != MP_EUNSUPPORTED)
		return st;
	switch (c) {
	case 'p': return count_value("--params", v, &r->params, err, errlen);
	case 'P':
		if (budget_preset(v, &cfg->params, &r->shape) != MP_OK)
			return mp_fail(MP_EINVAL, err, errlen, "--preset: unknown model '%s' (known: %s)", v,
			               budget_preset_known());
		o->preset = v;
		return MP_OK;
	case 'r':
		return named("--recipe", "recipe", v, budget_recipe_from_name(v, &cfg->recipe), budget_recipe_known(), err,
		             errlen);
	case 'o':
		return named("--optimizer", "optimizer", v, budget_optimizer_from_name(v, &cfg->optimizer),
		             budget_optimizer_known(), err, errlen);
	case 'C':
		return named("--convention", "convention", v, budget_convention_from_name(v, &cfg->convention),
		             budget_convention_known(), err, errlen);
	case 'R':
		r->have_rc = true;
		return named("--recompute", "mode", v, budget_recompute_from_name(v, &cfg->recompute),
		             budget_recompute_known(), err, errlen);
	case 'z':
		r->have_zero = true;
		return budget_parse_zero(v, &cfg->zero_stage, err, errlen) == MP_OK ? MP_OK : MP_EINVAL;
	case 'g':
		if (count_value("--gpus", v, &cfg->gpus, err, errlen) != MP_OK)
			return MP_EINVAL;
		if (cfg->gpus > BUDGET_GPUS_MAX)
			return mp_fail(MP_EINVAL, err, errlen, "--gpus: %s is out of range (1 to %d)", v, BUDGET_GPUS_MAX);
		r->have_gpus = true;
		return MP_OK;
	case 'c': o->csv = true; return MP_OK;
	default: return shape_option(r, c, v, err, errlen);
	}
}

/* Explicit shape options override the preset's; without a preset all four
 * are needed. */
static mp_status resolve_shape(budget_shape *shape, const budget_read *r, char *err, size_t errlen)
{
	const budget_shape *given = &r->given;
	if (given->layers) shape->layers = given->layers;
	if (given->hidden) shape->hidden = given->hidden;
	if (given->heads) shape->heads = given->heads;
	if (given->seq) shape->seq = given->seq;
	if (given->vocab) shape->vocab = given->vocab;
	shape->micro_batch = r->have_mb ? given->micro_batch : 1;
	bool any = shape->layers || shape->hidden || shape->heads || shape->seq;
	if (any && !(shape->layers && shape->hidden && shape->heads && shape->seq))
		return mp_fail(MP_EINVAL, err, errlen, "a model shape needs%s%s%s%s (or --preset M)",
		               shape->layers ? "" : " --layers", shape->hidden ? "" : " --channels",
		               shape->heads ? "" : " --heads", shape->seq ? "" : " --context");
	if (!any && (r->have_mb || r->have_rc))
		return mp_fail(MP_EINVAL, err, errlen,
		               "%s needs a model shape (--preset M, or --layers, --channels, --heads, --context)",
		               r->have_mb ? "--batch" : "--recompute");
	return MP_OK;
}

/* The deepspeed convention's own checks, or an option only it reads given
 * to another. */
static mp_status deepspeed_ok(const budget_config *cfg, const budget_read *r, char *err, size_t errlen)
{
	if (cfg->convention != BUDGET_CONV_DEEPSPEED) {
		if (r->ds_only)
			return mp_fail(MP_EINVAL, err, errlen, "%s: only the deepspeed convention reads it (--convention deepspeed)",
			               r->ds_only);
		return MP_OK;
	}
	if (r->have_zero && cfg->zero_stage != 2 && cfg->zero_stage != 3)
		return mp_fail(MP_EINVAL, err, errlen, "--zero %d: DeepSpeed estimates ZeRO-2 and ZeRO-3 only (use --zero 2 or "
		               "3, or another convention)", cfg->zero_stage);
	if (fmod(cfg->gpus, cfg->nodes) != 0)
		return mp_fail(MP_EINVAL, err, errlen, "--nodes %.0f: does not divide --gpus %.0f", cfg->nodes, cfg->gpus);
	if (cfg->zero_stage == 3 && !(cfg->largest_layer > 0) && budget_largest_layer_params(&cfg->shape) == 0)
		return mp_fail(MP_EINVAL, err, errlen, "--zero 3: DeepSpeed's ZeRO-3 estimate needs the largest layer's "
		               "parameter count: give --largest-layer N, or a shape with its vocabulary (--preset M, or "
		               "--layers ... --vocab V)");
	return MP_OK;
}

/* --- serving --- */

/* What the serving options say; 0: not given. */
typedef struct {
	const char *only;            /* a serving option, for the refusal without --serve */
	const char *fit_only;        /* --gpu-util, --reserve or --block-size: only with --gpu-mem */
	double kv_heads, head_dim;
} serve_read;

/* A fraction in (0, 1] for --gpu-util. */
static mp_status fraction_value(const char *text, double *v, char *err, size_t errlen)
{
	fmt_num x;
	fmt_num_init(&x);
	mp_status st = fmt_parse_number(&x, text, NULL, 0);
	double d = st == MP_OK && x.kind == NUM_FINITE && !x.neg ? fmt_num_to_double(&x) : NAN;
	fmt_num_clear(&x);
	if (!(d > 0 && d <= 1))
		return mp_fail(MP_EINVAL, err, errlen, "--gpu-util: '%s' is not a fraction in (0, 1] (vLLM's "
		               "gpu_memory_utilization, default 0.9)", text);
	*v = d;
	return MP_OK;
}

static mp_status size_value(const char *opt, const char *text, double *v, char *err, size_t errlen)
{
	char why[256];
	if (serve_parse_bytes(text, v, why, sizeof why) != MP_OK)
		return mp_fail(MP_EINVAL, err, errlen, "%s: %s", opt, why);
	return MP_OK;
}

/* One serving option into o and sr; MP_EUNSUPPORTED for any other. */
static mp_status serve_option(budget_opts *o, serve_read *sr, int c, const char *v, char *err, size_t errlen)
{
	serve_config *s = &o->serve_cfg;
	static const char *const names[] = { "--serve", "--weights-dtype", "--kv-dtype", "--kv-heads", "--head-dim",
		                             "--gpu-mem", "--gpu-util", "--reserve", "--block-size" };
	if (c < SV_SERVE || c > SV_BLOCK)
		return MP_EUNSUPPORTED;
	if (c != SV_SERVE && !sr->only)
		sr->only = names[c - SV_SERVE];
	if ((c == SV_GPU_UTIL || c == SV_RESERVE || c == SV_BLOCK) && !sr->fit_only)
		sr->fit_only = names[c - SV_SERVE];
	switch (c) {
	case SV_SERVE: o->serve = true; return MP_OK;
	case SV_WEIGHTS:
		return named("--weights-dtype", "format", v, serve_weights_from_name(v, &s->weights), serve_weights_known(),
		             err, errlen);
	case SV_KV:
		return named("--kv-dtype", "format", v, serve_kv_from_name(v, &s->kv), serve_kv_known(), err, errlen);
	case SV_KV_HEADS: return count_value("--kv-heads", v, &sr->kv_heads, err, errlen);
	case SV_HEAD_DIM: return count_value("--head-dim", v, &sr->head_dim, err, errlen);
	case SV_GPU_MEM:
		if (size_value("--gpu-mem", v, &s->gpu_mem, err, errlen) != MP_OK)
			return MP_EINVAL;
		if (!(s->gpu_mem > 0))
			return mp_fail(MP_EINVAL, err, errlen, "--gpu-mem: '%s' is no memory (give 80GB, 39.5GiB, ...)", v);
		return MP_OK;
	case SV_GPU_UTIL: return fraction_value(v, &s->gpu_util, err, errlen);
	case SV_RESERVE: return size_value("--reserve", v, &s->reserve, err, errlen);
	default: return count_value("--block-size", v, &s->block_size, err, errlen);
	}
}

/* A training option given with --serve: its name, or NULL. */
static const char *training_only(const budget_config *cfg, const budget_read *r)
{
	budget_config d = budget_defaults();
	if (r->ds_only) return r->ds_only;
	if (r->have_zero) return "--zero";
	if (r->have_gpus) return "--gpus";
	if (r->have_rc) return "--recompute";
	if (cfg->recipe != d.recipe) return "--recipe";
	if (cfg->optimizer != d.optimizer) return "--optimizer";
	if (cfg->convention != d.convention) return "--convention";
	/* serving splits by tensor parallelism only */
	if (cfg->par.sp) return "--sp";
	if (cfg->par.pp) return "--pp";
	if (cfg->par.vpp) return "--vpp";
	if (cfg->par.cp) return "--cp";
	if (cfg->par.dp) return "--dp";
	return NULL;
}

/* The serving model from the preset (its KV heads, head size and FFN while
 * the shape options leave its width and heads alone) or from the shape,
 * with --kv-heads and --head-dim over both. */
static mp_status serve_resolve(budget_opts *o, const budget_read *r, const serve_read *sr, char *err, size_t errlen)
{
	if (!o->serve) {
		if (sr->only)
			return mp_fail(MP_EINVAL, err, errlen, "%s: only budget --serve reads it", sr->only);
		return MP_OK;
	}
	const char *t = training_only(&o->cfg, r);
	if (t)
		return mp_fail(MP_EINVAL, err, errlen, "%s: a training option; budget --serve does not read it", t);
	if (sr->fit_only && !(o->serve_cfg.gpu_mem > 0))
		return mp_fail(MP_EINVAL, err, errlen, "%s: needs --gpu-mem SIZE (what one GPU holds)", sr->fit_only);
	const budget_shape *sh = &o->cfg.shape;
	if (sh->layers == 0)
		return mp_fail(MP_EINVAL, err, errlen, "--serve needs a model shape (--preset M, or --layers, --channels, "
		               "--heads, --context)");
	serve_model m = { 0 };
	if (o->preset)
		serve_preset(o->preset, &m);
	bool reshaped = !o->preset || r->given.hidden || r->given.heads;
	m.params = o->cfg.params;
	m.layers = sh->layers;
	m.hidden = sh->hidden;
	m.heads = sh->heads;
	if (reshaped) {
		m.kv_heads = sh->heads;
		m.head_dim = sh->hidden / sh->heads;
	}
	if (!o->preset || r->given.hidden)
		m.ffn = m.mlp_mats = 0;
	if (sr->kv_heads) m.kv_heads = sr->kv_heads;
	if (sr->head_dim) m.head_dim = sr->head_dim;
	if (m.head_dim != floor(m.head_dim))
		return mp_fail(MP_EINVAL, err, errlen, "--heads %.0f does not divide --channels %.0f: give --head-dim",
		               sh->heads, sh->hidden);
	o->serve_cfg.model = m;
	o->serve_cfg.tp = budget_par_axis(o->cfg.par.tp);
	o->serve_cfg.context = sh->seq;
	o->serve_cfg.batch = sh->micro_batch;
	return MP_OK;
}

mp_status budget_opts_parse(int argc, char **argv, budget_opts *o, char *err, size_t errlen)
{
	*o = (budget_opts){ .cfg = budget_defaults() };
	budget_read r = { 0 };
	serve_read sr = { 0 };
	o->serve_cfg = serve_defaults();
	optwalk w = { 0 };
	char *value;
	int c;
	while ((c = optwalk_next(&w, argc, argv, budget_options, &value)) != -1) {
		if (c == OPTWALK_VALUE)
			return mp_fail(MP_EINVAL, err, errlen, "unexpected argument '%s' (see 'mixprec budget --help')", value);
		if (c == ':' || c == '?')
			return optwalk_error("budget", c, argv, budget_options, err, errlen);
		if (c == 'h') {
			o->help = true;
			return MP_OK;
		}
		mp_status st = serve_option(o, &sr, c, optarg, err, errlen);
		if (st == MP_EUNSUPPORTED)
			st = budget_option(o, &r, c, optarg, err, errlen);
		if (st != MP_OK)
			return MP_EINVAL;
		if (c == 'p')
			o->params_text = optarg;
	}
	if (r.params > 0)
		o->cfg.params = r.params;
	if (!(o->cfg.params > 0))
		return mp_fail(MP_EINVAL, err, errlen, "--params N is required (or --preset M; see 'mixprec budget --help')");
	if (resolve_shape(&r.shape, &r, err, errlen) != MP_OK)
		return MP_EINVAL;
	o->cfg.shape = r.shape;
	if (serve_resolve(o, &r, &sr, err, errlen) != MP_OK)
		return MP_EINVAL;
	if ((!o->serve && parallel_ok(o, r.have_gpus, err, errlen) != MP_OK) || deepspeed_ok(&o->cfg, &r, err, errlen) != MP_OK)
		return MP_EINVAL;
	o->per_gpu = r.have_gpus || r.have_zero || o->cfg.convention == BUDGET_CONV_DEEPSPEED || o->cfg.par.given;
	return MP_OK;
}
