/* The GPU trainer's passes over the tiny GPT, written once for two
 * train_backend tables (train/backend.h):
 * gpu_trainer.cu (device memory, CUDA kernels, cuBLAS) and src/gpu/gpu_trainer_host.c
 * (host memory, the same kernel bodies in loops, sgemm), which lets the CPU
 * test suite run this file end to end on machines without a GPU.
 *
 * The includer defines, before including this file:
 *   GPU_TRAINER_LINKAGE, GPU_TRAINER_OP(name)
 *                              the linkage and name of each table operation
 *                              defined at the end (the includer's table
 *                              lists them with designated initialisers)
 *   GPU_TRAINER_LAUNCH(body, n, ...)  run gpu_kernel_<body>(i, ...) for i in [0, n)
 *   be_reserve / be_alloc / be_free / be_put / be_get / be_zero / be_check /
 *   be_gemm / be_operand_kind   (see their use below)
 * Common subset of C11 and CUDA C++: casts from void *, no designated
 * initialisers. */

#if GPU_KERNEL_HS_MAX != GPU_TRAIN_HEAD_MAX
#error "gpu_kernels.h and gpu_trainer.h disagree on the largest head size"
#endif

/* Partial sums of the reductions: GPU_TRAINER_NP threads stream the array (enough
 * in flight to use the memory bandwidth), then GPU_TRAINER_NF threads sum those
 * partials, each a fixed stride of them, so that copying the sums back
 * costs microseconds; the host adds the GPU_TRAINER_NF in order. */
enum { GPU_TRAINER_NP = 262144, GPU_TRAINER_NF = 1024 };
/* Row chunks of the column sums (bias and LayerNorm parameter gradients). */
enum { GPU_TRAINER_ROW_CHUNKS = 32 };

struct gpu_trainer {
	const train_config *cfg;                /* borrowed from the trainer */
	const train_policy *pol;
	size_t B, T, C, L, NH, V, P;
	size_t offs[GPT_NUM_PARAM_TENSORS];    /* element offset of each tensor */
	float *w, *g, *raw, *m, *v, *comp;      /* (P) each; comp only for Kahan */
	void *wop;                              /* (P) working GEMM copy, or NULL */
	int *inputs, *targets;                  /* (B,T) */
	int *tok_off, *tok_pos;                 /* (V+1), (B,T): positions of each token, in order */
	int *htok;                              /* host: the same two arrays, side by side */
	void *acts;                             /* one allocation, views below */
	size_t acts_bytes;
	double *dexact;
	float *encoded, *ln1, *ln1_mean, *ln1_rstd, *qkv, *atty, *preatt, *att, *attproj, *resid2, *ln2, *ln2_mean,
	      *ln2_rstd, *fch, *fch_gelu, *fcproj, *resid3, *lnf, *lnf_mean, *lnf_rstd, *logits, *probs, *losses,
	      *dresid, *dbuf_c, *dbuf_3c, *dbuf_4c, *dbuf_4c2, *dlogits, *dpreatt;
	float *part;                            /* (2, GPU_TRAINER_ROW_CHUNKS, max(4C, V)) column-sum chunks */
	float *qkv_r, *dout_r, *att_r;          /* attention operands rounded once (low-precision GEMM only) */
	void *opa, *opb;                        /* activation operands (BT * max(4C, V)) */
	unsigned long long *pu;                 /* (3, GPU_TRAINER_NP) partial counts */
	double *pd;                             /* (2, GPU_TRAINER_NP) partial sums */
	unsigned long long *fu;                 /* (3, GPU_TRAINER_NF) the counts folded */
	double *fd;                             /* (2, GPU_TRAINER_NF) the sums folded */
	unsigned long long *hu;                 /* host copies of the partials */
	double *hd;
	float *hlosses;                         /* (B,T) host */
	int kind;                               /* operand storage (GPU_KERNEL_OP_*) */
	size_t opbytes;                         /* bytes per operand element */
	gpu_kernel_q gm, rd, rq, gq, aq, oq, wq;        /* GEMM, reductions, residual, grads, accum, optim, weights */
};
typedef struct gpu_trainer gpu_trainer;

static size_t gpu_trainer_pad(size_t n)
{
	return (n + 63) / 64 * 64;   /* 256-byte aligned views */
}

/* Lays out the activation views from base (NULL: only counts bytes). */
static size_t gpu_trainer_point_acts(gpu_trainer *s, char *base)
{
	size_t B = s->B, T = s->T, C = s->C, L = s->L, NH = s->NH, V = s->V, BT = B * T, BTC = BT * C;
	size_t att = B * NH * T * T;
	bool lowp = s->pol->gemm_fmt != FMT_FP32;   /* the rounded operand copies */
	struct {
		float **view;
		size_t n;
	} f[] = {
		{ &s->encoded, BTC }, { &s->ln1, L * BTC }, { &s->ln1_mean, L * BT }, { &s->ln1_rstd, L * BT },
		{ &s->qkv, L * 3 * BTC }, { &s->atty, L * BTC }, { &s->preatt, L * att }, { &s->att, L * att },
		{ &s->attproj, L * BTC }, { &s->resid2, L * BTC }, { &s->ln2, L * BTC }, { &s->ln2_mean, L * BT },
		{ &s->ln2_rstd, L * BT }, { &s->fch, L * 4 * BTC }, { &s->fch_gelu, L * 4 * BTC },
		{ &s->fcproj, L * BTC }, { &s->resid3, L * BTC }, { &s->lnf, BTC }, { &s->lnf_mean, BT },
		{ &s->lnf_rstd, BT }, { &s->logits, BT * V }, { &s->probs, BT * V }, { &s->losses, BT },
		{ &s->dresid, BTC }, { &s->dbuf_c, BTC }, { &s->dbuf_3c, 3 * BTC }, { &s->dbuf_4c, 4 * BTC },
		{ &s->dbuf_4c2, 4 * BTC }, { &s->dlogits, BT * V }, { &s->dpreatt, att },
		{ &s->part, 2 * GPU_TRAINER_ROW_CHUNKS * (V > 4 * C ? V : 4 * C) },
		{ &s->qkv_r, lowp ? 3 * BTC : 0 }, { &s->dout_r, lowp ? BTC : 0 }, { &s->att_r, lowp ? att : 0 },
	};
	size_t off = gpu_trainer_pad(2 * BTC) * sizeof(float);   /* dexact (fp64) first */
	if (base != NULL)
		s->dexact = (double *)(void *)base;
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		if (base != NULL)
			*f[i].view = (float *)(void *)(base + off);
		off += gpu_trainer_pad(f[i].n) * sizeof(float);
	}
	size_t wide = BT * (V > 4 * C ? V : 4 * C);
	if (s->pol->gemm_fmt != FMT_FP32) {
		if (base != NULL) {
			s->opa = base + off;
			s->opb = base + off + gpu_trainer_pad(wide) * s->opbytes;
		}
		off += 2 * gpu_trainer_pad(wide) * s->opbytes;
	}
	return off;
}

#define GPU_TRAINER_TRY(expr)                            \
	do {                                    \
		mp_status st_ = (expr);         \
		if (st_ != MP_OK)               \
			return st_;             \
	} while (0)

static void gpu_trainer_free(gpu_trainer *s)
{
	if (s == NULL)
		return;
	void *dev[] = { s->w, s->g, s->raw, s->m, s->v, s->comp, s->wop, s->inputs, s->targets, s->tok_off, s->acts,
		        s->pu, s->pd, s->fu, s->fd };
	for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
		be_free(dev[i]);
	free(s->hu);
	free(s->hd);
	free(s->htok);
	free(s->hlosses);
	free(s);
}

/* Every byte gpu_trainer_alloc_all asks be_alloc for. */
static size_t gpu_trainer_device_bytes(const gpu_trainer *s)
{
	size_t P = s->P, BT = s->B * s->T;
	size_t n = 5 * P * sizeof(float) + 2 * BT * sizeof(int) + (s->V + 1 + BT) * sizeof(int) +
	           3 * (GPU_TRAINER_NP + GPU_TRAINER_NF) * sizeof(unsigned long long) +
	           2 * (GPU_TRAINER_NP + GPU_TRAINER_NF) * sizeof(double) + s->acts_bytes;
	if (!policy_master_fp32(s->pol) && s->pol->wupdate == WUPD_KAHAN)
		n += P * sizeof(float);
	if (s->pol->gemm_fmt != FMT_FP32)
		n += P * s->opbytes;
	return n;
}

static mp_status gpu_trainer_alloc_all(gpu_trainer *s)
{
	/* one clear message before any allocation when the shape cannot fit */
	GPU_TRAINER_TRY(be_reserve(gpu_trainer_device_bytes(s), s->B, s->T, s->C, s->L, s->V));
	size_t P = s->P, BT = s->B * s->T;
	struct {
		void **p;
		size_t bytes;
	} a[] = {
		{ (void **)&s->w, P * sizeof(float) }, { (void **)&s->g, P * sizeof(float) },
		{ (void **)&s->raw, P * sizeof(float) }, { (void **)&s->m, P * sizeof(float) },
		{ (void **)&s->v, P * sizeof(float) }, { (void **)&s->inputs, BT * sizeof(int) },
		{ (void **)&s->targets, BT * sizeof(int) }, { (void **)&s->tok_off, (s->V + 1 + BT) * sizeof(int) },
		{ (void **)&s->pu, 3 * GPU_TRAINER_NP * sizeof(unsigned long long) },
		{ (void **)&s->pd, 2 * GPU_TRAINER_NP * sizeof(double) }, { (void **)&s->fu, 3 * GPU_TRAINER_NF * sizeof(unsigned long long) },
		{ (void **)&s->fd, 2 * GPU_TRAINER_NF * sizeof(double) }, { &s->acts, s->acts_bytes },
	};
	for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
		GPU_TRAINER_TRY(be_alloc(a[i].p, a[i].bytes));
	if (!policy_master_fp32(s->pol) && s->pol->wupdate == WUPD_KAHAN)
		GPU_TRAINER_TRY(be_alloc((void **)&s->comp, P * sizeof(float)));
	if (s->pol->gemm_fmt != FMT_FP32)
		GPU_TRAINER_TRY(be_alloc(&s->wop, P * s->opbytes));
	s->hu = (unsigned long long *)malloc(3 * GPU_TRAINER_NF * sizeof *s->hu);
	s->hd = (double *)malloc(2 * GPU_TRAINER_NF * sizeof *s->hd);
	s->hlosses = (float *)malloc(BT * sizeof *s->hlosses);
	s->htok = (int *)malloc((s->V + 1 + BT) * sizeof *s->htok);
	if (s->tok_off != NULL)
		s->tok_pos = s->tok_off + s->V + 1;
	return s->hu && s->hd && s->hlosses && s->htok ? MP_OK : MP_ENOMEM;
}

static mp_status gpu_trainer_create(gpu_trainer **out, const train_config *cfg, const train_policy *p, const float *params,
                        size_t P)
{
	*out = NULL;
	gpt_config c = cfg->model;
	if (cfg->B == 0 || cfg->t == 0 || cfg->t > c.T || c.C == 0 || c.NH == 0 || c.C % c.NH || c.L == 0 || c.V == 0 ||
	    c.C / c.NH > GPU_KERNEL_HS_MAX || c.V > INT32_MAX || cfg->B * cfg->t > INT32_MAX)
		return MP_EINVAL;
	gpu_trainer *s = (gpu_trainer *)calloc(1, sizeof *s);
	if (s == NULL)
		return MP_ENOMEM;
	s->cfg = cfg;
	s->pol = p;
	s->B = cfg->B;
	s->T = cfg->t;
	s->C = c.C;
	s->L = c.L;
	s->NH = c.NH;
	s->V = c.V;
	size_t sz[GPT_NUM_PARAM_TENSORS];
	gpt_param_sizes(sz, c);
	size_t n = 0;
	for (size_t i = 0; i < GPT_NUM_PARAM_TENSORS; i++) {
		s->offs[i] = n;
		n += sz[i];
	}
	s->P = n;
	if (n != P) {
		free(s);
		return MP_EINVAL;
	}
	s->kind = p->gemm_fmt != FMT_FP32 ? be_operand_kind(p->gemm_fmt) : GPU_KERNEL_OP_F32;
	s->opbytes = s->kind == GPU_KERNEL_OP_F32 ? 4 : 2;
	s->gm = gpu_kernel_q_of(p->gemm_fmt, FMT_RNE);
	s->rd = gpu_kernel_q_of(p->reduce_fmt, FMT_RNE);
	s->rq = gpu_kernel_q_of(p->resid_fmt, p->resid_mode);
	s->gq = gpu_kernel_q_of(p->grad_fmt, FMT_RNE);
	s->aq = gpu_kernel_q_of(p->grad_accum_fmt, FMT_RNE);
	s->oq = gpu_kernel_q_of(p->optim_fmt, p->optim_mode);
	s->wq = gpu_kernel_q_of(p->weight_fmt, p->wupdate == WUPD_SR ? FMT_SR : FMT_RNE);
	s->acts_bytes = gpu_trainer_point_acts(s, NULL);
	mp_status st = gpu_trainer_alloc_all(s);
	if (st == MP_OK) {
		gpu_trainer_point_acts(s, (char *)s->acts);
		st = be_put(s->w, params, P * sizeof(float));
	}
	if (st == MP_OK && s->wop != NULL) {
		GPU_TRAINER_LAUNCH(operand, P, s->wop, s->kind, s->w, 0, s->gm);
		st = be_check();
	}
	if (st != MP_OK) {
		gpu_trainer_free(s);
		return st;
	}
	*out = s;
	return MP_OK;
}

static size_t gpu_trainer_acts_bytes(const gpu_trainer *s)
{
	return s->acts_bytes;
}

/* Parameter tensor i of an array laid out as the parameters. */
static float *gpu_trainer_param(const gpu_trainer *s, float *base, int i)
{
	return base + s->offs[i];
}

/* out (M,N) = inp (M,K) @ w (N,K)^T + bias: operands rounded to the GEMM
 * format (the activation in place, as layers' emulation stores it), fp32
 * accumulation, output rounded. w is a parameter; its operand is the working
 * copy. */
static mp_status gpu_trainer_gemm_forward(gpu_trainer *s, float *out, float *inp, const float *w, const float *bias,
                                 size_t M, size_t K, size_t N)
{
	if (s->pol->gemm_fmt == FMT_FP32) {
		GPU_TRAINER_TRY(be_gemm(FMT_FP32, 0, 1, M, N, K, 1.0f, inp, K, w, K, 0.0f, out, N));
		if (bias != NULL)
			GPU_TRAINER_LAUNCH(bias_round, M * N, out, bias, N, s->gm);
		return MP_OK;
	}
	const char *wop = (const char *)s->wop + (size_t)(w - s->w) * s->opbytes;
	GPU_TRAINER_LAUNCH(operand, M * K, s->opa, s->kind, inp, 1, s->gm);
	GPU_TRAINER_TRY(be_gemm(s->pol->gemm_fmt, 0, 1, M, N, K, 1.0f, s->opa, K, wop, K, 0.0f, out, N));
	GPU_TRAINER_LAUNCH(bias_round, M * N, out, bias, N, s->gm);
	return MP_OK;
}

/* The backward products: dinp (M,K) = dout @ w (overwritten, rounded),
 * dw (N,K) += dout^T @ inp (fp32), dbias += column sums of dout (fp32). */
static mp_status gpu_trainer_gemm_backward(gpu_trainer *s, float *dinp, float *dw, float *dbias, float *dout,
                                  float *inp, const float *w, size_t M, size_t K, size_t N)
{
	if (s->pol->gemm_fmt == FMT_FP32) {
		GPU_TRAINER_TRY(be_gemm(FMT_FP32, 0, 0, M, K, N, 1.0f, dout, N, w, K, 0.0f, dinp, K));
		GPU_TRAINER_TRY(be_gemm(FMT_FP32, 1, 0, N, K, M, 1.0f, dout, N, inp, K, 1.0f, dw, K));
	} else {
		const char *wop = (const char *)s->wop + (size_t)(w - s->w) * s->opbytes;
		GPU_TRAINER_LAUNCH(operand, M * N, s->opa, s->kind, dout, 0, s->gm);
		GPU_TRAINER_LAUNCH(operand, M * K, s->opb, s->kind, inp, 0, s->gm);
		GPU_TRAINER_TRY(be_gemm(s->pol->gemm_fmt, 0, 0, M, K, N, 1.0f, s->opa, N, wop, K, 0.0f, dinp, K));
		GPU_TRAINER_LAUNCH(round, M * K, dinp, s->gm);
		GPU_TRAINER_TRY(be_gemm(s->pol->gemm_fmt, 1, 0, N, K, M, 1.0f, s->opa, N, s->opb, K, 1.0f, dw, K));
	}
	if (dbias != NULL) {
		size_t rows_per = (M + GPU_TRAINER_ROW_CHUNKS - 1) / GPU_TRAINER_ROW_CHUNKS;
		GPU_TRAINER_LAUNCH(bias_partial, GPU_TRAINER_ROW_CHUNKS * N, s->part, dout, M, N, rows_per);
		GPU_TRAINER_LAUNCH(colsum_finish, N, dbias, s->part, N, (size_t)GPU_TRAINER_ROW_CHUNKS);
	}
	return MP_OK;
}

/* dweight += sum of n dout and dbias += sum of dout over the rows. */
static void gpu_trainer_layernorm_params(gpu_trainer *s, float *dweight, float *dbias, const float *dout, const float *inp,
                                const float *mean, const float *rstd)
{
	size_t BT = s->B * s->T, C = s->C, n = GPU_TRAINER_ROW_CHUNKS * C, rows_per = (BT + GPU_TRAINER_ROW_CHUNKS - 1) / GPU_TRAINER_ROW_CHUNKS;
	GPU_TRAINER_LAUNCH(layernorm_params_partial, n, s->part, s->part + n, dout, inp, mean, rstd, BT, C, rows_per);
	GPU_TRAINER_LAUNCH(colsum_finish, C, dweight, s->part, C, (size_t)GPU_TRAINER_ROW_CHUNKS);
	GPU_TRAINER_LAUNCH(colsum_finish, C, dbias, s->part + n, C, (size_t)GPU_TRAINER_ROW_CHUNKS);
}

/* The k count arrays and kd sum arrays of GPU_TRAINER_NP partials each, summed down
 * to GPU_TRAINER_NF each and copied to hu and hd. */
static mp_status gpu_trainer_partials(gpu_trainer *s, int ku, int kd)
{
	for (int a = 0; a < ku; a++)
		GPU_TRAINER_LAUNCH(fold_u64, GPU_TRAINER_NF, s->fu + a * GPU_TRAINER_NF, s->pu + (size_t)a * GPU_TRAINER_NP, (size_t)GPU_TRAINER_NP, (size_t)GPU_TRAINER_NF);
	for (int a = 0; a < kd; a++)
		GPU_TRAINER_LAUNCH(fold_f64, GPU_TRAINER_NF, s->fd + a * GPU_TRAINER_NF, s->pd + (size_t)a * GPU_TRAINER_NP, (size_t)GPU_TRAINER_NP, (size_t)GPU_TRAINER_NF);
	GPU_TRAINER_TRY(be_check());
	if (ku)
		GPU_TRAINER_TRY(be_get(s->hu, s->fu, (size_t)ku * GPU_TRAINER_NF * sizeof(unsigned long long)));
	if (kd)
		GPU_TRAINER_TRY(be_get(s->hd, s->fd, (size_t)kd * GPU_TRAINER_NF * sizeof(double)));
	return MP_OK;
}

/* SR stream index of residual write `site` (as model.c's resid_store). */
static uint64_t gpu_trainer_resid_index(const gpu_trainer *s, uint64_t step, size_t site)
{
	uint64_t sites = 2 * (uint64_t)s->L + 1;
	return (step * sites + site) * (uint64_t)(s->B * s->T * s->C);
}

static mp_status gpu_trainer_forward(gpu_trainer *s, const int *inputs, const int *targets, uint64_t step, double *loss,
                         double *dot_se, double *dot_ee)
{
	size_t B = s->B, T = s->T, C = s->C, L = s->L, NH = s->NH, V = s->V, BT = B * T, BTC = BT * C;
	size_t att = B * NH * T * T;
	for (size_t i = 0; i < BT; i++)
		if (inputs[i] < 0 || (size_t)inputs[i] >= V || (targets && (targets[i] < 0 || (size_t)targets[i] >= V)))
			return MP_EINVAL;
	GPU_TRAINER_TRY(be_put(s->inputs, inputs, BT * sizeof(int)));
	/* the positions of each token, for the embedding's backward pass */
	int *off = s->htok, *pos = s->htok + V + 1;
	memset(off, 0, (V + 1) * sizeof *off);
	for (size_t i = 0; i < BT; i++)
		off[inputs[i] + 1]++;
	for (size_t v = 0; v < V; v++)
		off[v + 1] += off[v];
	for (size_t i = 0; i < BT; i++)
		pos[off[inputs[i]]++] = (int)i;
	for (size_t v = V; v > 0; v--)   /* each off[v] now ends token v: shift back to starts */
		off[v] = off[v - 1];
	off[0] = 0;
	GPU_TRAINER_TRY(be_put(s->tok_off, s->htok, (V + 1 + BT) * sizeof(int)));
	if (targets != NULL)
		GPU_TRAINER_TRY(be_put(s->targets, targets, BT * sizeof(int)));
	uint64_t seed = s->cfg->seed ^ 0x5eedull;
	size_t k = s->cfg->resid_offset_channels > 0 && (size_t)s->cfg->resid_offset_channels < C
	           ? (size_t)s->cfg->resid_offset_channels : C;
	GPU_TRAINER_LAUNCH(encoder_forward, BTC, s->encoded, s->dexact, s->inputs, gpu_trainer_param(s, s->w, 0), gpu_trainer_param(s, s->w, 1),
	          T, C, s->cfg->resid_offset, k, s->rq, seed, gpu_trainer_resid_index(s, step, 0));
	for (size_t l = 0; l < L; l++) {
		const float *resid = l == 0 ? s->encoded : s->resid3 + (l - 1) * BTC;
		float *ln1 = s->ln1 + l * BTC, *qkv = s->qkv + l * 3 * BTC, *atty = s->atty + l * BTC;
		float *attproj = s->attproj + l * BTC, *resid2 = s->resid2 + l * BTC, *ln2 = s->ln2 + l * BTC;
		float *fch = s->fch + l * 4 * BTC, *fch_gelu = s->fch_gelu + l * 4 * BTC, *fcproj = s->fcproj + l * BTC;
		float *resid3 = s->resid3 + l * BTC;
		GPU_TRAINER_LAUNCH(layernorm_forward, BT, ln1, s->ln1_mean + l * BT, s->ln1_rstd + l * BT, resid,
		          gpu_trainer_param(s, s->w, 2) + l * C, gpu_trainer_param(s, s->w, 3) + l * C, C, s->rd);
		GPU_TRAINER_TRY(gpu_trainer_gemm_forward(s, qkv, ln1, gpu_trainer_param(s, s->w, 4) + l * 3 * C * C, gpu_trainer_param(s, s->w, 5) + l * 3 * C,
		                       BT, C, 3 * C));
		float *latt = s->att + l * att;
		const float *qkv_r = qkv;
		float *att_r = latt;
		if (s->pol->gemm_fmt != FMT_FP32) {
			GPU_TRAINER_LAUNCH(operand, 3 * BTC, s->qkv_r, (int)GPU_KERNEL_OP_F32, qkv, 0, s->gm);
			qkv_r = s->qkv_r;
			att_r = s->att_r;
		}
		GPU_TRAINER_LAUNCH(attention_forward, B * NH * T, atty, s->preatt + l * att, latt, att_r, qkv_r, NH, T, C, s->gm,
		          s->rd);
		GPU_TRAINER_TRY(gpu_trainer_gemm_forward(s, attproj, atty, gpu_trainer_param(s, s->w, 6) + l * C * C, gpu_trainer_param(s, s->w, 7) + l * C, BT,
		                       C, C));
		GPU_TRAINER_LAUNCH(residual_forward, BTC, resid2, s->dexact, resid, attproj, s->rq, seed,
		          gpu_trainer_resid_index(s, step, 1 + 2 * l));
		GPU_TRAINER_LAUNCH(layernorm_forward, BT, ln2, s->ln2_mean + l * BT, s->ln2_rstd + l * BT, resid2,
		          gpu_trainer_param(s, s->w, 8) + l * C, gpu_trainer_param(s, s->w, 9) + l * C, C, s->rd);
		GPU_TRAINER_TRY(gpu_trainer_gemm_forward(s, fch, ln2, gpu_trainer_param(s, s->w, 10) + l * 4 * C * C,
		                       gpu_trainer_param(s, s->w, 11) + l * 4 * C, BT, C, 4 * C));
		GPU_TRAINER_LAUNCH(gelu_forward, 4 * BTC, fch_gelu, fch);
		GPU_TRAINER_TRY(gpu_trainer_gemm_forward(s, fcproj, fch_gelu, gpu_trainer_param(s, s->w, 12) + l * C * 4 * C,
		                       gpu_trainer_param(s, s->w, 13) + l * C, BT, 4 * C, C));
		GPU_TRAINER_LAUNCH(residual_forward, BTC, resid3, s->dexact, resid2, fcproj, s->rq, seed,
		          gpu_trainer_resid_index(s, step, 2 + 2 * l));
	}
	const float *last = s->resid3 + (L - 1) * BTC;
	GPU_TRAINER_LAUNCH(layernorm_forward, BT, s->lnf, s->lnf_mean, s->lnf_rstd, last, gpu_trainer_param(s, s->w, 14),
	          gpu_trainer_param(s, s->w, 15), C, s->rd);
	GPU_TRAINER_TRY(gpu_trainer_gemm_forward(s, s->logits, s->lnf, gpu_trainer_param(s, s->w, 0), NULL, BT, C, V));
	GPU_TRAINER_LAUNCH(resid_dots, GPU_TRAINER_NP, s->pd, s->pd + GPU_TRAINER_NP, last, s->encoded, s->dexact, BTC, (size_t)GPU_TRAINER_NP);
	if (targets != NULL)
		GPU_TRAINER_LAUNCH(crossentropy_forward, BT, s->probs, s->losses, s->logits, s->targets, V, s->rd);
	GPU_TRAINER_TRY(gpu_trainer_partials(s, 0, 2));
	double se = 0.0, ee = 0.0;
	for (size_t j = 0; j < GPU_TRAINER_NF; j++) {
		se += s->hd[j];
		ee += s->hd[GPU_TRAINER_NF + j];
	}
	*dot_se = se;
	*dot_ee = ee;
	*loss = NAN;
	if (targets != NULL) {
		GPU_TRAINER_TRY(be_get(s->hlosses, s->losses, BT * sizeof(float)));
		double total = 0.0;
		for (size_t i = 0; i < BT; i++)
			total += s->hlosses[i];
		*loss = (float)(total / (double)BT);
	}
	return MP_OK;
}

static mp_status gpu_trainer_backward(gpu_trainer *s, float loss_scale)
{
	size_t B = s->B, T = s->T, C = s->C, L = s->L, NH = s->NH, V = s->V, BT = B * T, BTC = BT * C;
	size_t att = B * NH * T * T;
	float *w = s->w, *g = s->g;
	GPU_TRAINER_TRY(be_zero(g, s->P * sizeof(float)));
	float dloss = loss_scale / (float)BT;
	GPU_TRAINER_LAUNCH(crossentropy_backward, BT * V, s->dlogits, s->probs, s->targets, dloss, V);
	GPU_TRAINER_TRY(gpu_trainer_gemm_backward(s, s->dbuf_c, gpu_trainer_param(s, g, 0), NULL, s->dlogits, s->lnf, gpu_trainer_param(s, w, 0), BT, C, V));
	const float *last = s->resid3 + (L - 1) * BTC;
	GPU_TRAINER_TRY(be_zero(s->dresid, BTC * sizeof(float)));
	GPU_TRAINER_LAUNCH(layernorm_backward_inp, BT, s->dresid, s->dbuf_c, last, gpu_trainer_param(s, w, 14), s->lnf_mean, s->lnf_rstd,
	          C, s->rd);
	gpu_trainer_layernorm_params(s, gpu_trainer_param(s, g, 14), gpu_trainer_param(s, g, 15), s->dbuf_c, last, s->lnf_mean, s->lnf_rstd);
	for (size_t l = L; l-- > 0;) {
		const float *resid = l == 0 ? s->encoded : s->resid3 + (l - 1) * BTC;
		float *ln1 = s->ln1 + l * BTC, *qkv = s->qkv + l * 3 * BTC, *atty = s->atty + l * BTC;
		float *resid2 = s->resid2 + l * BTC, *ln2 = s->ln2 + l * BTC;
		float *fch = s->fch + l * 4 * BTC, *fch_gelu = s->fch_gelu + l * 4 * BTC;
		float *dgelu = s->dbuf_4c, *dfch = s->dbuf_4c2, *dln = s->dbuf_c, *dqkv = s->dbuf_3c;
		GPU_TRAINER_TRY(gpu_trainer_gemm_backward(s, dgelu, gpu_trainer_param(s, g, 12) + l * C * 4 * C, gpu_trainer_param(s, g, 13) + l * C, s->dresid,
		                        fch_gelu, gpu_trainer_param(s, w, 12) + l * C * 4 * C, BT, 4 * C, C));
		GPU_TRAINER_TRY(be_zero(dfch, 4 * BTC * sizeof(float)));
		GPU_TRAINER_LAUNCH(gelu_backward, 4 * BTC, dfch, fch, dgelu);
		GPU_TRAINER_TRY(gpu_trainer_gemm_backward(s, dln, gpu_trainer_param(s, g, 10) + l * 4 * C * C, gpu_trainer_param(s, g, 11) + l * 4 * C, dfch,
		                        ln2, gpu_trainer_param(s, w, 10) + l * 4 * C * C, BT, C, 4 * C));
		GPU_TRAINER_LAUNCH(layernorm_backward_inp, BT, s->dresid, dln, resid2, gpu_trainer_param(s, w, 8) + l * C,
		          s->ln2_mean + l * BT, s->ln2_rstd + l * BT, C, s->rd);
		gpu_trainer_layernorm_params(s, gpu_trainer_param(s, g, 8) + l * C, gpu_trainer_param(s, g, 9) + l * C, dln, resid2,
		                    s->ln2_mean + l * BT, s->ln2_rstd + l * BT);
		GPU_TRAINER_TRY(gpu_trainer_gemm_backward(s, dln, gpu_trainer_param(s, g, 6) + l * C * C, gpu_trainer_param(s, g, 7) + l * C, s->dresid, atty,
		                        gpu_trainer_param(s, w, 6) + l * C * C, BT, C, C));
		GPU_TRAINER_TRY(be_zero(dqkv, 3 * BTC * sizeof(float)));
		const float *latt = s->att + l * att, *qkv_r = qkv, *dout_r = dln, *att_r = latt;
		if (s->pol->gemm_fmt != FMT_FP32) {
			GPU_TRAINER_LAUNCH(operand, 3 * BTC, s->qkv_r, (int)GPU_KERNEL_OP_F32, qkv, 0, s->gm);
			GPU_TRAINER_LAUNCH(operand, BTC, s->dout_r, (int)GPU_KERNEL_OP_F32, dln, 0, s->gm);
			GPU_TRAINER_LAUNCH(operand, att, s->att_r, (int)GPU_KERNEL_OP_F32, (float *)latt, 0, s->gm);
			qkv_r = s->qkv_r;
			dout_r = s->dout_r;
			att_r = s->att_r;
		}
		GPU_TRAINER_LAUNCH(attention_backward_q, B * NH * T, dqkv, s->dpreatt, dout_r, qkv_r, latt, NH, T, C, s->gm, s->rd);
		GPU_TRAINER_LAUNCH(attention_backward_kv, B * NH * T, dqkv, s->dpreatt, dout_r, qkv_r, att_r, NH, T, C, s->gm);
		GPU_TRAINER_TRY(gpu_trainer_gemm_backward(s, dln, gpu_trainer_param(s, g, 4) + l * 3 * C * C, gpu_trainer_param(s, g, 5) + l * 3 * C, dqkv, ln1,
		                        gpu_trainer_param(s, w, 4) + l * 3 * C * C, BT, C, 3 * C));
		GPU_TRAINER_LAUNCH(layernorm_backward_inp, BT, s->dresid, dln, resid, gpu_trainer_param(s, w, 2) + l * C,
		          s->ln1_mean + l * BT, s->ln1_rstd + l * BT, C, s->rd);
		gpu_trainer_layernorm_params(s, gpu_trainer_param(s, g, 2) + l * C, gpu_trainer_param(s, g, 3) + l * C, dln, resid,
		                    s->ln1_mean + l * BT, s->ln1_rstd + l * BT);
	}
	GPU_TRAINER_LAUNCH(encoder_backward_wte, V * C, gpu_trainer_param(s, g, 0), s->dresid, s->tok_off, s->tok_pos, C);
	GPU_TRAINER_LAUNCH(encoder_backward_wpe, T * C, gpu_trainer_param(s, g, 1), s->dresid, B, T, C);
	return be_check();
}

static mp_status gpu_trainer_grads(gpu_trainer *s, double inv_scale, size_t *nonzero, size_t *flushed, bool *found_inf,
                       double *norm2)
{
	GPU_TRAINER_LAUNCH(grads, GPU_TRAINER_NP, s->g, s->raw, s->pu, s->pu + GPU_TRAINER_NP, s->pu + 2 * GPU_TRAINER_NP, s->pd, s->P, (size_t)GPU_TRAINER_NP, s->gq,
	          s->aq, inv_scale);
	GPU_TRAINER_TRY(gpu_trainer_partials(s, 3, 1));
	unsigned long long nz = 0, fl = 0, nf = 0;
	double n2 = 0.0;
	for (size_t j = 0; j < GPU_TRAINER_NF; j++) {
		nz += s->hu[j];
		fl += s->hu[GPU_TRAINER_NF + j];
		nf += s->hu[2 * GPU_TRAINER_NF + j];
		n2 += s->hd[j];
	}
	*nonzero = (size_t)nz;
	*flushed = (size_t)fl;
	*found_inf = nf != 0;
	*norm2 = n2;
	return MP_OK;
}

static mp_status gpu_trainer_update(gpu_trainer *s, double clip, double c1, double c2, uint64_t adam_t, size_t *nonzero,
                        size_t *lost)
{
	gpu_kernel_adam a;
	memset(&a, 0, sizeof a);
	a.lr = lr_schedule_at(&s->cfg->sched, s->cfg->lr, adam_t);
	a.beta1 = s->cfg->beta1;
	a.beta2 = s->cfg->beta2;
	a.eps = s->cfg->eps;
	a.weight_decay = s->cfg->weight_decay;
	a.clip = clip;
	a.c1 = c1;
	a.c2 = c2;
	a.master_fp32 = policy_master_fp32(s->pol);
	a.kahan = !policy_master_fp32(s->pol) && s->pol->wupdate == WUPD_KAHAN;
	a.seed = s->cfg->seed ^ 0xada0ull;
	a.index0 = adam_t * (uint64_t)s->P;
	GPU_TRAINER_LAUNCH(adamw, GPU_TRAINER_NP, s->w, s->m, s->v, s->comp, s->g, s->pu, s->pu + GPU_TRAINER_NP, s->wop, s->kind, s->wop != NULL,
	          s->P, (size_t)GPU_TRAINER_NP, a, s->oq, s->wq, s->gm);
	GPU_TRAINER_TRY(gpu_trainer_partials(s, 2, 0));
	unsigned long long nz = 0, ls = 0;
	for (size_t j = 0; j < GPU_TRAINER_NF; j++) {
		nz += s->hu[j];
		ls += s->hu[GPU_TRAINER_NF + j];
	}
	*nonzero = (size_t)nz;
	*lost = (size_t)ls;
	return MP_OK;
}

/* Copies one of the (P) arrays to the host (the gradients as of the last
 * grads phase: rounded and unscaled). */
static mp_status gpu_trainer_read(gpu_trainer *s, train_array which, float *host)
{
	const float *src = which == TRAIN_ARRAY_WEIGHTS ? s->w : which == TRAIN_ARRAY_GRADS ? s->g : s->raw;
	return be_get(host, src, s->P * sizeof(float));
}

/* The run state's (P) arrays (train/backend.h's train_state_array): the
 * weights, Adam's moments, the Kahan compensation; no fp32 reference of v
 * here (trainer_v_ratio is NaN on a GPU). NULL for one the policy keeps none of. */
static float *gpu_trainer_state_array(const gpu_trainer *s, train_state_array which)
{
	switch (which) {
	case TRAIN_STATE_WEIGHTS: return s->w;
	case TRAIN_STATE_M: return s->m;
	case TRAIN_STATE_V: return s->v;
	case TRAIN_STATE_COMP: return s->comp;
	case TRAIN_STATE_VREF: return NULL;
	}
	return NULL;
}

/* Writes one state array from the host; the weights' GEMM working copy is
 * made again from them, as create makes it. */
static mp_status gpu_trainer_state_write(gpu_trainer *s, train_state_array which, const float *host)
{
	float *a = gpu_trainer_state_array(s, which);
	if (a == NULL)
		return MP_EINVAL;
	GPU_TRAINER_TRY(be_put(a, host, s->P * sizeof(float)));
	if (which == TRAIN_STATE_WEIGHTS && s->wop != NULL) {
		GPU_TRAINER_LAUNCH(operand, s->P, s->wop, s->kind, s->w, 0, s->gm);
		return be_check();
	}
	return MP_OK;
}

/* --- the operations of the train_backend table, with the linkage and
 * names the includer chose; the includer builds the table --- */

GPU_TRAINER_LINKAGE mp_status GPU_TRAINER_OP(create)(void **out, const train_config *cfg, const train_policy *p,
                                                     const float *params, size_t P)
{
	return gpu_trainer_create((gpu_trainer **)out, cfg, p, params, P);
}
GPU_TRAINER_LINKAGE void GPU_TRAINER_OP(free)(void *s)
{
	gpu_trainer_free((gpu_trainer *)s);
}
GPU_TRAINER_LINKAGE size_t GPU_TRAINER_OP(acts_bytes)(const void *s)
{
	return gpu_trainer_acts_bytes((const gpu_trainer *)s);
}
GPU_TRAINER_LINKAGE mp_status GPU_TRAINER_OP(forward)(void *s, const int *inputs, const int *targets, uint64_t step,
                                                      double *loss, double *dot_se, double *dot_ee)
{
	return gpu_trainer_forward((gpu_trainer *)s, inputs, targets, step, loss, dot_se, dot_ee);
}
GPU_TRAINER_LINKAGE mp_status GPU_TRAINER_OP(backward)(void *s, float loss_scale)
{
	return gpu_trainer_backward((gpu_trainer *)s, loss_scale);
}
GPU_TRAINER_LINKAGE mp_status GPU_TRAINER_OP(grads)(void *s, double inv_scale, size_t *nonzero, size_t *flushed,
                                                    bool *found_inf, double *norm2)
{
	return gpu_trainer_grads((gpu_trainer *)s, inv_scale, nonzero, flushed, found_inf, norm2);
}
GPU_TRAINER_LINKAGE mp_status GPU_TRAINER_OP(update)(void *s, double clip, double c1, double c2, uint64_t adam_t,
                                                     size_t *nonzero, size_t *lost)
{
	return gpu_trainer_update((gpu_trainer *)s, clip, c1, c2, adam_t, nonzero, lost);
}
GPU_TRAINER_LINKAGE mp_status GPU_TRAINER_OP(read)(void *s, train_array which, float *host)
{
	return gpu_trainer_read((gpu_trainer *)s, which, host);
}
GPU_TRAINER_LINKAGE bool GPU_TRAINER_OP(state_has)(const void *s, train_state_array which)
{
	return gpu_trainer_state_array((const gpu_trainer *)s, which) != NULL;
}
GPU_TRAINER_LINKAGE mp_status GPU_TRAINER_OP(state_read)(void *s, train_state_array which, float *host)
{
	const float *a = gpu_trainer_state_array((const gpu_trainer *)s, which);
	return a == NULL ? MP_EINVAL : be_get(host, a, ((const gpu_trainer *)s)->P * sizeof(float));
}
GPU_TRAINER_LINKAGE mp_status GPU_TRAINER_OP(state_write)(void *s, train_state_array which, const float *host)
{
	return gpu_trainer_state_write((gpu_trainer *)s, which, host);
}
