/* record_patch.cu - the device side of `kscope record`: the Compute Sanitizer API calls
 * ks_rec_global before every global load, store and atomic of a patched kernel, and with
 * --shared-accesses ks_rec_shared before every shared one and ks_rec_barrier at every
 * block barrier (compiled with nvcc --fatbin --compile-as-tools-patch; loaded by
 * record_inject.c). Each call
 * that passes the launch's filter claims a slot (the next of its thread's run, record.h)
 * and writes one 32-byte ks_rec (two for a 16-byte access) with two 16-byte stores. */
#include <sanitizer_patching.h>

#include "record.h"

/* an atomic that only writes (a reduction): named in newer toolkits' headers only */
#define KS_SAN_ATOMIC_WRITE_ONLY (1u << 8)

static __device__ __forceinline__ uint64_t load_bytes(const void *p, uint32_t size)
{
    /* the value a read is about to get (the callback runs before the instruction) */
    switch (size) {
    case 1: return *(const volatile uint8_t *)p;
    case 2: return *(const volatile uint16_t *)p;
    case 4: return *(const volatile uint32_t *)p;
    default: return *(const volatile uint64_t *)p;
    }
}

/* The slot of the calling thread's next record, and its run's number (record.h, runs), or
 * -1 when the buffer is full (the record is counted as dropped). */
static __device__ __forceinline__ long long claim(ks_rec_state *s, uint64_t global, uint32_t *run)
{
    if (!s->runs) {
        const unsigned long long slot = atomicAdd(&s->counters[0], 1ull);
        *run = 0;
        if (slot < s->capacity) return (long long)slot;
    } else {
        /* the thread's state: runs << 32 | (its next free slot + 1); only it touches it */
        unsigned long long *st = s->runs + (global - s->runs_lo);
        const uint64_t v = *st;
        unsigned long long base = 0;
        if (ks_rec_run_full(v)) { /* no run yet, or its run is full */
            base = atomicAdd(&s->counters[0], (unsigned long long)KS_REC_RUN);
            if (base + KS_REC_RUN > s->capacity) { /* left as it was: its last run stays full */
                atomicAdd(&s->counters[1], 1ull);
                return -1;
            }
        }
        uint64_t slot;
        *st = ks_rec_run_step(v, base, &slot, run);
        return (long long)slot;
    }
    atomicAdd(&s->counters[1], 1ull);
    return -1;
}

static __device__ __forceinline__ void put(ks_rec_state *s, uint64_t global, uint64_t addr, uint32_t pc, uint32_t block,
                                           uint32_t thread, uint32_t size, uint32_t flags, uint64_t value)
{
    uint32_t run;
    const long long slot = claim(s, global, &run);
    if (slot < 0) return;
    uint4 *dst = (uint4 *)(s->recs + slot);
    dst[0] = make_uint4((uint32_t)addr, (uint32_t)(addr >> 32), pc, block);
    dst[1] = make_uint4(thread | size << 16 | flags << 24, run, (uint32_t)value, (uint32_t)(value >> 32));
}

/* 1 when the calling thread passes the launch's filter: *block and *thread its linear ids
 * in the grid and the block, *global its linear id in the launch */
static __device__ __forceinline__ int kept(const ks_rec_state *s, uint32_t *block, uint32_t *thread, uint64_t *global)
{
    if (!s || !s->on) return 0;
    *block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    if (*block < s->block_lo || *block >= s->block_hi) return 0;
    *thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    *global = (uint64_t)*block * (blockDim.x * blockDim.y * blockDim.z) + *thread;
    return *global >= s->thread_lo && *global < s->thread_hi;
}

/* global (shared 0) or shared memory: the access as one record, or two for 16 bytes */
static __device__ __forceinline__ void access(ks_rec_state *s, uint64_t pc, void *ptr, uint32_t size, uint32_t flags,
                                              const void *data, uint32_t block, uint32_t thread, uint64_t global,
                                              int shared)
{
    const int write = (flags & SANITIZER_MEMORY_DEVICE_FLAG_WRITE) != 0;
    const int read = (flags & SANITIZER_MEMORY_DEVICE_FLAG_READ) != 0;
    /* an atomic reads and writes (or only writes, ATOMIC_WRITE_ONLY) and gives no data */
    const int atomic = (read && write) || (flags & KS_SAN_ATOMIC_WRITE_ONLY) || (write && !data);
    const uint32_t kind = (atomic  ? (KS_REC_WRITE | KS_REC_ATOMIC)
                           : write ? KS_REC_WRITE
                                   : KS_REC_READ) |
                          (shared ? KS_REC_SHARED : 0);
    const uint32_t off = (uint32_t)(pc - s->fn_pc);
    /* a shared access's ptr is its offset in the block's shared window: the address space
     * converts it for the load, and the record sets it above every global address */
    const void *mem = shared ? __cvta_shared_to_generic((size_t)ptr) : ptr;
    const uint8_t *src = (const uint8_t *)(write && !atomic ? data : mem);
    const uint64_t addr = shared ? KS_REC_SHARED_BASE + (uint64_t)ptr : (uint64_t)ptr;
    if (size <= 8) {
        put(s, global, addr, off, block, thread, size, kind, load_bytes(src, size));
    } else { /* 16 bytes: two halves */
        put(s, global, addr, off, block, thread, 8, kind, load_bytes(src, 8));
        put(s, global, addr + 8, off, block, thread, 8, kind | KS_REC_HALF, load_bytes(src + 8, 8));
    }
}

extern "C" __device__ __noinline__ SanitizerPatchResult ks_rec_global(void *userdata, uint64_t pc, void *ptr,
                                                                      uint32_t size, uint32_t flags, const void *data)
{
    ks_rec_state *s = (ks_rec_state *)userdata;
    uint32_t block, thread;
    uint64_t global;
    if (kept(s, &block, &thread, &global) && !(flags & SANITIZER_MEMORY_DEVICE_FLAG_PREFETCH))
        access(s, pc, ptr, size, flags, data, block, thread, global, 0);
    return SANITIZER_PATCH_SUCCESS;
}

/* --shared-accesses: every shared load, store and atomic, and every block barrier */
extern "C" __device__ __noinline__ SanitizerPatchResult ks_rec_shared(void *userdata, uint64_t pc, void *ptr,
                                                                      uint32_t size, uint32_t flags, const void *data)
{
    ks_rec_state *s = (ks_rec_state *)userdata;
    uint32_t block, thread;
    uint64_t global;
    if (kept(s, &block, &thread, &global)) access(s, pc, ptr, size, flags, data, block, thread, global, 1);
    return SANITIZER_PATCH_SUCCESS;
}

extern "C" __device__ __noinline__ SanitizerPatchResult ks_rec_barrier(void *userdata, uint64_t pc, uint32_t bar,
                                                                       uint32_t thread_count, uint32_t flags)
{
    (void)thread_count, (void)flags;
    ks_rec_state *s = (ks_rec_state *)userdata;
    uint32_t block, thread;
    uint64_t global;
    if (kept(s, &block, &thread, &global))
        put(s, global, bar, (uint32_t)(pc - s->fn_pc), block, thread, 0, KS_REC_BARRIER, 0);
    return SANITIZER_PATCH_SUCCESS;
}
