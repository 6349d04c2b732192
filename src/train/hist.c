#include <math.h>
#include <string.h>

#include "train/hist.h"

/* Where round-to-nearest overflows: max plus half its spacing (fp16: 65504 +
 * 16 = 65520, which ties to the even 65536). */
static double overflow_edge(const fmt_info *f)
{
	double max = fmt_max(f);
	return max + ldexp(1.0, ilogb(max) - f->frac_bits - 1);
}

void mag_hist_init(mag_hist *h, const fmt_info *fmt, double scale)
{
	memset(h, 0, sizeof *h);
	h->lo = MAG_HIST_KMAX;
	h->hi = MAG_HIST_KMIN;
	h->fmt = fmt;
	h->scale = scale;
}

/* One value |x| / unscale into h. */
static void add_one(mag_hist *h, double a, double half_sub, double min_normal, double ov)
{
	if (a == 0) {
		h->zero++;
		return;
	}
	if (isnan(a))
		return;
	h->nonzero++;
	int k = isinf(a) ? MAG_HIST_KMAX : ilogb(a);
	k = k < MAG_HIST_KMIN ? MAG_HIST_KMIN : k > MAG_HIST_KMAX ? MAG_HIST_KMAX : k;
	h->count[k - MAG_HIST_KMIN]++;
	h->lo = k < h->lo ? k : h->lo;
	h->hi = k > h->hi ? k : h->hi;
	double as = a * h->scale;
	if (as <= half_sub)   /* half the smallest subnormal ties to 0 */
		h->flushed++;
	else if (as < min_normal)
		h->subnormal++;
	if (as >= ov)
		h->overflow++;
}

void mag_hist_add(mag_hist *h, const float *x, size_t n, double unscale)
{
	double half_sub = fmt_min_subnormal(h->fmt) / 2, min_normal = fmt_min_normal(h->fmt);
	double ov = overflow_edge(h->fmt);
	for (size_t i = 0; i < n; i++)
		add_one(h, fabs((double)x[i]) / unscale, half_sub, min_normal, ov);
}

void mag_hist_add_double(mag_hist *h, const double *x, size_t n, double unscale)
{
	double half_sub = fmt_min_subnormal(h->fmt) / 2, min_normal = fmt_min_normal(h->fmt);
	double ov = overflow_edge(h->fmt);
	for (size_t i = 0; i < n; i++)
		add_one(h, fabs(x[i]) / unscale, half_sub, min_normal, ov);
}

mag_region mag_hist_region(const mag_hist *h, int k)
{
	/* the bucket [2^k, 2^(k+1)) times the scale */
	double lo = ldexp(1.0, k) * h->scale, hi = ldexp(1.0, k + 1) * h->scale;
	if (hi <= fmt_min_subnormal(h->fmt) / 2)
		return MAG_FLUSHED;
	if (lo < fmt_min_normal(h->fmt))
		return MAG_SUBNORMAL;
	return lo >= overflow_edge(h->fmt) ? MAG_OVERFLOW : MAG_NORMAL;
}

const char *mag_region_name(mag_region r)
{
	static const char *const names[] = {
		[MAG_FLUSHED] = "flushed", [MAG_SUBNORMAL] = "subnormal", [MAG_NORMAL] = "normal",
		[MAG_OVERFLOW] = "overflow",
	};
	return names[r];
}
