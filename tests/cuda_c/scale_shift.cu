// out = in * scale + shift, N elements at a time through one vector load and store
// (float4 for T = float, N = 4); the n % N elements left over one by one.
#include <cuda_runtime.h>
#include <type_traits>

template <typename T, int N> struct vec;
template <> struct vec<float, 4> { typedef float4 type; };

template <typename T, int N>
__global__ void scale_shift(const T* in, T* out, int n, T scale, T shift)
{
    typedef typename vec<T, N>::type V;
    static_assert(sizeof(V) == N * sizeof(T), "one vector holds N elements");
    const int stride = blockDim.x * gridDim.x;
    const int nvec = n / N;
    const V* in_v = reinterpret_cast<const V*>(in);
    V* out_v = reinterpret_cast<V*>(out);
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < nvec; v += stride) {
        V x = in_v[v];
        x.x = x.x * scale + shift;
        x.y = x.y * scale + shift;
        x.z = x.z * scale + shift;
        x.w = x.w * scale + shift;
        out_v[v] = x;
    }
    for (int i = nvec * N + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = in[i] * scale + shift;
}

void scale_shift_f32(const float* in, float* out, int n, float scale, float shift, cudaStream_t stream)
{
    const int threads = 128;
    const int blocks = (n / 4 + threads - 1) / threads + 1;
    scale_shift<float, 4><<<blocks, threads, 0, stream>>>(in, out, n, scale, shift);
}
