/* pz_spec.h - the puzzles: what each computes, its launch, its sizes and the access
 * pattern the grader holds it to (docs/puzzles.md). */
#ifndef PZ_SPEC_H
#define PZ_SPEC_H

#include <stdint.h>

/* An array's shape, rows x cols (1-D: rows 1); rows 0: the puzzle has no such array.
 * ndim: how the kernel sees it (1: a vector of cols, 2: a rows x cols matrix, row-major). */
typedef struct pz_shape {
    int64_t rows, cols;
    int ndim;
} pz_shape;

typedef struct pz_spec pz_spec;

/* The expected output from the inputs, in double where sums are long: want[out.rows *
 * out.cols] from a[a.rows * a.cols] and b (NULL when the puzzle has none). */
typedef void (*pz_reference)(const pz_spec *s, const float *a, const float *b, float *want);

enum { PZ_MAX_INTS = 2 };

struct pz_spec {
    const char *name;  /* the files NAME.cu, the __global__ function NAME */
    const char *title; /* what it computes, one line */
    const char *teaches;
    int shared;                 /* 1: needs shared memory and barriers (__shared__, __syncthreads) */
    unsigned grid[2], block[2]; /* the launch NAME<<<dim3(grid), dim3(block)>>> (x, y) */
    int size;                   /* the size the references use (the first int parameter) */
    pz_shape a, b, out;
    /* the int parameters after the pointers (a, [b,] out), by name, and their values */
    const char *ints[PZ_MAX_INTS];
    int values[PZ_MAX_INTS];
    const char *signature; /* the stub's declaration, for messages */
    int max_reads;         /* global reads (of a, b and out) per thread, at most */
    pz_reference reference;
};

/* The puzzles in teaching order; n gets their count. */
const pz_spec *pz_specs(int *n);
/* The puzzle called name, or NULL. */
const pz_spec *pz_find(const char *name);

#endif
