/* Training text for the character-level model: loading, the train and
 * held-out split, and batches drawn deterministically from (seed, step). */
#ifndef MIXPREC_TRAIN_DATA_H
#define MIXPREC_TRAIN_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/status.h"

typedef struct {
	unsigned char *tokens;   /* the text, one token (byte below 128) per character */
	size_t n;
	size_t n_train;          /* tokens [0, n_train) train, the rest is held out */
	size_t replaced;         /* bytes >= 128 that became '?' */
} corpus;

/* The largest training text read (checked while reading: a regular file by
 * its size before, a device or pipe as it is read). */
#define CORPUS_MAX_BYTES ((size_t)64 << 20)

/* Loads a text file; bytes >= 128 (non-ASCII) become '?'. The last tenth is
 * held out. MP_EIO (err names the file and the reason) when it cannot be
 * read; MP_EINVAL when it is too short for a context of t + 1 characters in
 * both splits, or larger than CORPUS_MAX_BYTES. */
mp_status corpus_load(corpus *c, const char *path, size_t t, char *err, size_t errlen);
/* The same from memory (copied). */
mp_status corpus_from_text(corpus *c, const char *text, size_t n, size_t t, char *err, size_t errlen);
void corpus_free(corpus *c);

/* B windows of t + 1 tokens: inputs (B,t) and targets (B,t) shifted by one.
 * Window b of step `step` starts at a position drawn from (seed, step, b), in
 * the train or the held-out split. */
void corpus_batch(const corpus *c, bool heldout, uint64_t seed, uint64_t step, size_t B, size_t t,
                  int *inputs, int *targets);

/* Cross-entropy in nats of predicting the held-out text from the train
 * split's character frequencies (add-one smoothed over 128 symbols): the loss
 * of a model that learned nothing but frequencies. */
double corpus_unigram_entropy(const corpus *c);

/* The default corpus: $MIXPREC_DATADIR/corpus.txt, else the installed data
 * directory, else the source tree's data/ (for running from a build).
 * Writes the path into path (n bytes; 4096 hold any) and returns it. */
const char *corpus_default_path(char *path, size_t n);

#endif
