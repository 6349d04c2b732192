/* The block order of a matrix, for block-scaled casts (train/blockcast.c):
 * each block of br rows by bc columns of a row-major matrix laid out as one
 * contiguous run, and back. Pure data movement: every bit, NaN payloads
 * included, moves as a scalar copy would move it, on every SIMD path.
 * Depends on train/layers_simd.h (the path) only; never prints. */
#ifndef MIXPREC_TRAIN_BLOCKORDER_H
#define MIXPREC_TRAIN_BLOCKORDER_H

#include <stdbool.h>
#include <stddef.h>

/* One strip of h <= br rows (cols wide) against its block-ordered copy blk
 * (column c at blk + c * br): forward from src, back into xs; forward pads
 * rows h..br with zeros. */
void block_reorder_strip(const float *src, float *xs, size_t h, size_t cols, size_t br, float *blk, bool back);

/* The block-ordered copy of src (rows, cols): block (tr, tc) of the (nr,
 * nc) grid at buf[(tr * nc + tc) * br * bc], its rows one after another;
 * past the edge, zeros. back: the other way, into x, the padding dropped. */
void block_reorder(const float *src, float *x, size_t rows, size_t cols, size_t br, size_t bc, float *buf, bool back);

#endif
