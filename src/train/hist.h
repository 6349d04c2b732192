/* Magnitude histograms of float arrays (gradients, activations) in buckets
 * of powers of two, with the shares that a format would flush, keep as
 * subnormals or overflow after multiplying by a scale: what gradhist shows,
 * computed here so that every front end draws the same numbers. */
#ifndef MIXPREC_TRAIN_HIST_H
#define MIXPREC_TRAIN_HIST_H

#include <stddef.h>

#include "fmt/format.h"

enum { MAG_HIST_KMIN = -160, MAG_HIST_KMAX = 40 };

typedef struct {
	/* count[k - MAG_HIST_KMIN]: nonzero |x| / unscale in [2^k, 2^(k+1));
	 * values outside the range land in the end buckets */
	size_t count[MAG_HIST_KMAX - MAG_HIST_KMIN + 1];
	size_t nonzero, zero;
	int lo, hi;                  /* the lowest and highest bucket used (lo > hi: none) */
	double scale;                /* the scale the shares below assume */
	size_t flushed, subnormal, overflow;   /* of the nonzero values times scale, in fmt */
	const fmt_info *fmt;
} mag_hist;

/* An empty histogram whose shares are for values times scale in fmt. */
void mag_hist_init(mag_hist *h, const fmt_info *fmt, double scale);
/* Adds |x[i]| / unscale for i < n (unscale: a loss scale the values carry). */
void mag_hist_add(mag_hist *h, const float *x, size_t n, double unscale);
/* The same for binary64 values. */
void mag_hist_add_double(mag_hist *h, const double *x, size_t n, double unscale);

typedef enum { MAG_FLUSHED, MAG_SUBNORMAL, MAG_NORMAL, MAG_OVERFLOW } mag_region;
/* Where bucket k lies in h->fmt after scaling: flushed when all of it is at
 * or below half the smallest subnormal (values above that round up to it),
 * subnormal when it starts below the smallest normal, overflow when it
 * starts where round-to-nearest overflows (max + half its spacing). */
mag_region mag_hist_region(const mag_hist *h, int k);
const char *mag_region_name(mag_region r);

#endif
