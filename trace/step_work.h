/* step_work.h - a work item's decomposition as lines a student can check by hand: each
 * derived field with its formula, the formula with every input's value, and the result.
 * Inputs that are not fields of the work event come from the trace too: parameters
 * (sampling_ratio, and the short names the operator's descriptor gives: PH, R) from its
 * JSON, and "given" lines worked out before the field that needs them, which the
 * operator's descriptor gives through its explain hook (registry.h: a RoI's box and bin
 * size from the stored rois, a patch centre from coords, a sparse site's key). This file
 * knows no operator. */
#ifndef KS_STEP_WORK_H
#define KS_STEP_WORK_H

#include <stddef.h>

#include "kst.h"

#define KS_WORK_LINES 24

typedef struct ks_work_line {
    char name[KS_NAME_LEN]; /* a field's name, whole */
    char expr[KS_EXPR_LEN];
    char worked[192]; /* the expression with values; "" when it would repeat expr or value */
    char value[40];
    /* "" when the line holds; else what is wrong or unchecked with the recorded value:
     * "the formula gives 15", "a tensor or float formula: not re-computed" */
    char note[112];
    int wrong; /* 1: the recorded value is not what the line says (note says what is) */
} ks_work_line;

/* The lines of work event e (site and fields valid for tr), in order: givens just before
 * the first field that uses them. Returns how many (at most max). */
int ks_step_work_lines(const ks_trace *tr, const ks_event *e, ks_work_line *out, int max);

/* A number among the trace's parameters: a top-level JSON number or switch by name, or
 * a short name the trace's operator gives one (its descriptor's aliases: PH for
 * output_size[0]). 1 when found. */
int ks_trace_param_number(const ks_trace *tr, const char *name, size_t len, double *v);

#endif
