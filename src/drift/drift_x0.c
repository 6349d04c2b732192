/* Parsing a starting value exactly: each variant starts from the typed value
 * rounded once into its own format, never through binary64 first. Kept out
 * of drift.c so that the CUDA-only build of drift needs no GMP. */
#include <math.h>
#include <stdio.h>

#include "drift/drift.h"
#include "fmt/decode.h"
#include "fmt/parse.h"
#include "fmt/round.h"

mp_status drift_parse_start(const char *text, double *x0, double starts[DRIFT_VARIANT_COUNT], char *err,
                            size_t errlen)
{
	static const fmt_id fmts[DRIFT_VARIANT_COUNT] = {
		[DRIFT_FP64] = FMT_FP32,      [DRIFT_FP32] = FMT_FP32,       [DRIFT_BF16_RNE] = FMT_BF16,
		[DRIFT_BF16_SR] = FMT_BF16,   [DRIFT_BF16_KAHAN] = FMT_BF16, [DRIFT_FP16_RNE] = FMT_FP16,
	};
	fmt_num x;
	fmt_num_init(&x);
	mp_status st = fmt_parse_number(&x, text, err, errlen);
	if (st == MP_OK && (x.kind != NUM_FINITE || !isfinite(fmt_num_to_double(&x)))) {
		snprintf(err, errlen, "'%s' is not a finite number", text);
		st = MP_EINVAL;
	}
	if (st == MP_OK) {
		*x0 = fmt_num_to_double(&x);   /* signed */
		fmt_round_ctl ctl = { .mode = FMT_RNE };
		for (int k = 0; k < DRIFT_VARIANT_COUNT; k++) {
			const fmt_info *f = fmt_get(fmts[k]);
			starts[k] = fmt_to_double(f, fmt_round_num(f, &ctl, &x, NULL));
		}
		starts[DRIFT_FP64] = *x0;
	}
	fmt_num_clear(&x);
	return st;
}
