#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "train/data.h"
#include "util/file.h"
#include "util/rng.h"

mp_status corpus_from_text(corpus *c, const char *text, size_t n, size_t t, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	size_t n_train = n - n / 10;
	if (n / 10 < t + 2 || n_train < t + 2) {
		snprintf(err, errlen, "the text has %zu characters; a context of %zu needs at least %zu", n, t,
		         10 * (t + 2));
		return MP_EINVAL;
	}
	c->tokens = malloc(n);
	if (!c->tokens)
		return MP_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)text[i];
		if (b >= 128) {
			b = '?';
			c->replaced++;
		}
		c->tokens[i] = b;
	}
	c->n = n;
	c->n_train = n_train;
	return MP_OK;
}

mp_status corpus_load(corpus *c, const char *path, size_t t, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	char *buf;
	size_t n;
	mp_status st = file_read_all(path, CORPUS_MAX_BYTES, &buf, &n, err, errlen);
	if (st != MP_OK)
		return st;
	char inner[200];
	st = corpus_from_text(c, buf, n, t, inner, sizeof inner);
	free(buf);
	if (st == MP_EINVAL)
		snprintf(err, errlen, "%s: %s", path, inner);
	return st;
}

void corpus_free(corpus *c)
{
	free(c->tokens);
	memset(c, 0, sizeof *c);
}

void corpus_batch(const corpus *c, bool heldout, uint64_t seed, uint64_t step, size_t B, size_t t,
                  int *inputs, int *targets)
{
	size_t lo = heldout ? c->n_train : 0, hi = heldout ? c->n : c->n_train;
	size_t span = hi - lo - t;   /* windows of t + 1 tokens that fit */
	for (size_t b = 0; b < B; b++) {
		uint64_t r = rng_mix64(seed ^ rng_mix64((step << 20) ^ (b << 1) ^ (heldout ? 1u : 0u)));
		size_t start = lo + (size_t)(r % span);
		for (size_t i = 0; i < t; i++) {
			inputs[b * t + i] = c->tokens[start + i];
			targets[b * t + i] = c->tokens[start + i + 1];
		}
	}
}

double corpus_unigram_entropy(const corpus *c)
{
	double count[128];
	for (int i = 0; i < 128; i++)
		count[i] = 1.0;
	for (size_t i = 0; i < c->n_train; i++)
		count[c->tokens[i]] += 1.0;
	double total = (double)c->n_train + 128.0, ce = 0;
	for (size_t i = c->n_train; i < c->n; i++)
		ce -= log(count[c->tokens[i]] / total);
	return ce / (double)(c->n - c->n_train);
}

const char *corpus_default_path(char *path, size_t n)
{
	return file_data_path(path, n, "MIXPREC_DATADIR", "corpus.txt", "corpus.txt", "data/corpus.txt");
}
