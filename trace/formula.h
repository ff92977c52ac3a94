/* formula.h - evaluating the derived-field formulas of a work site (the `expr` that
 * `kscope step` shows a student: "h_col_start = h_im < 3 ? 0 : (h_im - 3) / 1 + 1"), so
 * `check` can hold the recorded value to it. */
#ifndef KS_FORMULA_H
#define KS_FORMULA_H

#include <stdint.h>

#include "../kernels/core/ks_event.h"
#include "../kernels/core/ks_schema.h"

/* Evaluates `expr` in 64-bit integers with the work event's fields (named by the site) as
 * variables: integer literals, + - * / % (C's truncating division), unary -, comparisons
 * < <= > >= == != (1 or 0), a ? b : c, min(a, b), max(a, b), parentheses.
 * KS_OK with *out set; KS_ENOENT when the formula names something else (a tensor, a
 * float, a function it does not know: it is described, not checkable); KS_EINVAL when
 * it is malformed, nests past 64 levels or divides by zero; KS_ECHECK when a step
 * overflows 64 bits (INT64_MIN / -1 included): the formula cannot hold, and `check` says so.
 * Never a signal, whatever the text and the field values. */
int ks_formula_eval(const char *expr, const ks_site *site, const ks_event *work, int64_t *out);

#endif
