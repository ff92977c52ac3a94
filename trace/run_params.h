/* run_params.h - a traced run set up again from its trace: the operator the trace names,
 * its parameters from the trace's params JSON (trace/kst.h), its launch and filter, so a
 * caller (the viewer's live parameters) can change a parameter and run it once more. */
#ifndef KS_RUN_PARAMS_H
#define KS_RUN_PARAMS_H

#include "../kernels/registry.h"
#include "kst.h"

/* The key of parameter row s in a params JSON: s->key, or the name with '-' as '_'. */
void ks_param_key(const ks_param_spec *s, char *key, size_t n);

/* Fills r (ks_run_init) for the operator tr->op with every parameter row found in
 * tr->params set through ks_run_set, as the flag would set it ([3, 2] -> "3,2", true ->
 * "on"); a row absent from the JSON, or whose value the registry refuses (an "auto"
 * default stored as 0), keeps its default. The launch takes the trace's block cap and its
 * threads, or 0 (the operator's default for whatever parameters the run gets later) when
 * the trace's threads were the default for its own parameters; device simulator, pattern arange; no sink, no tensors. KS_OK, or KS_ENOENT with
 * ks_error_message() set when this build has no operator of that name, KS_EFORMAT when
 * the params are not a JSON object. */
int ks_run_from_trace(ks_run *r, const ks_trace *tr);

/* Choice k of a CHOICE row as its word ("max" for 1 of "avg|max"). */
void ks_param_choice_word(const ks_param_spec *s, int64_t k, char *buf, size_t n);
/* Parameter p of r as the command line spells it ("3,3", "0.5,0.5", "on", "avg"). */
void ks_run_param_text(const ks_run *r, int p, char *buf, size_t n);

/* Gives r the trace's input tensor t_op (an input row of r->op) as a copy of the trace's
 * tensor of the same name and dtype: KS_OK, KS_ENOENT when the trace has none, KS_ENOMEM. */
int ks_run_give_from_trace(ks_run *r, int t_op, const ks_trace *tr);

#endif
