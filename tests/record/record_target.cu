/* record_target.cu - an ordinary CUDA program for test_gpu_record: nothing in it knows
 * KernelScope except the optional naming call. It reads x (H x W float32) and idx (H x W
 * int32, values in [0, H*W)) from the two files it is given, runs
 *   gather2d  (2-D grid of 16 x 4 blocks): y[r][c] = x[idx[r][c]] * 2 + 1
 *   hist      (grid-stride, twice): bins[idx[i] % NB] += 1 by atomicAdd
 * writes y and bins to OUT.bin (y then bins) and exits with --fail N's N (default 0).
 * Under kscope record it names x, idx and bins through kscope_record_name (y stays an
 * unnamed allocation). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H 37
#define W 53
#define NB 13

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "record_target: %s: %s\n", #call, cudaGetErrorString(e_)); \
            exit(2);                                                                   \
        }                                                                              \
    } while (0)

__global__ void gather2d(const float *x, const int *idx, float *y, int h, int w)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < h && c < w) {
        const int k = idx[r * w + c];
        y[r * w + c] = x[k] * 2.0f + 1.0f;
    }
}

__global__ void hist(const int *idx, int *bins, int n, int nb)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&bins[idx[i] % nb], 1);
}

typedef int (*name_fn)(const void *, uint64_t, const char *, const char *, int, const int64_t *);

static void name(const void *p, uint64_t bytes, const char *label, const char *dtype, int ndim, const int64_t *shape)
{
    const char *lib = getenv("KS_RECORD_LIB");
    void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
    name_fn f = h ? (name_fn)dlsym(h, "kscope_record_name") : NULL;
    if (f && f(p, bytes, label, dtype, ndim, shape) != 0) fprintf(stderr, "record_target: naming %s failed\n", label);
}

static void read_file(const char *path, void *dst, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f || fread(dst, 1, n, f) != n) {
        fprintf(stderr, "record_target: cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: record_target X.bin IDX.bin OUT.bin [--fail N]\n");
        return 2;
    }
    const int fail = argc > 5 && !strcmp(argv[4], "--fail") ? atoi(argv[5]) : 0;
    static float x[H * W], y[H * W];
    static int idx[H * W], bins[NB];
    read_file(argv[1], x, sizeof x);
    read_file(argv[2], idx, sizeof idx);
    float *dx, *dy;
    int *didx, *dbins;
    CHECK(cudaMalloc(&dx, sizeof x));
    CHECK(cudaMalloc(&didx, sizeof idx));
    CHECK(cudaMalloc(&dy, sizeof y));
    CHECK(cudaMalloc(&dbins, sizeof bins));
    const int64_t shape[2] = {H, W}, nbins = NB;
    name(dx, sizeof x, "x", "f32", 2, shape);
    name(didx, sizeof idx, "idx", "int32", 2, shape);
    name(dbins, sizeof bins, "bins", "i32", 1, &nbins);
    CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(didx, idx, sizeof idx, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dbins, 0, sizeof bins));
    gather2d<<<dim3((W + 15) / 16, (H + 3) / 4), dim3(16, 4)>>>(dx, didx, dy, H, W);
    CHECK(cudaGetLastError());
    hist<<<3, 64>>>(didx, dbins, H * W, NB);
    CHECK(cudaGetLastError());
    hist<<<2, 96>>>(didx, dbins, 301, NB);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(bins, dbins, sizeof bins, cudaMemcpyDeviceToHost));
    FILE *f = fopen(argv[3], "wb");
    if (!f || fwrite(y, sizeof y, 1, f) != 1 || fwrite(bins, sizeof bins, 1, f) != 1 || fclose(f)) {
        fprintf(stderr, "record_target: cannot write %s\n", argv[3]);
        return 2;
    }
    printf("record_target: done\n");
    return fail;
}
