/* Internal to train/layers*.c and the CPU backend: the fp32 row kernels of
 * layers_body.h, one instance per SIMD path, and the path the CPU takes.
 * Every instance gives the same bits (the order is defined in
 * layers_body.h); the path changes speed only. Each kernel has the
 * contract of the layers.c kernel it stands in for; N counts rows or
 * elements as there, T is the causal block's side. */
#ifndef MIXPREC_TRAIN_LAYERS_SIMD_H
#define MIXPREC_TRAIN_LAYERS_SIMD_H

#include <stdbool.h>
#include <stddef.h>

#define GELU_SCALE 0.7978845608028654f   /* sqrt(2/pi) */
#define GELU_CUBE 0.044715f

typedef enum {
	LAYERS_PORTABLE,   /* plain C: the compiler's SSE2 or NEON lowering of the vectors */
	LAYERS_AVX2,
	LAYERS_AVX512,     /* AVX-512 F */
	LAYERS_NPATHS
} layers_path;

typedef struct {
	const char *name;
	float (*softmax_row)(float *out, const float *in, size_t n, float *max_out);
	void (*softmax_backward_causal)(float *dpre, const float *datt, const float *att, size_t T);
	void (*gelu_forward)(float *out, const float *inp, size_t N);
	void (*gelu_backward)(float *dinp, const float *inp, const float *dout, size_t N);
	void (*layernorm_forward)(float *out, float *mean, float *rstd, const float *inp, const float *weight,
	                          const float *bias, size_t N, size_t C);
	void (*layernorm_backward)(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
	                           const float *weight, const float *mean, const float *rstd, size_t N, size_t C);
} layers_kernels;

/* The best path this CPU runs, capped by MIXPREC_SIMD (portable, avx2) as
 * for the bulk kernels; detected once for every thread. */
layers_path layers_path_best(void);

/* Whether this CPU can run path p. */
bool layers_path_available(layers_path p);

/* The kernels of path p (p available), of layers_path_best() for
 * LAYERS_NPATHS. */
const layers_kernels *layers_kernels_of(layers_path p);

#endif
