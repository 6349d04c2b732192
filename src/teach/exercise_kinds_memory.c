/* Exercise kinds about memory: training's bytes per parameter in bf16 mixed
 * precision with Adam (7.4c) and per GPU under ZeRO, and serving's KV cache,
 * from budget/. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget/budget.h"
#include "budget/serve.h"
#include "teach/exercise.h"
#include "teach/exercise_solve.h"
#include "util/strbuf.h"

/* ---- kind: memory (7.4c) and zero ------------------------------------------- */

static bool budget_of(solve_ctx *c, double P, int stage, double gpus, budget_result *r)
{
	budget_config cfg = budget_defaults();
	cfg.params = P;
	cfg.zero_stage = stage;
	cfg.gpus = gpus;
	if (budget_compute(r, &cfg) != MP_OK)
		return exs_fail(c, "no memory budget for %g parameters, ZeRO %d on %g GPUs", P, stage, gpus);
	return true;
}

bool exs_solve_memory(solve_ctx *c)
{
	double P;
	if (!exs_param_positive(c, "P", &P))
		return false;
	budget_result r;
	if (!budget_of(c, P, 0, 1, &r))
		return false;
	double bpp = r.total_bytes_per_param;
	exs_set_num(c, "bytes_per_param", bpp);
	exs_set_num(c, "total_gb", r.total_bytes / 1e9);
	exs_set_num(c, "total_gib", r.total_bytes / 1073741824.0);
	exs_set_num(c, "rule_gb", 20 * P / 1e9);
	double acc = r.bytes_per_param[BUDGET_GRAD_ACCUM];
	double master = r.bytes_per_param[BUDGET_MASTER], moment = r.bytes_per_param[BUDGET_OPTIMIZER] / 2;
	if (acc == master && acc == moment)
		/* all three omissions give the same count: name them all */
		exs_mistake_num(c, "bytes_per_param", bpp - acc,
		            "4 bytes short: did you leave out the fp32 gradient accumulator (gradients are summed in fp32 "
		            "across micro-batches), the fp32 master weights, or one of Adam's two fp32 moments?");
	exs_mistake_num(c, "bytes_per_param", bpp - acc,
	            "You left out the fp32 gradient accumulator (4 bytes): gradients are summed in fp32 across "
	            "micro-batches before the update.");
	exs_mistake_num(c, "bytes_per_param", bpp - master,
	            "You left out the fp32 master weights (4 bytes) that the optimiser updates.");
	exs_mistake_num(c, "bytes_per_param", bpp - moment,
	            "Adam keeps two fp32 states per parameter (m and v): 8 bytes, not 4.");
	exs_mistake_num(c, "bytes_per_param", 2, "2 bytes is only the bf16 weight copy; count every tensor kept per "
	                                     "parameter during training.");
	exs_mistake_num(c, "total_gb", (bpp - acc) * P / 1e9,
	            "That total leaves out the fp32 gradient accumulator (4 bytes per parameter).");
	exs_mistake_num(c, "total_gb", 2 * P / 1e9, "%s GB is only the bf16 weights (2 bytes per parameter); training "
	                                        "keeps much more.",
	            exs_g(2 * P / 1e9));
	exs_mistake_num(c, "total_gb", r.total_bytes, "%s is the total in bytes; the question asks for GB: divide by 10^9.",
	            exs_g(r.total_bytes));
	exs_mistake_num(c, "total_gib", r.total_bytes, "%s is the total in bytes; the question asks for GiB: divide by "
	                                           "2^30 = 1073741824.",
	            exs_g(r.total_bytes));
	exs_mistake_num(c, "total_gb", r.total_bytes / 1073741824.0,
	            "%s looks like GiB, the total / 2^30; the question asks for GB: bytes / 10^9 = %s.",
	            exs_g(r.total_bytes / 1073741824.0), exs_g(r.total_bytes / 1e9));
	exs_mistake_num(c, "total_gib", r.total_bytes / 1e9,
	            "%s looks like GB, the total / 10^9; the question asks for GiB: bytes / 2^30 = %s.",
	            exs_g(r.total_bytes / 1e9), exs_g(r.total_bytes / 1073741824.0));
	strbuf_printf(&c->w, "Step 1: bf16 mixed precision with Adam keeps, per parameter:\n");
	for (budget_component k = 0; k < BUDGET_ACTIVATIONS; k++)
		if (r.bytes_per_param[k] > 0)
			strbuf_printf(&c->w, "  %-15s %g bytes\n", budget_component_name(k), r.bytes_per_param[k]);
	strbuf_printf(&c->w, "  %-15s %g bytes per parameter\n\n", "total", bpp);
	strbuf_printf(&c->w, "Step 2: for P = %s parameters, %g x %s = %s bytes.\n", exs_g(P), bpp, exs_g(P), exs_g(r.total_bytes));
	strbuf_printf(&c->w, "Step 3: in GB (10^9 bytes): %s / 10^9 = %s GB.\n", exs_g(r.total_bytes), exs_g(r.total_bytes / 1e9));
	strbuf_printf(&c->w, "Step 4: in GiB (2^30 = 1073741824 bytes): %s / 2^30 = %s GiB (a GiB is 7.4%% larger than\n"
	              "  a GB, so the GiB figure is smaller).\n",
	   exs_g(r.total_bytes), exs_g(r.total_bytes / 1073741824.0));
	strbuf_printf(&c->w, "Step 5: the rule of thumb of 20 GB per billion parameters gives %s / 10^9 x 20 = %s GB: %s.\n"
	          "Activations come on top and depend on the batch and sequence length.\n",
	   exs_g(P), exs_g(20 * P / 1e9), bpp == 20 ? "the same count (20 bytes per parameter)" : "a different count");
	return true;
}

bool exs_solve_zero(solve_ctx *c)
{
	double P, gpus, stage;
	if (!exs_param_positive(c, "P", &P) || !exs_param_positive(c, "gpus", &gpus) || !exs_param_double(c, "stage", &stage))
		return false;
	if (stage != 0 && stage != 1 && stage != 2 && stage != 3)
		return exs_fail(c, "parameter stage must be 0, 1, 2 or 3");
	if (gpus != floor(gpus) || gpus > 1e6)
		return exs_fail(c, "parameter gpus must be a whole number");
	budget_result r[4];
	for (int s = 0; s < 4; s++)
		if (!budget_of(c, P, s, gpus, &r[s]))
			return false;
	const budget_result *me = &r[(int)stage];
	exs_set_num(c, "gpu_gb", me->gpu_total_bytes / 1e9);
	exs_set_num(c, "total_gb", me->total_bytes / 1e9);
	exs_set_num(c, "gpu_bytes_per_param", me->gpu_total_bytes / P);
	for (int s = 0; s < 4; s++)
		if (s != (int)stage) {
			exs_mistake_num(c, "gpu_gb", r[s].gpu_total_bytes / 1e9, "That is the per-GPU figure of ZeRO stage %d, not %d.",
			            s, (int)stage);
			exs_mistake_num(c, "gpu_bytes_per_param", r[s].gpu_total_bytes / P,
			            "That is the per-GPU figure of ZeRO stage %d, not %d.", s, (int)stage);
		}
	exs_mistake_num(c, "gpu_gb", me->total_bytes / gpus / 1e9,
	            "Stage %d does not shard everything: only stage 3 divides every component by the GPU count.",
	            (int)stage);
	strbuf_printf(&c->w, "ZeRO stage 1 shards the optimiser state (with the fp32 master weights), stage 2 also the\n"
	          "gradients, stage 3 also the weights; what is sharded is divided by G = %g GPUs.\n\n",
	   gpus);
	strbuf_printf(&c->w, "%-15s %10s %10s\n", "component", "bytes/par", "per GPU");
	for (budget_component k = 0; k < BUDGET_ACTIVATIONS; k++)
		if (me->bytes_per_param[k] > 0)
			strbuf_printf(&c->w, "%-15s %10g %10.4g\n", budget_component_name(k), me->bytes_per_param[k],
			   me->gpu_bytes[k] / P);
	strbuf_printf(&c->w, "\nPer GPU: %s bytes per parameter x %s = %s GB (unsharded: %s GB).\n", exs_g(me->gpu_total_bytes / P),
	   exs_g(P), exs_g(me->gpu_total_bytes / 1e9), exs_g(me->total_bytes / 1e9));
	return true;
}


/* ---- kind: parallel (par.1) ---------------------------------------------- */

/* Model state per GPU under tensor parallelism t and pipeline parallelism p
 * (budget/parallel.c): every copy split by t*p, no ZeRO, activations left out. */
bool exs_solve_parallel(solve_ctx *c)
{
	double P, t, p;
	if (!exs_param_positive(c, "P", &P) || !exs_param_positive(c, "t", &t) || !exs_param_positive(c, "p", &p))
		return false;
	if (t != floor(t) || p != floor(p) || t * p > 1 << 20)
		return exs_fail(c, "parameters t and p must be whole numbers (t*p at most 2^20)");
	const char *rname = ex_variant_get(c->ex, c->v, "recipe");
	budget_config cfg = budget_defaults();
	if (rname && budget_recipe_from_name(rname, &cfg.recipe) != MP_OK)
		return exs_fail(c, "parameter recipe = '%s' is not a recipe (%s)", rname, budget_recipe_known());
	cfg.params = P;
	cfg.gpus = t * p;
	cfg.par = (budget_parallel){ .tp = t, .pp = p, .given = true };
	budget_result r, whole;
	budget_config one = cfg;
	one.par = (budget_parallel){ 0 };
	one.gpus = 1;
	if (budget_compute(&r, &cfg) != MP_OK || budget_compute(&whole, &one) != MP_OK)
		return exs_fail(c, "no memory budget for %g parameters on t = %g, p = %g", P, t, p);
	double bpp = whole.total_bytes_per_param, gb = r.gpu_total_bytes / 1e9;
	exs_set_num(c, "bytes_per_param", bpp);
	exs_set_num(c, "gpus", t * p);
	exs_set_num(c, "gpu_gb", gb);
	exs_mistake_num(c, "gpu_gb", bpp * P / t / 1e9, "That divides by t = %g only: pipeline parallelism gives each "
	                "stage L/p of the layers, so divide by p = %g as well.", t, p);
	exs_mistake_num(c, "gpu_gb", bpp * P / p / 1e9, "That divides by p = %g only: tensor parallelism splits each "
	                "layer's matrices over t = %g GPUs as well.", p, t);
	exs_mistake_num(c, "gpu_gb", 20 * P / (t * p) / 1e9, "20 bytes per parameter is bf16-mixed with Adam; %s keeps "
	                "%g bytes per parameter.", budget_recipe_name(cfg.recipe), bpp);
	exs_mistake_num(c, "gpu_gb", bpp * P / 1e9, "That is one unsplit copy of the model; each GPU holds 1/(t*p) of it.");
	exs_mistake_num(c, "gpu_gb", r.gpu_total_bytes / 1073741824.0, "%s looks like GiB; the question asks for GB "
	                "(10^9 bytes): %s.", exs_g(r.gpu_total_bytes / 1073741824.0), exs_g(gb));
	exs_mistake_num(c, "gpus", t + p, "The layout is a grid: t*p = %g GPUs, not t + p.", t * p);
	strbuf_printf(&c->w, "Step 1: %s with Adam keeps, per parameter:\n", budget_recipe_name(cfg.recipe));
	for (budget_component k = 0; k < BUDGET_ACTIVATIONS; k++)
		if (whole.bytes_per_param[k] > 0)
			strbuf_printf(&c->w, "  %-16s %g bytes\n", budget_component_name(k), whole.bytes_per_param[k]);
	strbuf_printf(&c->w, "  %-16s %g bytes per parameter\n\n", "total", bpp);
	strbuf_printf(&c->w, "Step 2: tensor parallelism splits every layer over t = %g GPUs, pipeline parallelism\n"
	              "  the layers over p = %g stages: t*p = %g GPUs, each with 1/%g of every copy.\n", t, p, t * p,
	              t * p);
	strbuf_printf(&c->w, "Step 3: %g x %s / %g = %s bytes = %s GB per GPU (activations come on top).\n", bpp,
	              exs_g(P), t * p, exs_g(r.gpu_total_bytes), exs_g(gb));
	return true;
}

/* ---- kind: kv-cache --------------------------------------------------------- */

/* The KV cache of a batch: serve.c's per-token bytes for a model of
 * `layers` layers, `heads` query heads sharing `kv_heads` KV heads of
 * head_dim, `bytes` per element. */
bool exs_solve_kv_cache(solve_ctx *c)
{
	double L, heads, kv, d, bytes, ctx, batch;
	if (!exs_param_positive(c, "layers", &L) || !exs_param_positive(c, "heads", &heads) ||
	    !exs_param_positive(c, "kv_heads", &kv) || !exs_param_positive(c, "head_dim", &d) ||
	    !exs_param_positive(c, "bytes", &bytes) || !exs_param_positive(c, "context", &ctx) ||
	    !exs_param_positive(c, "batch", &batch))
		return false;
	if (bytes != 1 && bytes != 2)
		return exs_fail(c, "parameter bytes must be 1 (fp8) or 2 (bf16, fp16)");
	serve_config cfg = serve_defaults();
	cfg.model = (serve_model){ .params = 1, .layers = L, .hidden = heads * d, .heads = heads, .kv_heads = kv,
		                   .head_dim = d };
	cfg.kv = bytes == 1 ? SERVE_KV_FP8 : SERVE_KV_BF16;
	cfg.context = ctx;
	cfg.batch = batch;
	serve_result r;
	char err[256];
	if (serve_compute(&r, &cfg, err, sizeof err) != MP_OK)
		return exs_fail(c, "%s", err);
	double tok = r.kv_token_bytes, total = r.kv_bytes;
	exs_set_num(c, "per_token_bytes", tok);
	exs_set_num(c, "per_token_kib", tok / 1024);
	exs_set_num(c, "total_gib", total / 1073741824.0);
	exs_set_num(c, "total_gb", total / 1e9);
	exs_mistake_num(c, "per_token_bytes", tok / 2, "That is half: a token keeps a key and a value, 2 vectors per KV "
	                "head and layer.");
	exs_mistake_num(c, "per_token_bytes", tok / kv * heads, "That counts the %s query heads; grouped-query attention "
	                "keeps only the %s KV heads.", exs_g(heads), exs_g(kv));
	exs_mistake_num(c, "per_token_kib", tok / 1000, "%s is per-token bytes / 1000; a KiB is 1024 bytes.",
	                exs_g(tok / 1000));
	exs_mistake_num(c, "total_gib", total / 1e9, "%s is the total in GB (10^9 bytes); a GiB is 2^30 bytes.",
	                exs_g(total / 1e9));
	exs_mistake_num(c, "total_gib", tok * ctx / 1073741824.0, "That is one sequence; the batch holds %s of them.",
	                exs_g(batch));
	exs_mistake_num(c, "total_gib", total / 2 / 1073741824.0, "That is half: keys and values both stay cached.");
	strbuf_printf(&c->w, "Step 1: per token and layer, each KV head keeps a key and a value of %s elements:\n"
	              "  2 x %s layers x %s KV heads x %s x %s bytes = %s bytes = %s KiB per token.\n",
	              exs_g(d), exs_g(L), exs_g(kv), exs_g(d), exs_g(bytes), exs_g(tok), exs_g(tok / 1024));
	strbuf_printf(&c->w, "Step 2: %s sequences of %s tokens: %s tokens x %s bytes = %s bytes.\n", exs_g(batch),
	              exs_g(ctx), exs_g(batch * ctx), exs_g(tok), exs_g(total));
	strbuf_printf(&c->w, "Step 3: %s / 2^30 = %s GiB (%s GB). The %s query heads do not count: they share the %s KV "
	              "heads.\n", exs_g(total), exs_g(total / 1073741824.0), exs_g(total / 1e9), exs_g(heads), exs_g(kv));
	return true;
}
