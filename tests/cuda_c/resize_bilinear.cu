// Bilinear resize of a (C, in_h, in_w) image to (C, out_h, out_w), as
// torch.nn.functional.interpolate(mode="bilinear", align_corners=False):
// a 2-D grid of blocks over the output plane, blockIdx.z the channel.
__device__ __forceinline__ float source_index(float scale, int dst)
{
    const float src = (dst + 0.5f) * scale - 0.5f;
    return src < 0.0f ? 0.0f : src;
}

__global__ void resize_bilinear(const float *__restrict__ in, float *__restrict__ out,
                                int in_h, int in_w, int out_h, int out_w)
{
    const int ox = blockIdx.x * blockDim.x + threadIdx.x;
    const int oy = blockIdx.y * blockDim.y + threadIdx.y;
    const int c = blockIdx.z;
    if (ox >= out_w || oy >= out_h)
        return;

    const float h1r = source_index((float)in_h / out_h, oy);
    const int h1 = (int)h1r;
    const int h1p = (h1 < in_h - 1) ? 1 : 0;
    const float h1lambda = h1r - h1;
    const float h0lambda = 1.0f - h1lambda;

    const float w1r = source_index((float)in_w / out_w, ox);
    const int w1 = (int)w1r;
    const int w1p = (w1 < in_w - 1) ? 1 : 0;
    const float w1lambda = w1r - w1;
    const float w0lambda = 1.0f - w1lambda;

    const float *plane = in + (size_t)c * in_h * in_w;
    const float top = w0lambda * plane[h1 * in_w + w1] + w1lambda * plane[h1 * in_w + w1 + w1p];
    const float bottom = w0lambda * plane[(h1 + h1p) * in_w + w1] + w1lambda * plane[(h1 + h1p) * in_w + w1 + w1p];
    out[((size_t)c * out_h + oy) * out_w + ox] = h0lambda * top + h1lambda * bottom;
}
