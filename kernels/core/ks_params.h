/* ks_params.h - parameter rows several descriptors share, written once. Use them as
 * designated rows: `[P_KERNEL] = KS_ROW_KERNEL_SIZE(3),`. */
#ifndef KS_PARAMS_H
#define KS_PARAMS_H

#include "../registry.h"

/* The sliding-window geometry of convolution-like operators. */
#define KS_ROW_KERNEL_SIZE(k)                                                                     \
    {                                                                                             \
        .name = "kernel-size", .axes = 2, .def = {k, k}, .min = 1, .help = "kernel height, width" \
    }
#define KS_ROW_PADDING(p)                                           \
    {                                                               \
        .name = "padding", .axes = 2, .def = {p, p}, .min = 0,      \
        .help = "zero padding on each side: top/bottom, left/right" \
    }
#define KS_ROW_STRIDE                                                               \
    {                                                                               \
        .name = "stride", .axes = 2, .def = {1, 1}, .min = 1, .help = "window step" \
    }
#define KS_ROW_DILATION                                                                              \
    {                                                                                                \
        .name = "dilation", .axes = 2, .def = {1, 1}, .min = 1, .help = "spacing of the kernel taps" \
    }

/* The sizes of a built-in tensor (`what` names it: "input"), which a given one sets. */
#define KS_ROW_BATCH(letter, n, what)                                         \
    {                                                                         \
        .name = "batch", .axes = 1, .def = {n, n}, .min = 1,                  \
        .help = letter " of the built-in " what " (an --in " what " sets it)" \
    }
#define KS_ROW_CHANNELS(n, what)                                        \
    {                                                                   \
        .name = "channels", .axes = 1, .def = {n, n}, .min = 1,         \
        .help = "C of the built-in " what " (an --in " what " sets it)" \
    }
#define KS_ROW_INPUT_SIZE(h, w)                                      \
    {                                                                \
        .name = "input-size", .axes = 2, .def = {h, w}, .min = 1,    \
        .help = "H, W of the built-in input (an --in input sets it)" \
    }
#define KS_ROW_BACKWARD                                                                                        \
    {                                                                                                          \
        .name = "backward", .kind = KS_PARAM_SWITCH, .help = "also the gradients of sum(output * grad_output)" \
    }

#endif
