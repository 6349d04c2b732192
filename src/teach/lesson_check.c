#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift/drift.h"
#include "quant/quant.h"
#include "teach/lesson_check.h"
#include "teach/lesson_check_int.h"
#include "train/accum.h"
#include "train/train.h"
#include "util/grow.h"

/* --- the commands a lesson may run --- */

/* The default of each command's --seed, where the command itself takes
 * it from: train's and gradhist's trainer configuration, drift's
 * parameters, quantize's and accum's constants. */
static long long seed_train(void) { return (long long)train_config_default().seed; }
static long long seed_drift(void) { return (long long)drift_defaults().seed; }
static long long seed_quant(void) { return QUANT_SEED_DEFAULT; }
static long long seed_accum(void) { return ACCUM_SEED_DEFAULT; }

/* Subcommands that only read and print, the default of their --seed (NULL:
 * they take none that matters to the claims), the option without which
 * the seed does not matter (NULL: it always does; quantize's typed values
 * are the same whatever the seed, its --random tensor is not), and whether
 * their output goes through sgemm (train and gradhist train the tiny GPT). */
static const struct {
	const char *name;
	long long (*seed)(void);
	const char *seeded_with;
	bool blas;
} commands[] = {
	{ .name = "formats" },  { .name = "bits" }, { .name = "round" }, { .name = "budget" },
	{ .name = "quantize", .seed = seed_quant, .seeded_with = "--random" }, { .name = "drift", .seed = seed_drift },
	{ .name = "train", .seed = seed_train, .blas = true }, { .name = "gradhist", .seed = seed_train, .blas = true },
	{ .name = "accum", .seed = seed_accum },
	{ .name = "amax" },
};

/* Options that write files (or read state) wherever they appear. */
static const char *const writing_options[] = { "--tensor-stats", "--save", "--resume", "--out", "--png", "--svg",
	                                       "--checkpoint", "--summary" };

static void free_argv(char **argv, size_t argc)
{
	for (size_t i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

static int command_index(const char *name)
{
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(commands[i].name, name))
			return (int)i;
	return -1;
}

/* Whether argv[i] is a file-writing option (--csv FILE with FILE not -, or
 * one of writing_options). */
static bool writes_file(char **argv, size_t argc, size_t i)
{
	const char *a = argv[i];
	for (size_t k = 0; k < sizeof writing_options / sizeof writing_options[0]; k++) {
		size_t n = strlen(writing_options[k]);
		if (!strncmp(a, writing_options[k], n) && (a[n] == '\0' || a[n] == '='))
			return true;
	}
	if (!strncmp(a, "--csv=", 6))
		return strcmp(a + 6, "-") != 0;
	return !strcmp(a, "--csv") && i + 1 < argc && argv[i + 1][0] != '-';
}

mp_status lesson_command_argv(const char *line, char ***argv, size_t *argc, char *err, size_t errlen)
{
	*argv = NULL;
	*argc = 0;
	const char *bad = strpbrk(line, "|&;<>()$`\\\"'*?[]{}~#!");
	if (bad) {
		snprintf(err, errlen, "'%c': lesson commands are run without a shell, so no shell syntax", *bad);
		return MP_EINVAL;
	}
	size_t cap = 0;
	for (const char *p = line; *p;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		const char *w = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*argc + 2 > cap) {
			cap = cap ? 2 * cap : 16;
			char **q = realloc(*argv, cap * sizeof *q);
			if (!q) {
				free_argv(*argv, *argc);
				*argv = NULL;
				*argc = 0;
				return MP_ENOMEM;
			}
			*argv = q;
		}
		if (((*argv)[(*argc)++] = strndup(w, (size_t)(p - w))) == NULL) {
			free_argv(*argv, *argc - 1);
			*argv = NULL;
			*argc = 0;
			return MP_ENOMEM;
		}
		(*argv)[*argc] = NULL;
	}
	const char *why = NULL;
	if (*argc < 2 || strcmp((*argv)[0], "mixprec"))
		why = "a command is 'mixprec SUBCOMMAND ...'";
	else if (command_index((*argv)[1]) < 0)
		why = "only formats, bits, round, budget, quantize, drift, train, gradhist, accum and amax are run by lesson check";
	for (size_t i = 2; !why && i < *argc; i++)
		if (writes_file(*argv, *argc, i))
			why = "an option that writes a file (lesson check only runs commands that print)";
	if (why) {
		snprintf(err, errlen, "%s", why);
		free_argv(*argv, *argc);
		*argv = NULL;
		*argc = 0;
		return MP_EINVAL;
	}
	return MP_OK;
}

bool lesson_command_uses_blas(char *const *argv, size_t argc)
{
	int ci = argc >= 2 ? command_index(argv[1]) : -1;
	return ci >= 0 && commands[ci].blas;
}

/* Whether argv holds the option opt (--opt, --opt V or --opt=V). */
static bool has_option(char **argv, size_t argc, const char *opt)
{
	size_t n = strlen(opt);
	for (size_t i = 2; i < argc; i++)
		if (!strncmp(argv[i], opt, n) && (argv[i][n] == '\0' || argv[i][n] == '='))
			return true;
	return false;
}

bool lesson_command_seeded(char **argv, size_t argc, size_t k, char ***out, size_t *outc)
{
	*out = NULL;
	*outc = 0;
	int ci = argc >= 2 ? command_index(argv[1]) : -1;
	if (ci < 0 || !commands[ci].seed)
		return false;
	if (commands[ci].seeded_with && !has_option(argv, argc, commands[ci].seeded_with))
		return false;
	char **v = calloc(argc + 3, sizeof *v);
	if (!v)
		return false;
	long long seed = commands[ci].seed();
	bool found = false;
	size_t n = 0;
	for (size_t i = 0; i < argc; i++) {
		const char *a = argv[i];
		char buf[64];
		if (!strcmp(a, "--seed") && i + 1 < argc) {
			seed = strtoll(argv[i + 1], NULL, 10);
			snprintf(buf, sizeof buf, "%lld", seed + (long long)k);
			v[n++] = strdup(a);
			v[n++] = strdup(buf);
			i++;
			found = true;
		} else if (!strncmp(a, "--seed=", 7)) {
			snprintf(buf, sizeof buf, "--seed=%lld", strtoll(a + 7, NULL, 10) + (long long)k);
			v[n++] = strdup(buf);
			found = true;
		} else {
			v[n++] = strdup(a);
		}
	}
	if (!found) {
		char buf[64];
		snprintf(buf, sizeof buf, "%lld", seed + (long long)k);
		v[n++] = strdup("--seed");
		v[n++] = strdup(buf);
	}
	for (size_t i = 0; i < n; i++)
		if (!v[i]) {
			free_argv(v, n);
			return false;
		}
	*out = v;
	*outc = n;
	return true;
}

/* --- the report --- */

lesson_check_item *lesson_check_add(lesson_check_report *rep, lesson_check_kind kind, unsigned line, bool ok,
                                    const char *what, const char *fmt, ...)
{
	if (!grow_one(&rep->items, &rep->cap, rep->n, 32, sizeof *rep->items))
		return NULL;
	lesson_check_item *it = &rep->items[rep->n++];
	memset(it, 0, sizeof *it);
	it->kind = kind;
	it->line = line;
	it->ok = ok;
	snprintf(it->what, sizeof it->what, "%s", what ? what : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(it->detail, sizeof it->detail, fmt, ap);
	va_end(ap);
	if (kind == LC_CLAIM)
		rep->claims++;
	if (kind == LC_MALFORMED)
		rep->malformed++;
	else if (!ok)
		rep->failed++;
	return it;
}

void lesson_check_report_free(lesson_check_report *rep)
{
	free(rep->items);
	memset(rep, 0, sizeof *rep);
}

/* --- the prose around a block --- */

bool lesson_is_code(const lesson_block *b, const char *info)
{
	return b->kind == LB_CODE && b->info && !strcmp(b->info, info);
}

static bool is_prose(const lesson_block *b)
{
	return b->kind == LB_PARAGRAPH || b->kind == LB_LIST_ITEM || b->kind == LB_QUOTE || b->kind == LB_TABLE_ROW;
}

/* The section holding block i: [*first, *last) between headings. */
static void section_of(const lesson_doc *doc, size_t i, size_t *first, size_t *last)
{
	size_t f = i;
	while (f > 0 && doc->blocks[f - 1].kind != LB_HEADING)
		f--;
	size_t l = i + 1;
	while (l < doc->nblocks && doc->blocks[l].kind != LB_HEADING)
		l++;
	*first = f;
	*last = l;
}

/* Whether needle occurs in hay with every run of white space in either
 * read as one blank (a quote may be wrapped differently from the file). */
static bool contains_loose(const char *hay, const char *needle)
{
	for (const char *h = hay; *h; h++) {
		const char *a = h, *b = needle;
		while (*b) {
			if (isspace((unsigned char)*b)) {
				if (!isspace((unsigned char)*a))
					break;
				while (isspace((unsigned char)*a))
					a++;
				while (isspace((unsigned char)*b))
					b++;
				continue;
			}
			if (*a != *b)
				break;
			a++;
			b++;
		}
		if (!*b)
			return true;
	}
	return false;
}

/* Whether quote q is in the prose of section [first, last). */
static bool quote_in_section(const lesson_doc *doc, size_t first, size_t last, const char *q)
{
	for (size_t k = first; k < last; k++)
		if (is_prose(&doc->blocks[k]) && contains_loose(doc->blocks[k].text, q))
			return true;
	return false;
}

/* --- running one block --- */

typedef struct {
	claim c;
	unsigned line;
	const char *text;
	size_t len;
	bool ok;               /* parsed */
} parsed_claim;

/* Parses the claims block cb (NULL: none) into *pc. Malformed lines are
 * reported and left out. */
static mp_status parse_claims(const lesson_block *cb, lesson_check_report *rep, parsed_claim **pc, size_t *n)
{
	*pc = NULL;
	*n = 0;
	if (!cb)
		return MP_OK;
	size_t cap = 1;
	for (const char *p = cb->text; *p; p++)
		cap += *p == '\n';
	*pc = calloc(cap, sizeof **pc);
	if (!*pc)
		return MP_ENOMEM;
	unsigned line = cb->line;
	for (const char *p = cb->text; *p; line++) {
		size_t len = strcspn(p, "\n");
		char *l = strndup(p, len);
		if (!l)
			return MP_ENOMEM;
		const char *t = l;
		while (*t == ' ' || *t == '\t')
			t++;
		if (*t && *t != '#') {
			parsed_claim *c = &(*pc)[(*n)++];
			char err[200];
			c->line = line;
			c->text = p;
			c->len = len;
			mp_status st = claim_parse(&c->c, t, err, sizeof err);
			if (st == MP_ENOMEM) {
				free(l);
				return st;
			}
			c->ok = st == MP_OK;
			if (!c->ok && !lesson_check_add(rep, LC_MALFORMED, line, false, t, "%s", err)) {
				free(l);
				return MP_ENOMEM;
			}
		}
		free(l);
		p += len;
		if (*p)
			p++;
	}
	return MP_OK;
}

/* Runs every command line of block b with seed offset k under BLAS core
 * type core (NULL: the environment's); *out is their outputs concatenated.
 * Returns false (an item reported) when a command failed; MP_EIO from the
 * runner is passed up in *st. */
static bool run_block(const lesson_block *b, size_t k, const char *core, lesson_runner run, void *ctx,
                      lesson_check_report *rep, char **out, mp_status *st)
{
	*out = NULL;
	*st = MP_OK;
	size_t total = 0;
	unsigned line = b->line;
	for (const char *p = b->text; *p; line++) {
		size_t len = strcspn(p, "\n");
		char *l = strndup(p, len);
		char **argv = NULL, **sv = NULL;
		size_t argc = 0, svc = 0;
		char err[200];
		bool ok = l != NULL;
		if (ok && *l) {
			mp_status ps = lesson_command_argv(l, &argv, &argc, err, sizeof err);
			if (ps != MP_OK) {
				ok = false;
				*st = ps == MP_ENOMEM ? ps : MP_OK;
				if (ps != MP_ENOMEM && !lesson_check_add(rep, LC_MALFORMED, line, false, l, "%s", err))
					*st = MP_ENOMEM;
			} else {
				if (k > 0 && lesson_command_seeded(argv, argc, k, &sv, &svc)) {
					free_argv(argv, argc);
					argv = sv;
					argc = svc;
				}
				char *o = NULL;
				int rc = 0;
				*st = run(ctx, argv, lesson_command_uses_blas(argv, argc) ? core : NULL, &o, &rc);
				rep->runs++;
				if (*st != MP_OK || rc != 0) {
					ok = false;
					if (*st == MP_OK && !lesson_check_add(rep, LC_BLOCK, line, false, l, "exited %d%s%s%s", rc,
					                              k ? " (with the seed shifted)" : "",
					                              core ? " under OPENBLAS_CORETYPE=" : "", core ? core : ""))
						*st = MP_ENOMEM;
				} else {
					size_t on = strlen(o);
					char *grown = realloc(*out, total + on + 1);
					if (!grown) {
						ok = false;
						*st = MP_ENOMEM;
					} else {
						memcpy(grown + total, o, on + 1);
						*out = grown;
						total += on;
					}
				}
				free(o);
			}
		}
		free_argv(argv, argc);
		free(l);
		if (!ok) {
			free(*out);
			*out = NULL;
			return false;
		}
		p += len;
		if (*p)
			p++;
	}
	if (!*out && (*out = strdup("")) == NULL) {
		*st = MP_ENOMEM;
		return false;
	}
	return true;
}

/* The runs of one block: outs[c * nseed + k] is seed offset k under core
 * type cores[c] (ncore 1 and cores NULL: the environment's). */
typedef struct {
	const char *const *outs;
	size_t nseed, ncore;
	const char *const *cores;
	bool ranges;          /* lesson_check_opts.ranges */
} block_runs;

/* Appends to detail the range of pc's left side over every run of r. */
static void add_range(char *detail, size_t size, const parsed_claim *pc, const block_runs *r)
{
	double lo = INFINITY, hi = -INFINITY, x;
	size_t n = r->nseed * r->ncore, got = 0;
	char err[200];
	for (size_t i = 0; i < n; i++)
		if (claim_eval(pc->c.lhs, r->outs[i], &x, err, sizeof err) == MP_OK) {
			lo = fmin(lo, x);
			hi = fmax(hi, x);
			got++;
		}
	size_t k = strlen(detail);
	if (got)
		snprintf(detail + k, size - k, " [left side %.6g..%.6g over %zu runs]", lo, hi, got);
}

static const char *core_name(const block_runs *r, size_t c)
{
	return r->cores && r->cores[c] ? r->cores[c] : "native";
}

/* A figure's quotes must state it: for a claim with '=', every quote that
 * holds a digit must hold the figure (its right-hand side) within the
 * tolerance. *failed: an item saying otherwise was added. False: out of
 * memory. */
static bool quotes_state_figure(const parsed_claim *pc, const char *out, const char *detail, const char *what,
                                lesson_check_report *rep, bool *failed)
{
	double x;
	char err[200];
	*failed = false;
	if (pc->c.op != CLAIM_EQ || !pc->c.rhs || claim_eval(pc->c.rhs, out, &x, err, sizeof err) != MP_OK)
		return true;
	double tol = pc->c.tol_rel ? pc->c.tol / 100 * fabs(x) : pc->c.tol;
	for (size_t q = 0; q < pc->c.nquotes; q++)
		if (strpbrk(pc->c.quotes[q], "0123456789") && !claim_text_has_number(pc->c.quotes[q], x, tol)) {
			*failed = true;
			return lesson_check_add(rep, LC_CLAIM, pc->line, false, what,
			                "%s, but the quote \"%s\" states no figure within %.3g of %.6g", detail,
			                pc->c.quotes[q], tol, x) != NULL;
		}
	return true;
}

/* A figure (=): on the first seed under every core type; the prose must
 * state the figure the claim checks. */
static bool judge_figure(const parsed_claim *pc, const block_runs *r, const char *what, lesson_check_report *rep)
{
	claim_verdict v, first;
	for (size_t c = 0; c < r->ncore; c++) {
		claim_check(&pc->c, r->outs + c * r->nseed, 1, &v);
		if (c == 0)
			first = v;
		if (!v.ok) {
			if (r->ncore > 1) {
				size_t k = strlen(v.detail);
				snprintf(v.detail + k, sizeof v.detail - k, " under OPENBLAS_CORETYPE=%s", core_name(r, c));
			}
			if (r->ranges)
				add_range(v.detail, sizeof v.detail, pc, r);
			return lesson_check_add(rep, LC_CLAIM, pc->line, false, what, "%s", v.detail) != NULL;
		}
	}
	bool fail;
	if (!quotes_state_figure(pc, r->outs[0], first.detail, what, rep, &fail))
		return false;
	if (fail)
		return true;
	if (r->ncore > 1) {
		size_t k = strlen(first.detail);
		snprintf(first.detail + k, sizeof first.detail - k, " (and under %zu more BLAS core types)", r->ncore - 1);
	}
	if (r->ranges)
		add_range(first.detail, sizeof first.detail, pc, r);
	return lesson_check_add(rep, LC_CLAIM, pc->line, true, what, "%s", first.detail) != NULL;
}

/* Checks one parsed claim of the block at section [first, last); r NULL:
 * the command failed (a cite needs none). */
static bool judge(const lesson_doc *doc, size_t first, size_t last, const parsed_claim *pc, const block_runs *r,
                  lesson_check_report *rep)
{
	char what[160];
	snprintf(what, sizeof what, "%.*s", (int)(pc->len < 150 ? pc->len : 150), pc->text);
	for (size_t q = 0; q < pc->c.nquotes; q++)
		if (!quote_in_section(doc, first, last, pc->c.quotes[q]))
			return lesson_check_add(rep, LC_CLAIM, pc->line, false, what, "quote \"%s\" is not in this section's prose",
			                pc->c.quotes[q]) != NULL;
	claim_verdict v;
	if (!r && !pc->c.cite)
		return lesson_check_add(rep, LC_CLAIM, pc->line, false, what, "not checked: the command failed") != NULL;
	if (pc->c.cite) {
		claim_check(&pc->c, NULL, 0, &v);
		bool fail = false;
		if (v.ok && !quotes_state_figure(pc, "", v.detail, what, rep, &fail))
			return false;
		return fail || lesson_check_add(rep, LC_CLAIM, pc->line, v.ok, what, "%s", v.detail) != NULL;
	}
	if (pc->c.op == CLAIM_EQ || !claim_per_seed(&pc->c))
		return judge_figure(pc, r, what, rep);
	size_t n = r->nseed * r->ncore;
	claim_check(&pc->c, r->outs, n, &v);
	if (r->ncore > 1 && v.nseeds == n) {   /* the runs named as seed and core type */
		char spread[80] = "";
		if (claim_is_comparison(&pc->c))
			snprintf(spread, sizeof spread, ", spread %.4g%s", v.spread,
			         v.spread > pc->c.margin ? " exceeds the margin" : "");
		snprintf(v.detail, sizeof v.detail,
		         "worst gap %.4g over %zu seeds x %zu BLAS core types (seed %zu under %s), margin %.4g%s", v.worst,
		         r->nseed, r->ncore, v.worst_at % r->nseed + 1, core_name(r, v.worst_at / r->nseed), pc->c.margin,
		         spread);
	}
	if (r->ranges)
		add_range(v.detail, sizeof v.detail, pc, r);
	return lesson_check_add(rep, LC_CLAIM, pc->line, v.ok, what, "%s", v.detail) != NULL;
}

/* --mutate: the item judge just added for pc, when it holds and pc reads
 * output, becomes LC_VACUOUS if no measured value could make pc fail on
 * the block's first output; otherwise it says where pc flips. */
static void mutate_item(const parsed_claim *pc, const block_runs *r, lesson_check_report *rep)
{
	lesson_check_item *it = rep->n ? &rep->items[rep->n - 1] : NULL;
	claim_mutation m;
	if (!it || !it->ok || it->line != pc->line || it->kind != LC_CLAIM || pc->c.cite ||
	    claim_mutate(&pc->c, r->outs[0], &m) != MP_OK || !m.nleaves)
		return;
	if (m.vacuous) {
		it->kind = LC_VACUOUS;
		it->ok = false;
		rep->failed++;
		snprintf(it->detail, sizeof it->detail, "%s", m.detail);
		return;
	}
	size_t k = strlen(it->detail);
	snprintf(it->detail + k, sizeof it->detail - k, "; %s", m.detail);
}

/* Whether some command line of block b goes through sgemm. */
static bool block_uses_blas(const lesson_block *b)
{
	bool blas = false;
	for (const char *p = b->text; *p && !blas;) {
		size_t len = strcspn(p, "\n");
		char *l = strndup(p, len), **argv;
		size_t argc;
		char err[8];
		if (l && lesson_command_argv(l, &argv, &argc, err, sizeof err) == MP_OK) {
			blas = lesson_command_uses_blas(argv, argc);
			free_argv(argv, argc);
		}
		free(l);
		p += len;
		if (*p)
			p++;
	}
	return blas;
}

/* Whether the first command of block b takes a seed (else it gives the
 * same output every time and runs once). */
static bool block_seeded(const lesson_block *b)
{
	char **argv, **sv;
	size_t argc, svc;
	char err[8];
	bool seeded = false;
	char *l = strndup(b->text, strcspn(b->text, "\n"));
	if (l && lesson_command_argv(l, &argv, &argc, err, sizeof err) == MP_OK) {
		if ((seeded = lesson_command_seeded(argv, argc, 1, &sv, &svc)))
			free_argv(sv, svc);
		free_argv(argv, argc);
	}
	free(l);
	return seeded;
}

static mp_status check_block(const lesson_doc *doc, size_t i, const lesson_check_opts *o, lesson_runner run,
                             void *ctx, lesson_check_report *rep)
{
	const lesson_block *b = &doc->blocks[i];
	const lesson_block *cb = i + 1 < doc->nblocks && lesson_is_code(&doc->blocks[i + 1], "claims") ? &doc->blocks[i + 1] : NULL;
	parsed_claim *pc;
	size_t npc;
	mp_status st = parse_claims(cb, rep, &pc, &npc);
	bool per_seed = false;
	for (size_t k = 0; k < npc; k++)
		per_seed |= pc[k].ok && claim_per_seed(&pc[k].c);
	block_runs r = { .nseed = per_seed && o->seeds > 1 && block_seeded(b) ? o->seeds : 1, .ncore = 1,
		         .ranges = o->ranges };
	if (o->ncores > 0 && block_uses_blas(b)) {
		r.ncore = o->ncores;
		r.cores = o->blas_cores;
	}
	size_t total = r.nseed * r.ncore;
	char **outs = st == MP_OK ? calloc(total, sizeof *outs) : NULL;
	if (st == MP_OK && !outs)
		st = MP_ENOMEM;
	bool ran = st == MP_OK;
	for (size_t c = 0; ran && c < r.ncore; c++)
		for (size_t k = 0; ran && k < r.nseed; k++)
			ran = run_block(b, k, r.cores ? r.cores[c] : NULL, run, ctx, rep, &outs[c * r.nseed + k], &st);
	r.outs = (const char *const *)outs;
	size_t first, last;
	section_of(doc, i, &first, &last);
	for (size_t k = 0; st == MP_OK && k < npc; k++)
		if (pc[k].ok && !judge(doc, first, last, &pc[k], ran ? &r : NULL, rep))
			st = MP_ENOMEM;
		else if (pc[k].ok && ran && o->mutate)
			mutate_item(&pc[k], &r, rep);
	for (size_t k = 0; outs && k < total; k++)
		free(outs[k]);
	free(outs);
	for (size_t k = 0; k < npc; k++)
		claim_free(&pc[k].c);
	free(pc);
	return st;
}

/* A claims block that follows no command may only cite sources; their
 * quotes must be in the section like any other. */
static mp_status check_loose_claims(const lesson_doc *doc, size_t i, lesson_check_report *rep)
{
	parsed_claim *pc;
	size_t n, first, last;
	mp_status st = parse_claims(&doc->blocks[i], rep, &pc, &n);
	section_of(doc, i, &first, &last);
	for (size_t k = 0; k < n; k++) {
		if (st == MP_OK && pc[k].ok && !pc[k].c.cite &&
		    !lesson_check_add(rep, LC_MALFORMED, pc[k].line, false, "claims",
		              "a claim must sit in a claims block right after its mixprec block (only 'cite' lines may stand alone)"))
			st = MP_ENOMEM;
		if (st == MP_OK && pc[k].ok && pc[k].c.cite && !judge(doc, first, last, &pc[k], NULL, rep))
			st = MP_ENOMEM;
		claim_free(&pc[k].c);
	}
	free(pc);
	return st;
}

mp_status lesson_check(const lesson_doc *doc, const lesson_check_opts *o, lesson_runner run, void *ctx,
                       lesson_check_report *rep)
{
	memset(rep, 0, sizeof *rep);
	mp_status st = MP_OK;
	for (size_t i = 0; st == MP_OK && i < doc->nblocks; i++) {
		const lesson_block *b = &doc->blocks[i];
		if (lesson_is_code(b, "mixprec"))
			st = check_block(doc, i, o, run, ctx, rep);
		else if (lesson_is_code(b, "claims") && !(i > 0 && lesson_is_code(&doc->blocks[i - 1], "mixprec")))
			st = check_loose_claims(doc, i, rep);
	}
	for (size_t i = 0, start = 0; st == MP_OK && i <= doc->nblocks; i++)
		if (i == doc->nblocks || doc->blocks[i].kind == LB_HEADING) {
			if (i > start)
				st = lesson_bind_section(doc, start, i, rep);
			start = i + 1;
		}
	return st;
}
