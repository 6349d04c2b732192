/* One instance of layers_body.h per SIMD path, and the choice between
 * them. The instances differ only in the target the compiler generates
 * code for and its vector width (4 lanes portable: SSE2 on x86-64, NEON on
 * ARM, scalar elsewhere; 8 AVX2; 16 AVX-512); see layers_body.h for the
 * order of operations they share. */
#include "train/layers_simd.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* a 32- or 64-byte vector type is passed in registers only where AVX or
 * AVX-512 is enabled; the helpers are always inlined, so no call crosses
 * that ABI */
#pragma GCC diagnostic ignored "-Wpsabi"

#define LB_NAME(x) portable_##x
#define LB_W 4
#define LB_TARGET
#include "train/layers_body.h"
#undef LB_NAME
#undef LB_W
#undef LB_TARGET

#if defined(__x86_64__)
#define LB_NAME(x) avx2_##x
#define LB_W 8
#define LB_TARGET __attribute__((target("avx2")))
#include "train/layers_body.h"
#undef LB_NAME
#undef LB_W
#undef LB_TARGET

#define LB_NAME(x) avx512_##x
#define LB_W 16
#define LB_TARGET __attribute__((target("avx512f")))
#include "train/layers_body.h"
#undef LB_NAME
#undef LB_W
#undef LB_TARGET
#endif

#define KERNELS(prefix, label)                                                                          \
	{ .name = label, .softmax_row = prefix##_softmax_row,                                          \
	  .softmax_backward_causal = prefix##_softmax_backward_causal, .gelu_forward = prefix##_gelu_forward, \
	  .gelu_backward = prefix##_gelu_backward, .layernorm_forward = prefix##_layernorm_forward,      \
	  .layernorm_backward = prefix##_layernorm_backward }

static const layers_kernels kernels[LAYERS_NPATHS] = {
	[LAYERS_PORTABLE] = KERNELS(portable, "portable"),
#if defined(__x86_64__)
	[LAYERS_AVX2] = KERNELS(avx2, "avx2"),
	[LAYERS_AVX512] = KERNELS(avx512, "avx512"),
#endif
};

static bool available[LAYERS_NPATHS];
static layers_path best;
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;

/* Once for every thread: the trainers' workers ask at the same time, and a
 * plain cached flag would be a data race. */
static void detect(void)
{
	available[LAYERS_PORTABLE] = true;
#if defined(__x86_64__)
	__builtin_cpu_init();
	available[LAYERS_AVX2] = __builtin_cpu_supports("avx2");
	available[LAYERS_AVX512] = __builtin_cpu_supports("avx512f");
#endif
	best = available[LAYERS_AVX512] ? LAYERS_AVX512 : available[LAYERS_AVX2] ? LAYERS_AVX2 : LAYERS_PORTABLE;
	const char *env = getenv("MIXPREC_SIMD");
	if (env && !strcmp(env, "portable"))
		best = LAYERS_PORTABLE;
	else if (env && !strcmp(env, "avx2") && best > LAYERS_AVX2)
		best = LAYERS_AVX2;
}

layers_path layers_path_best(void)
{
	pthread_once(&detect_once, detect);
	return best;
}

bool layers_path_available(layers_path p)
{
	pthread_once(&detect_once, detect);
	return p >= 0 && p < LAYERS_NPATHS && available[p];
}

const layers_kernels *layers_kernels_of(layers_path p)
{
	return &kernels[p == LAYERS_NPATHS ? layers_path_best() : p];
}
