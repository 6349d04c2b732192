/* Growing malloc'd arrays. Each function takes the address of the array's
 * pointer (a T ** passed as void *, so any element type fits) and the size
 * of one element; on failure the array stays as it was, still owned by the
 * caller. */
#ifndef MIXPREC_UTIL_GROW_H
#define MIXPREC_UTIL_GROW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Resizes the array at *array_ptr to n elements of size bytes (n > 0). */
static inline bool grow_to(void *array_ptr, size_t n, size_t size)
{
	if (n > SIZE_MAX / size)
		return false;
	void *old;
	memcpy(&old, array_ptr, sizeof old);
	void *p = realloc(old, n * size);
	if (!p)
		return false;
	memcpy(array_ptr, &p, sizeof p);
	return true;
}

/* Room for one more element when n of *cap are in use: a full array
 * doubles (an empty one gets first elements) and *cap follows. */
static inline bool grow_one(void *array_ptr, size_t *cap, size_t n, size_t first, size_t size)
{
	if (n < *cap)
		return true;
	size_t want = *cap ? 2 * *cap : first;
	if (!grow_to(array_ptr, want, size))
		return false;
	*cap = want;
	return true;
}

#endif
