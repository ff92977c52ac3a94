// A tiled matrix transpose: an ordinary CUDA file, as you would write it for a GPU.
// Lesson 13 (kscope lesson 13) runs it on the simulator as it is; make_13.sh records it:
//   kscope run FILE.cu --kernel transpose --grid 2,2 --block 16,4 --arg in=@in.npy \
//       --arg out=empty:21x27 --arg rows=27 --arg cols=21 --trace T.kst
#define TILE 16

// out = in transposed: in is rows x cols, out is cols x rows. A block of TILE x 4 threads
// moves one TILE x TILE tile through shared memory, so that both its loads from in and its
// stores to out run along rows: thread (x, y) loads rows y, y + 4, y + 8, y + 12 of the
// tile, then stores four rows of the tile's transpose.
__global__ void transpose(const float *in, float *out, int rows, int cols)
{
    __shared__ float tile[TILE][TILE];
    int c = blockIdx.x * TILE + threadIdx.x; // a column of in
    int r = blockIdx.y * TILE + threadIdx.y; // a row of in
    for (int k = 0; k < TILE; k += blockDim.y)
        if (r + k < rows && c < cols)
            tile[threadIdx.y + k][threadIdx.x] = in[(r + k) * cols + c];
    __syncthreads();
    c = blockIdx.y * TILE + threadIdx.x; // a column of out (a row of in)
    r = blockIdx.x * TILE + threadIdx.y; // a row of out (a column of in)
    for (int k = 0; k < TILE; k += blockDim.y)
        if (r + k < cols && c < rows)
            out[(r + k) * rows + c] = tile[threadIdx.x][threadIdx.y + k];
}
