/* test_gpu_props.c - test_props.c built with KS_PROPS_GPU: every draw also on CUDA, equal
 * to the simulator (skipped without a GPU). */
#include "test_props.c"
