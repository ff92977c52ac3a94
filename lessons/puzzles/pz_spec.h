/* pz_spec.h - the puzzles: what each computes, its launch, its sizes and the access
 * pattern the grader holds it to (docs/puzzles.md). */
#ifndef PZ_SPEC_H
#define PZ_SPEC_H

#include <stdint.h>

/* An array's shape, rows x cols (1-D: rows 1); rows 0: the puzzle has no such array.
 * ndim: how it is shown (1: a vector of cols, 2: a matrix). */
typedef struct pz_shape {
    int64_t rows, cols;
    int ndim;
} pz_shape;

typedef struct pz_spec pz_spec;

/* The expected output from the inputs, in double where sums are long: want[out.rows *
 * out.cols] from a[a.rows * a.cols] and b (NULL when the puzzle has none). */
typedef void (*pz_reference)(const pz_spec *s, const float *a, const float *b, float *want);

struct pz_spec {
    const char *name;  /* the files NAME.c, the function NAME_kernel */
    const char *title; /* what it computes, one line */
    const char *teaches;
    int shared;        /* 1: needs shared memory and barriers (KS_SHARED, ks_syncthreads) */
    int threads;       /* per block */
    int64_t blocks;
    int size;          /* pz_args.size */
    pz_shape a, b, out;
    int max_reads;     /* global reads (of a, b and out) per thread, at most */
    pz_reference reference;
};

/* The puzzles in teaching order; n gets their count. */
const pz_spec *pz_specs(int *n);
/* The puzzle called name, or NULL. */
const pz_spec *pz_find(const char *name);

#endif
