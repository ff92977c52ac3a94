/* roi_align_cl_cuda.cu - the channels-last RoIAlign forward on the GPU (roi_align_cl_body.h;
 * docs/roi-align.md): its kernels, the device scratch that holds the channels-last copy, the
 * RoIs in image order, and the launcher roi_align_cuda.cu calls. */
#include <pthread.h>

#include "../core/ks_cuda.h"
#include "roi_align_args.h"

/* the tile and profiles: within the 48 KiB a block gets without opting in */
#ifndef KS_ROI_CL_TILE_BYTES
#define KS_ROI_CL_TILE_BYTES 49152
#endif

/* the channels-last avg forward (roi_align_cl_body.h): the transpose into the scratch, then
 * a block per RoI, channel group and chunk of bins; the default where bins merge (adaptive
 * avg; --forward slot: the slot kernel, cl: also on fixed grids) */
#define KS_BODY "../roi_align/roi_align_cl_body.h"
#include "../core/ks_variants.h"
KS_CUDA_PLAIN_KERNEL(ks_roi_align_cl_t, plain32, ks_roi_align_args, __launch_bounds__(1024))
KS_CUDA_PLAIN_KERNEL(ks_roi_align_cl_t, plain, ks_roi_align_args, __launch_bounds__(1024))
/* blocks of at most KS_ROI_CL_MAX_THREADS (the launcher runs the slot kernel for larger
 * ones), so that the registers are not capped at 64 */
#ifndef KS_ROI_CL_MINB /* N blocks of KS_ROI_CL_MAX_THREADS an SM: at most 85 registers (-D to compare) */
#define KS_ROI_CL_MINB 3
#endif
#define KS_ROI_CL_BOUNDS __launch_bounds__(KS_ROI_CL_MAX_THREADS, KS_ROI_CL_MINB)
#define KS_ROI_CL_KERNELS(v)                                                               \
    KS_CUDA_PLAIN_KERNEL(ks_roi_align_cl##v, plain32, ks_roi_align_args, KS_ROI_CL_BOUNDS) \
    KS_CUDA_PLAIN_KERNEL(ks_roi_align_cl##v, plain, ks_roi_align_args, KS_ROI_CL_BOUNDS)
KS_ROI_CL_KERNELS(4)
KS_ROI_CL_KERNELS(2)
KS_ROI_CL_KERNELS(1)
typedef void (*ks_roi_cl_kernel)(ks_roi_align_args);
/* [small][V = 4, 2, 1] */
static const ks_roi_cl_kernel cl_kernels[2][3] = {
    {ks_roi_align_cl4_k_plain, ks_roi_align_cl2_k_plain, ks_roi_align_cl1_k_plain},
    {ks_roi_align_cl4_k_plain32, ks_roi_align_cl2_k_plain32, ks_roi_align_cl1_k_plain32}};

/* The channels-last copy of the input lives in one buffer per device, grown as needed and
 * freed at exit (cudaMalloc and cudaFree cost tens of microseconds, and cudaFree waits for
 * the device). A mutex is held from taking the buffer until the launches that use it are
 * queued and an event recorded after them; the next use's stream waits for that event, so
 * host threads and streams never share the buffer at once. */
#define KS_ROI_CL_DEVICES 64
static struct {
    float *p;
    size_t bytes;
    cudaEvent_t done;
} cl_scratch[KS_ROI_CL_DEVICES];
static pthread_mutex_t cl_lock = PTHREAD_MUTEX_INITIALIZER;

static void cl_scratch_free_all(void)
{
    int cur = 0;
    if (cudaGetDevice(&cur) != cudaSuccess) return;
    for (int d = 0; d < KS_ROI_CL_DEVICES; ++d) {
        if (!cl_scratch[d].p) continue;
        if (cudaSetDevice(d) == cudaSuccess) {
            cudaFree(cl_scratch[d].p);
            cudaEventDestroy(cl_scratch[d].done);
        }
        cl_scratch[d].p = NULL, cl_scratch[d].done = NULL, cl_scratch[d].bytes = 0;
    }
    cudaSetDevice(cur);
}

/* Locks cl_lock and sets *p to a scratch of `bytes` on the current device once stream s
 * waited for its last use; the caller queues its launches and calls cl_scratch_done. On
 * failure, and with *p NULL (and KS_OK: the device has no room, or a device past
 * KS_ROI_CL_DEVICES, so the caller runs the slot kernel), the lock is released here. */
static int cl_scratch_get(size_t bytes, cudaStream_t s, float **p, int *dev)
{
    *p = NULL;
    int rc = ks_cuda_ok(cudaGetDevice(dev), "cudaGetDevice");
    if (rc || *dev < 0 || *dev >= KS_ROI_CL_DEVICES) return rc;
    pthread_mutex_lock(&cl_lock);
    auto &c = cl_scratch[*dev];
    if (c.p && c.bytes < bytes) { /* grow: cudaFree waits for the device, so for its last use too */
        rc = ks_cuda_ok(cudaFree(c.p), "cudaFree");
        c.p = NULL, c.bytes = 0;
    }
    if (!rc && !c.p) {
        static int hooked;
        const cudaError_t e = cudaMalloc((void **)&c.p, bytes);
        if (e == cudaErrorMemoryAllocation) { /* no room: not an error, the slot kernel runs */
            (void)cudaGetLastError();
            c.p = NULL;
            pthread_mutex_unlock(&cl_lock);
            return KS_OK;
        }
        rc = ks_cuda_ok(e, "cudaMalloc");
        if (!rc) c.bytes = bytes;
        if (!rc && !c.done)
            rc = ks_cuda_ok(cudaEventCreateWithFlags(&c.done, cudaEventDisableTiming), "cudaEventCreate");
        if (!rc && !hooked) hooked = !atexit(cl_scratch_free_all);
    }
    if (!rc) rc = ks_cuda_ok(cudaStreamWaitEvent(s, c.done, 0), "cudaStreamWaitEvent");
    if (rc) {
        pthread_mutex_unlock(&cl_lock);
        return rc;
    }
    *p = c.p;
    return KS_OK;
}

/* After the launches that use device dev's scratch: the event the next use waits for; unlocks. */
static int cl_scratch_done(int dev, cudaStream_t s)
{
    const int rc = ks_cuda_ok(cudaEventRecord(cl_scratch[dev].done, s), "cudaEventRecord");
    pthread_mutex_unlock(&cl_lock);
    return rc;
}

/* The RoIs in image order (rois[k * 5] as ks_roi_box_of reads it; one out of range counts
 * as image 0), for the channels-last forward's work items: one block, N counters in shared
 * memory, an atomic slot each (the order within an image does not change the outputs). */
#define KS_ROI_CL_ORDER_MAXN 1024
#ifndef KS_ROI_CL_ORDER /* -DKS_ROI_CL_ORDER=0: the RoIs in their own order, to compare */
#define KS_ROI_CL_ORDER 1
#endif
__global__ void __launch_bounds__(1024) ks_roi_cl_order_k(const float *rois, int K, int N, int *order)
{
    __shared__ int start[KS_ROI_CL_ORDER_MAXN];
    for (int i = threadIdx.x; i < N; i += blockDim.x) start[i] = 0;
    __syncthreads();
    for (int k = threadIdx.x; k < K; k += blockDim.x) {
        const float b = rois[(size_t)k * 5];
        atomicAdd(&start[b > -1.0f && b < (float)N ? (int)b : 0], 1);
    }
    __syncthreads();
    if (threadIdx.x == 0)
        for (int i = 0, sum = 0; i < N; ++i) {
            const int c = start[i];
            start[i] = sum, sum += c;
        }
    __syncthreads();
    for (int k = threadIdx.x; k < K; k += blockDim.x) {
        const float b = rois[(size_t)k * 5];
        order[atomicAdd(&start[b > -1.0f && b < (float)N ? (int)b : 0], 1)] = k;
    }
}

/* The channels-last forward of a (avg, no sink): *launched = 0 for blocks of more than
 * KS_ROI_CL_MAX_THREADS, more than KS_ROI_CL_PROF_MAX bytes of profiles, a stream being
 * captured into a graph, or when the device has no room for the copy (the slot kernel
 * runs instead). */
extern "C" int ks_roi_cl_launch(const ks_roi_align_args *args, const ks_launch *l, int small, void *stream,
                                int *launched)
{
    cudaStream_t s = (cudaStream_t)stream;
    ks_roi_align_args a = *args;
    int threads;
    int64_t blocks;
    size_t tile;
    *launched = 0;
    int rc = ks_roi_cl_plan(&a, l, KS_ROI_CL_TILE_BYTES, KS_ROI_CL_MAX_THREADS, &threads, &blocks, &tile);
    if (rc || blocks == 0) return rc;
    /* not while a CUDA graph is captured: no cudaMalloc there, and the event is outside it */
    cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
    rc = ks_cuda_ok(cudaStreamIsCapturing(s, &cap), "cudaStreamIsCapturing");
    if (rc || cap != cudaStreamCaptureStatusNone) return rc;
    /* the scratch: the copy, then the RoIs' order (n floats, then K ints) */
    const size_t n = (size_t)(a.batch * a.channels * a.height * a.width);
    int dev;
    rc = cl_scratch_get((n + (size_t)a.num_rois) * sizeof(float) + 4, s, &a.input_cl, &dev);
    if (rc || !a.input_cl) return rc;
    *launched = 1;
    if (KS_ROI_CL_ORDER && a.batch <= KS_ROI_CL_ORDER_MAXN && a.num_rois < ((int64_t)1 << 31)) {
        int32_t *order = (int32_t *)(a.input_cl + n);
        ks_roi_cl_order_k<<<1, 1024, 0, s>>>(a.rois, (int)a.num_rois, (int)a.batch, order);
        rc = ks_cuda_check_launch("roi_align_forward (RoIs in image order)");
        a.cl_order = order;
    }
    const int64_t tb = ks_roi_align_cl_t_items(&a);
    const unsigned tblocks = (unsigned)(tb < KS_ROI_CL_T_BLOCKS ? tb : KS_ROI_CL_T_BLOCKS);
    if (!rc && tblocks > 0) {
        if (small) ks_roi_align_cl_t_k_plain32<<<tblocks, 256, 0, s>>>(a);
        else ks_roi_align_cl_t_k_plain<<<tblocks, 256, 0, s>>>(a);
        rc = ks_cuda_check_launch("roi_align_forward (channels-last copy)");
    }
    if (!rc) {
        cl_kernels[small ? 1 : 0][a.cl_vec == 4 ? 0 : a.cl_vec == 2 ? 1 : 2]<<<(unsigned)blocks, threads, tile, s>>>(a);
        rc = ks_cuda_check_launch("roi_align_forward (channels-last)");
    }
    const int erc = cl_scratch_done(dev, s);
    if (!rc) rc = erc;
    if (!rc) ks_roi_align_cl_launched();
    return rc;
}
