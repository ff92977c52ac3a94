/* formula.h - evaluating the derived-field formulas of a work site (the `expr` that
 * `kscope step` shows a student: "h_col_start = h_im < 3 ? 0 : (h_im - 3) / 1 + 1"), so
 * `check` can hold the recorded value to it. */
#ifndef KS_FORMULA_H
#define KS_FORMULA_H

#include <stdint.h>

#include "../kernels/core/ks_event.h"
#include "../kernels/core/ks_schema.h"

/* Evaluates `expr` in 64-bit integers with the work event's fields (named by the site) as
 * variables (ks_formula_eval_value below: floats, casts, floor, parameters): integer literals, + - * / % (C's truncating division), unary -, comparisons
 * < <= > >= == != (1 or 0), a ? b : c, min(a, b), max(a, b), parentheses.
 * KS_OK with *out set; KS_ENOENT when the formula names something else (a tensor, a
 * float, a function it does not know: it is described, not checkable); KS_EINVAL when
 * it is malformed, nests past 64 levels or divides by zero; KS_ECHECK when a step
 * overflows 64 bits (INT64_MIN / -1 included): the formula cannot hold, and `check` says so.
 * Never a signal, whatever the text and the field values. */
int ks_formula_eval(const char *expr, const ks_site *site, const ks_event *work, int64_t *out);

/* A trace's parameters, for formulas that name them (`H`, `OH`, `spatial_scale`): every
 * top-level number or switch of the params JSON by its name (an integral one is an
 * integer, any other a float), and the operator's short names for them (its descriptor's
 * aliases, "PH=output_size[0] PW=output_size[1]"); step adds the values it works out from
 * the tensors (a RoI's roi_h) as floats. */
#define KS_FORMULA_PARAMS 48
typedef struct ks_formula_params {
    int n;
    char name[KS_FORMULA_PARAMS][KS_NAME_LEN];
    int64_t value[KS_FORMULA_PARAMS];
    float fvalue[KS_FORMULA_PARAMS];
    unsigned char is_float[KS_FORMULA_PARAMS];
} ks_formula_params;

void ks_formula_params_from(const char *params_json, const char *aliases, ks_formula_params *p);
/* One more float name (step's worked-out values); -1 when the table is full. */
int ks_formula_params_add(ks_formula_params *p, const char *name, float v);

/* A formula's value as C types it: an integer, or a float. */
typedef struct ks_formula_value {
    int is_float;
    int64_t i;
    float f;
} ks_formula_value;

/* The typed evaluator: C's arithmetic over integers (int64, exact: KS_ECHECK on
 * overflow) and floats (f32, one rounding per operation, as the kernel's float code
 * rounds: write 0.5 where the kernel writes 0.5f), with decimal literals, the casts (int)
 * and (float), floor, ceil, floorf, ceilf, min, max, fminf, fmaxf beside ks_formula_eval's
 * operators. Names: the fields, then (params given) `index` and the parameters. A field's
 * name wins over a parameter's. Statuses as ks_formula_eval's. */
int ks_formula_eval_value(const char *expr, const ks_site *site, const ks_event *work, const ks_formula_params *params,
                          ks_formula_value *out);

/* The typed evaluator for integer formulas only: KS_ENOENT when the value is a float. */
int ks_formula_eval_with(const char *expr, const ks_site *site, const ks_event *work, const ks_formula_params *params,
                         int64_t *out);

#endif
