/* kscope_cuda.h - the CUDA C device API for a .cu file run on the KernelScope simulator
 * (`kscope run FILE.cu`, docs/cuda-c.md). It is C++17, compiled by clang, and included
 * before the user's file; the user's file is not changed.
 *
 * How the pieces map:
 *   threadIdx, blockIdx, blockDim, gridDim   the running fiber's values (the scheduler
 *                                            sets them at every switch)
 *   __shared__                               one block-wide copy (blocks run one at a
 *                                            time); `extern __shared__` is the launch's
 *                                            --shared bytes
 *   __syncthreads, warp collectives, atomics calls into the runtime (kernels/cuda_c/cu_rt*.c),
 *                                            which records them and schedules the fibers
 *   loads and stores                         recorded by clang's sanitizer-coverage
 *                                            callbacks, not by anything here
 * Everything here is either pure computation or a call into the runtime, so a load or
 * store the compiler instruments is always the user's own line.
 */
#ifndef KSCOPE_CUDA_H
#define KSCOPE_CUDA_H

#ifndef __cplusplus
#error "kscope: a .cu file is compiled as C++17"
#endif

#include <cassert>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

#define __KSCOPE__ 1

/* ---- qualifiers ---- */
#define __global__ __attribute__((noinline, used, annotate("ks_global")))
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __grid_constant__
/* a marker kscope rewrites (cu_scan.c): `__shared__ T a[N];` becomes a reference to a
 * block-wide slot of the runtime (ks_cu_shared_slot, with a guard gap after it), and
 * `extern __shared__ T name[];` a pointer to the launch's dynamic shared memory */
#define __shared__ static __attribute__((section("ks_cu_shared")))

/* ---- built-in variables ---- */
struct uint3 {
    unsigned int x, y, z;
};
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};
/* the runtime's variables, set at every fiber switch (real names, so a diagnostic about a
 * line quotes it as written) */
extern "C" const uint3 threadIdx, blockIdx;
extern "C" const dim3 blockDim, gridDim;
static constexpr int warpSize = 32;

/* ---- the runtime (C; the return address names the user's line, so every call is made
 * straight from a macro at that line, and `nomerge` keeps clang from folding two calls of
 * two lines into one) ---- */
#define KS_CU_CALL __attribute__((nomerge))
extern "C" {
KS_CU_CALL void ks_cu_syncthreads(void);
KS_CU_CALL int ks_cu_syncthreads_op(int op, int pred); /* 0 count, 1 and, 2 or */
KS_CU_CALL unsigned long long ks_cu_warp(int op, unsigned mask, unsigned long long v, int arg, int width);
KS_CU_CALL unsigned ks_cu_activemask(void);
KS_CU_CALL unsigned long long ks_cu_atomic(int op, int type, void *addr, unsigned long long v, unsigned long long cmp);
void ks_cu_threadfence(void);
long long ks_cu_clock(void);
int ks_cu_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
KS_CU_CALL void ks_cu_assert_fail(const char *expr, const char *file, int line) __attribute__((noreturn));
KS_CU_CALL void ks_cu_trap(void) __attribute__((noreturn));
void ks_cu_unsupported(const char *what) __attribute__((noreturn));
extern unsigned char ks_cu_dyn_smem[];
void *ks_cu_shared_slot(int id, unsigned long bytes);
}

/* ---- barriers, fences, clocks ---- */
#define __syncthreads() ks_cu_syncthreads()
#define __syncthreads_count(p) ks_cu_syncthreads_op(0, (p) ? 1 : 0)
#define __syncthreads_and(p) ks_cu_syncthreads_op(1, (p) ? 1 : 0)
#define __syncthreads_or(p) ks_cu_syncthreads_op(2, (p) ? 1 : 0)
#define __threadfence() ks_cu_threadfence()
#define __threadfence_block() ks_cu_threadfence()
#define __threadfence_system() ks_cu_threadfence()
#define clock() ks_cu_clock()
#define clock64() ks_cu_clock()
#define __trap() ks_cu_trap()
#define __nanosleep(ns) ((void)(ns))

/* ---- warp collectives (ops: kernels/cuda_c/cu_rt.h) ---- */
namespace ks_cu_detail {
template <class T> static inline unsigned long long bits_of(T v)
{
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
                  "kscope: a warp shuffle moves a value of at most 8 bytes");
    unsigned long long b = 0;
    std::memcpy(&b, &v, sizeof v);
    return b;
}
template <class T> static inline T of_bits(unsigned long long b)
{
    T v;
    std::memcpy(&v, &b, sizeof v);
    return v;
}
} // namespace ks_cu_detail
#define KS_CU_SHFL(op, mask, v, arg, width) \
    ks_cu_detail::of_bits<decltype(v)>(ks_cu_warp((op), (mask), ks_cu_detail::bits_of(v), (int)(arg), (int)(width)))
#define __shfl_sync(mask, v, src, ...) KS_CU_SHFL(0, mask, v, src, (__VA_ARGS__ + 0) ? (__VA_ARGS__ + 0) : 32)
#define __shfl_up_sync(mask, v, d, ...) KS_CU_SHFL(1, mask, v, d, (__VA_ARGS__ + 0) ? (__VA_ARGS__ + 0) : 32)
#define __shfl_down_sync(mask, v, d, ...) KS_CU_SHFL(2, mask, v, d, (__VA_ARGS__ + 0) ? (__VA_ARGS__ + 0) : 32)
#define __shfl_xor_sync(mask, v, m, ...) KS_CU_SHFL(3, mask, v, m, (__VA_ARGS__ + 0) ? (__VA_ARGS__ + 0) : 32)
#define __ballot_sync(mask, p) ((unsigned)ks_cu_warp(4, (mask), (p) ? 1u : 0u, 0, 32))
#define __any_sync(mask, p) ((int)ks_cu_warp(5, (mask), (p) ? 1u : 0u, 0, 32))
#define __all_sync(mask, p) ((int)ks_cu_warp(6, (mask), (p) ? 1u : 0u, 0, 32))
#define __syncwarp(...) ((void)ks_cu_warp(7, (__VA_ARGS__ + 0) ? (unsigned)(__VA_ARGS__ + 0) : 0xffffffffu, 0, 0, 32))
#define __activemask() ks_cu_activemask()
#define __lanemask_lt() ((1u << (threadIdx.x % 32u)) - 1u)

/* ---- bit tricks ---- */
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x) { return __builtin_bitreverse32(x); }
static inline unsigned long long __brevll(unsigned long long x) { return __builtin_bitreverse64(x); }
static inline int __mul24(int a, int b) { return (int)((long long)(a << 8 >> 8) * (b << 8 >> 8)); }
static inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s)
{
    const unsigned long long v = ((unsigned long long)y << 32) | x;
    unsigned r = 0;
    for (int i = 0; i < 4; ++i) r |= (unsigned)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}

/* ---- atomics (types: kernels/cuda_c/cu_rt.h): macros, so the runtime's call is on the
 * user's line ---- */
namespace ks_cu_detail {
template <class T> struct atype;
template <> struct atype<int> {
    static constexpr int code = 0;
};
template <> struct atype<unsigned int> {
    static constexpr int code = 1;
};
template <> struct atype<unsigned long long> {
    static constexpr int code = 2;
};
template <> struct atype<long long> {
    static constexpr int code = 3;
};
template <> struct atype<float> {
    static constexpr int code = 4;
};
template <> struct atype<double> {
    static constexpr int code = 5;
};
template <> struct atype<unsigned long> {
    static constexpr int code = sizeof(unsigned long) == 8 ? 2 : 1;
};
template <> struct atype<long> {
    static constexpr int code = sizeof(long) == 8 ? 3 : 0;
};
template <class P> using elem_t = typename std::remove_cv<typename std::remove_pointer<P>::type>::type;
} // namespace ks_cu_detail
#define KS_CU_ATOMIC(op, p, v, c)                                                                         \
    ks_cu_detail::of_bits<ks_cu_detail::elem_t<decltype(&*(p))>>(                                         \
        ks_cu_atomic((op), ks_cu_detail::atype<ks_cu_detail::elem_t<decltype(&*(p))>>::code, (void *)(p), \
                     ks_cu_detail::bits_of((ks_cu_detail::elem_t<decltype(&*(p))>)(v)),                   \
                     ks_cu_detail::bits_of((ks_cu_detail::elem_t<decltype(&*(p))>)(c))))
#define atomicAdd(p, v) KS_CU_ATOMIC(0, p, v, 0)
#define atomicSub(p, v) KS_CU_ATOMIC(1, p, v, 0)
#define atomicExch(p, v) KS_CU_ATOMIC(2, p, v, 0)
#define atomicMin(p, v) KS_CU_ATOMIC(3, p, v, 0)
#define atomicMax(p, v) KS_CU_ATOMIC(4, p, v, 0)
#define atomicAnd(p, v) KS_CU_ATOMIC(5, p, v, 0)
#define atomicOr(p, v) KS_CU_ATOMIC(6, p, v, 0)
#define atomicXor(p, v) KS_CU_ATOMIC(7, p, v, 0)
#define atomicInc(p, v) KS_CU_ATOMIC(8, p, v, 0)
#define atomicDec(p, v) KS_CU_ATOMIC(9, p, v, 0)
#define atomicCAS(p, c, v) KS_CU_ATOMIC(10, p, v, c)
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd

/* ---- read-only loads: a macro, so the load is the user's line ---- */
#define __ldg(p) (*(p))
#define __ldcg(p) (*(p))
#define __ldca(p) (*(p))
#define __ldcs(p) (*(p))
#define __ldlu(p) (*(p))
#define __ldcv(p) (*(p))
#define __stcg(p, v) ((void)(*(p) = (v)))
#define __stcs(p, v) ((void)(*(p) = (v)))
#define __stwb(p, v) ((void)(*(p) = (v)))

/* ---- vector types ---- */
#define KS_CU_VEC(T, N2, N3, N4, A2, A4)                              \
    struct __attribute__((aligned(A2))) N2 {                          \
        T x, y;                                                       \
    };                                                                \
    struct N3 {                                                       \
        T x, y, z;                                                    \
    };                                                                \
    struct __attribute__((aligned(A4))) N4 {                          \
        T x, y, z, w;                                                 \
    };                                                                \
    static inline N2 make_##N2(T x, T y) { return N2{x, y}; }         \
    static inline N3 make_##N3(T x, T y, T z) { return N3{x, y, z}; } \
    static inline N4 make_##N4(T x, T y, T z, T w) { return N4{x, y, z, w}; }
KS_CU_VEC(float, float2, float3, float4, 8, 16)
KS_CU_VEC(int, int2, int3, int4, 8, 16)
KS_CU_VEC(unsigned int, uint2, uint3_, uint4, 8, 16)
KS_CU_VEC(double, double2, double3, double4, 16, 32)
KS_CU_VEC(long long, longlong2, longlong3, longlong4, 16, 32)
KS_CU_VEC(unsigned long long, ulonglong2, ulonglong3, ulonglong4, 16, 32)
KS_CU_VEC(short, short2, short3, short4, 4, 8)
KS_CU_VEC(unsigned short, ushort2, ushort3, ushort4, 4, 8)
KS_CU_VEC(signed char, char2, char3, char4, 2, 4)
KS_CU_VEC(unsigned char, uchar2, uchar3, uchar4, 2, 4)
#undef KS_CU_VEC
static inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return uint3{x, y, z}; }
static inline dim3 make_dim3(unsigned x, unsigned y, unsigned z) { return dim3(x, y, z); }
struct float1 {
    float x;
};
struct int1 {
    int x;
};
static inline float1 make_float1(float x) { return float1{x}; }
static inline int1 make_int1(int x) { return int1{x}; }

/* ---- math: <cmath> gives floorf, fmaf, expf, ...; CUDA's own names here ---- */
template <class A, class B> static inline auto min(A a, B b) -> typename std::common_type<A, B>::type
{
    return b < a ? b : a;
}
template <class A, class B> static inline auto max(A a, B b) -> typename std::common_type<A, B>::type
{
    return a < b ? b : a;
}
/* glibc declares these names itself: macros, not functions */
#define __expf(x) expf(x)
#define __exp10f(x) powf(10.0f, (x))
#define exp10f(x) powf(10.0f, (x))
#define __logf(x) logf(x)
#define __log2f(x) log2f(x)
#define __log10f(x) log10f(x)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
#define __tanf(x) tanf(x)
#define __sincosf(x, s, c) sincosf((x), (s), (c))
#define __powf(x, y) powf((x), (y))
static inline float __fdividef(float x, float y) { return x / y; }
static inline float fdividef(float x, float y) { return x / y; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
static inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : (x == x ? x : 0.0f)); }
static inline float saturate(float x) { return __saturatef(x); }
static inline int __float2int_rn(float x) { return (int)rintf(x); }
static inline int __float2int_rz(float x) { return (int)truncf(x); }
static inline int __float2int_rd(float x) { return (int)floorf(x); }
static inline int __float2int_ru(float x) { return (int)ceilf(x); }
static inline unsigned __float2uint_rn(float x) { return (unsigned)rintf(x); }
static inline unsigned __float2uint_rz(float x) { return (unsigned)truncf(x); }
static inline unsigned __float2uint_rd(float x) { return (unsigned)floorf(x); }
static inline unsigned __float2uint_ru(float x) { return (unsigned)ceilf(x); }
static inline long long __float2ll_rn(float x) { return (long long)rintf(x); }
static inline long long __float2ll_rz(float x) { return (long long)truncf(x); }
static inline int __double2int_rn(double x) { return (int)rint(x); }
static inline int __double2int_rz(double x) { return (int)trunc(x); }
static inline float __int2float_rn(int x) { return (float)x; }
static inline float __uint2float_rn(unsigned x) { return (float)x; }
static inline float __ll2float_rn(long long x) { return (float)x; }
static inline double __int2double_rn(int x) { return (double)x; }
static inline float __double2float_rn(double x) { return (float)x; }
static inline int __float_as_int(float x) { return ks_cu_detail::of_bits<int>(ks_cu_detail::bits_of(x)); }
static inline unsigned __float_as_uint(float x) { return ks_cu_detail::of_bits<unsigned>(ks_cu_detail::bits_of(x)); }
static inline float __int_as_float(int x) { return ks_cu_detail::of_bits<float>(ks_cu_detail::bits_of(x)); }
static inline float __uint_as_float(unsigned x) { return ks_cu_detail::of_bits<float>(ks_cu_detail::bits_of(x)); }
static inline long long __double_as_longlong(double x)
{
    return ks_cu_detail::of_bits<long long>(ks_cu_detail::bits_of(x));
}
static inline double __longlong_as_double(long long x)
{
    return ks_cu_detail::of_bits<double>(ks_cu_detail::bits_of(x));
}
static inline int __sad(int x, int y, int z) { return z + (x > y ? x - y : y - x); }
static inline int __hadd(int x, int y) { return (int)(((long long)x + y) >> 1); }
static inline int __rhadd(int x, int y) { return (int)(((long long)x + y + 1) >> 1); }
static inline long long llmin(long long a, long long b) { return a < b ? a : b; }
static inline long long llmax(long long a, long long b) { return a < b ? b : a; }
static inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned umax(unsigned a, unsigned b) { return a < b ? b : a; }
static inline float normcdff(float x) { return 0.5f * erfcf(-x * 0.70710678f); }

/* ---- printf (each line tagged with its thread) and assert ---- */
#define printf ks_cu_printf
#undef assert
#define assert(e) ((e) ? (void)0 : ks_cu_assert_fail(#e, __FILE__, __LINE__))

/* ---- host code: declared so a file with a main() compiles; never run ---- */
typedef int cudaError_t;
typedef void *cudaStream_t;
typedef void *cudaEvent_t;
enum cudaMemcpyKind {
    cudaMemcpyHostToHost,
    cudaMemcpyHostToDevice,
    cudaMemcpyDeviceToHost,
    cudaMemcpyDeviceToDevice,
    cudaMemcpyDefault
};
#define cudaSuccess 0
extern "C" {
cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaMallocManaged(void **p, size_t n, unsigned flags = 1);
cudaError_t cudaMallocHost(void **p, size_t n);
cudaError_t cudaFree(void *p);
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind k);
cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t st = 0);
cudaError_t cudaMemset(void *p, int v, size_t n);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t e);
cudaError_t cudaSetDevice(int d);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaEventCreate(cudaEvent_t *e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaStreamCreate(cudaStream_t *s);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaGetDeviceCount(int *n);
}
enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9
};
template <class F> static inline cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int) { return 0; }
struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem, sharedMemPerBlock;
    int regsPerBlock, warpSize, maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], major, minor, multiProcessorCount;
};
extern "C" cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int device);
/* the host fills __constant__ and __device__ variables this way; kscope runs no host code,
 * so such a variable keeps its initializer (docs/cuda-c.md) */
template <class T>
static inline cudaError_t cudaMemcpyToSymbol(const T &, const void *, size_t, size_t = 0,
                                             cudaMemcpyKind = cudaMemcpyHostToDevice)
{
    return 0;
}
template <class T>
static inline cudaError_t cudaMemcpyFromSymbol(void *, const T &, size_t, size_t = 0,
                                               cudaMemcpyKind = cudaMemcpyDeviceToHost)
{
    return 0;
}
template <class T> static inline cudaError_t cudaMalloc(T **p, size_t n) { return cudaMalloc((void **)p, n); }
template <class T> static inline cudaError_t cudaMallocManaged(T **p, size_t n)
{
    return cudaMallocManaged((void **)p, n);
}
/* a host-side launch `k<<<g, b>>>(args)` is rewritten to `(ks_cu_host_launch(g, b), k)(args)` */
template <class... A> static inline int ks_cu_host_launch(A...)
{
    ks_cu_unsupported("a kernel launch from inside a kernel (dynamic parallelism)");
}

/* ---- what the simulator does not do: a compile error that names it ---- */
template <class... T> struct ks_cu_never : std::false_type {};
#define KS_CU_UNSUPPORTED(name, what)                                                                  \
    template <class... A> static inline int name(A...)                                                 \
    {                                                                                                  \
        static_assert(ks_cu_never<A...>::value, "kscope: " what " is not supported by the simulator"); \
        return 0;                                                                                      \
    }
KS_CU_UNSUPPORTED(tex1Dfetch, "texture memory (tex1Dfetch)")
KS_CU_UNSUPPORTED(tex2D, "texture memory (tex2D)")
KS_CU_UNSUPPORTED(tex3D, "texture memory (tex3D)")
KS_CU_UNSUPPORTED(surf2Dread, "surface memory (surf2Dread)")
KS_CU_UNSUPPORTED(surf2Dwrite, "surface memory (surf2Dwrite)")
KS_CU_UNSUPPORTED(tex2DLayered, "texture memory (tex2DLayered)")
KS_CU_UNSUPPORTED(__match_any_sync, "__match_any_sync")
KS_CU_UNSUPPORTED(__match_all_sync, "__match_all_sync")
KS_CU_UNSUPPORTED(__reduce_add_sync, "__reduce_add_sync")
KS_CU_UNSUPPORTED(__reduce_min_sync, "__reduce_min_sync")
KS_CU_UNSUPPORTED(__reduce_max_sync, "__reduce_max_sync")
#undef KS_CU_UNSUPPORTED
/* texture objects and references: the types exist, any use is a compile error naming them */
typedef unsigned long long cudaTextureObject_t;
typedef unsigned long long cudaSurfaceObject_t;
enum cudaTextureReadMode { cudaReadModeElementType, cudaReadModeNormalizedFloat };
template <class T, int D = 1, int M = cudaReadModeElementType> struct texture {
    static_assert(ks_cu_never<T>::value, "kscope: texture references are not supported by the simulator");
};

#endif /* KSCOPE_CUDA_H */
