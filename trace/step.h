/* step.h - the terminal step-through: for each work item of a thread (or one work
 * item), the index, its decomposition with every division and modulo evaluated, then
 * every read, sample and write with coordinates and values. */
#ifndef KS_STEP_H
#define KS_STEP_H

#include <stdio.h>

#include "kst.h"

/* Prints the work items of global thread `thread` (block*threads + threadIdx), or the
 * one work item `index` when thread < 0. Returns the number printed (0: none in the
 * trace, with ks_error_message() saying why) or a negative ks_status. */
int64_t ks_step_print(FILE *out, const ks_trace *tr, int64_t thread, int64_t index);

/* The 3-D grid and block of a .cu trace (kscope run FILE.cu) from its params: 1; any
 * other trace: 0, with the 1-D launch (blocks, 1, 1) and (threads, 1, 1). */
int ks_trace_dims(const ks_trace *tr, uint32_t grid[3], uint32_t block[3]);
/* "thread (3,0,0) of block (1,0,0)" (.cu traces) or "block 1, thread 3". */
void ks_step_thread_name(const ks_trace *tr, uint32_t block, uint32_t thread, char *buf, size_t n);

/* Terminal lines (kscope step, the lesson player) are at most this many characters
 * (issue 38 D12); ks_step_put_line writes one line wrapped to it, continuation lines
 * indented under the line's value. */
#define KS_STEP_COLUMNS 100
void ks_step_put_line(FILE *out, const char *line);

/* One work event: its index, thread and iteration, then every field with its division
 * and modulo written out and evaluated. */
void ks_step_print_work(FILE *out, const ks_trace *tr, const ks_event *e);

/* One event as `step` prints it (a work event: its decomposition; a read: the element,
 * value and offset; ...). The event's site and tensor must be valid for tr. */
void ks_step_print_event(FILE *out, const ks_trace *tr, const ks_event *e);

/* One event on one line, as `step` and the lessons' event lists print it: "tap 3 sample
 * input plane 0 at (y 1.25, x 1.625) = 10.125", "tap 0 read  input[0, 0, 1, 2] = 9". */
void ks_step_describe_event(const ks_trace *tr, const ks_event *e, char *buf, size_t n);

/* Values print in the shortest text that reads back as the same float when that has at
 * most KS_EXACT_DIGITS significant digits (10.125, 6.375, 0.1: such values are exact for
 * a student), a binary fraction in full up to 9 significant digits (34.46875), else to 4
 * significant digits marked as rounded: "~0.7365" for 0.73645231 (issue 38 D9). */
#define KS_EXACT_DIGITS 6
int ks_real_digits(double v); /* significant digits of that shortest text, 1..9 */
/* ks_real_digits(v) when that is at most `most`, else most + 1, in one try for a value
 * that needs more: for most <= 6 a text of `most` digits reads back as the float whenever
 * one of fewer does (6 digits are spaced more than 8 float ulps apart; test_step_work
 * checks 1, 6 and 8 on floats). For a double that is no float and most > 6 it may say
 * most + 1 where fewer digits would do. The viewer formats hundreds of cells a frame,
 * most of them random floats. */
int ks_real_digits_upto(double v, int most);
void ks_format_real(char *buf, size_t n, double v);

/* "input[0, 1, 2, 3]": the tensor's name and the element's full coordinates, the plane
 * split over the leading dimensions. */
void ks_format_element(const ks_trace *tr, int tensor, int64_t plane, int64_t y, int64_t x, char *buf, size_t n);

/* Writes expr with every field name (and "index") replaced by its value in the work
 * event e of site s: "h_im < 3 ? 0 : (h_im - 3) / 1 + 1" -> "4 < 3 ? 0 : (4 - 3) / 1 + 1". */
void ks_expr_substitute(const ks_site *s, const ks_event *e, const char *expr, char *buf, size_t n);
/* The formula worked out for a student: the values substituted, and for `c ? a : b` the
 * condition with its values and only the branch taken ("3 < 5, so 0";
 * "7 < 5 is false, so (7 - 5) / 1 + 1"). Falls back to ks_expr_substitute when the
 * condition cannot be evaluated from the fields. */
void ks_expr_worked(const ks_site *s, const ks_event *e, const char *expr, char *buf, size_t n);

#endif
