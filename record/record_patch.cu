/* record_patch.cu - the device side of `kscope record`: the Compute Sanitizer API calls
 * ks_rec_global before every global load, store and atomic of a patched kernel (compiled
 * with nvcc --fatbin --compile-as-tools-patch; loaded by record_inject.c). Each call
 * that passes the launch's filter claims a slot and writes one 32-byte ks_rec (two for a
 * 16-byte access) with two 16-byte stores. */
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

static __device__ __forceinline__ void put(ks_rec_state *s, uint64_t addr, uint32_t pc, uint32_t block, uint32_t thread,
                                           uint32_t size, uint32_t flags, uint64_t value)
{
    const unsigned long long slot = atomicAdd(&s->counters[0], 1ull);
    if (slot >= s->capacity) {
        atomicAdd(&s->counters[1], 1ull);
        return;
    }
    uint4 *dst = (uint4 *)(s->recs + slot);
    dst[0] = make_uint4((uint32_t)addr, (uint32_t)(addr >> 32), pc, block);
    dst[1] = make_uint4(thread | size << 16 | flags << 24, 0u, (uint32_t)value, (uint32_t)(value >> 32));
}

extern "C" __device__ __noinline__ SanitizerPatchResult ks_rec_global(void *userdata, uint64_t pc, void *ptr,
                                                                      uint32_t size, uint32_t flags, const void *data)
{
    ks_rec_state *s = (ks_rec_state *)userdata;
    if (!s || !s->on) return SANITIZER_PATCH_SUCCESS;
    const uint32_t block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    if (block < s->block_lo || block >= s->block_hi) return SANITIZER_PATCH_SUCCESS;
    const uint32_t thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const uint64_t global = (uint64_t)block * (blockDim.x * blockDim.y * blockDim.z) + thread;
    if (global < s->thread_lo || global >= s->thread_hi) return SANITIZER_PATCH_SUCCESS;
    if (flags & SANITIZER_MEMORY_DEVICE_FLAG_PREFETCH) return SANITIZER_PATCH_SUCCESS;
    const int write = (flags & SANITIZER_MEMORY_DEVICE_FLAG_WRITE) != 0;
    const int read = (flags & SANITIZER_MEMORY_DEVICE_FLAG_READ) != 0;
    /* an atomic reads and writes (or only writes, ATOMIC_WRITE_ONLY) and gives no data */
    const int atomic = (read && write) || (flags & KS_SAN_ATOMIC_WRITE_ONLY) || (write && !data);
    const uint32_t kind = atomic ? (KS_REC_WRITE | KS_REC_ATOMIC) : write ? KS_REC_WRITE : KS_REC_READ;
    const uint32_t off = (uint32_t)(pc - s->fn_pc);
    const uint8_t *src = (const uint8_t *)(write && !atomic ? data : ptr);
    const uint64_t addr = (uint64_t)ptr;
    if (size <= 8) {
        put(s, addr, off, block, thread, size, kind, load_bytes(src, size));
    } else { /* 16 bytes: two halves */
        put(s, addr, off, block, thread, 8, kind, load_bytes(src, 8));
        put(s, addr + 8, off, block, thread, 8, kind | KS_REC_HALF, load_bytes(src + 8, 8));
    }
    return SANITIZER_PATCH_SUCCESS;
}
