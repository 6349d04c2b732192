/* The rules for an MX block's shared e8m0 scale (quant/quant.h) and the
 * Hadamard transform's signs, apart so
 * that a header C++ (CUDA) also reads can name one without quant.h's MPFR. */
#ifndef MIXPREC_QUANT_QUANT_RULE_H
#define MIXPREC_QUANT_QUANT_RULE_H

typedef enum {
	QUANT_RULE_OCP,      /* floor(log2 amax) - emax_elem (torchao's FLOOR) */
	QUANT_RULE_CEIL,     /* ceil(log2(amax / max_elem)) (Transformer Engine) */
	QUANT_RULE_EVEN,     /* torchao's EVEN: amax rounded to the element's precision, then floor */
	QUANT_RULE_RCEIL,    /* torchao's RCEIL: ceil(log2(fp32(amax / max_elem))) */
	QUANT_RULE_TCEIL,    /* torchao's CEIL: ceil(log2 amax) - emax_elem */
	QUANT_RULE_COUNT
} quant_rule;

/* The sign vector of the 16-point random Hadamard transform that the
 * trainer (train/blockcast.h) and quantize --rht (quant_rht16) use: one for
 * every tensor, as Transformer Engine's recipe keeps one (nvfp4.rst, "Sign
 * matrix"). */
enum { QUANT_RHT_SIGNS = 0xa53c };

#endif
