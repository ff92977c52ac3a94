/* cli.h - shared pieces of the kscope subcommands. */
#ifndef KS_CLI_H
#define KS_CLI_H

#include <stdint.h>

#include "../kernels/core/ks_event.h"
#include "../kernels/core/ks_parse.h"

/* Exit codes: 0 success, 1 `check` found violations, 2 bad input or failure. */
enum { KS_EXIT_OK = 0, KS_EXIT_VIOLATIONS = 1, KS_EXIT_ERROR = 2 };

/* Prints "kscope: CTX: message" to stderr and returns KS_EXIT_ERROR. */
int ks_cli_error(const char *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "index=LO:HI,block=LO:HI,every=N" (any subset; HI exclusive, may be empty) */
int ks_parse_filter(const char *s, ks_filter *f);

/* Flag matching: for "--name VALUE" or "--name=VALUE" at argv[*i], sets *value and
 * advances *i; returns 1 on a match, 0 when argv[*i] is another flag, -1 when the value
 * is missing. */
int ks_flag(int argc, char **argv, int *i, const char *name, const char **value);

/* Values of the viewer's flags, shared by view and lesson (cmd_view.c); each prints the
 * error line itself and returns KS_EXIT_ERROR, or 0. "WxH"; an integer in [lo, hi]. */
int ks_view_size_arg(const char *ctx, const char *flag, const char *v, int *w, int *h);
int ks_view_int_arg(const char *ctx, const char *flag, const char *v, int64_t lo, int64_t hi, int64_t *out);

int ks_cmd_list(int argc, char **argv);
int ks_cmd_run(int argc, char **argv);
int ks_cmd_run_cu(int argc, char **argv); /* kscope run FILE.cu (cmd_run_cu.c) */
int ks_cmd_info(int argc, char **argv);
int ks_cmd_step(int argc, char **argv);
int ks_cmd_check(int argc, char **argv);
int ks_cmd_diff(int argc, char **argv);
int ks_cmd_memory(int argc, char **argv);
int ks_cmd_export(int argc, char **argv);
int ks_cmd_convert(int argc, char **argv);
int ks_cmd_view(int argc, char **argv);
int ks_cmd_lesson(int argc, char **argv);
int ks_cmd_puzzle(int argc, char **argv);
int ks_cmd_record(int argc, char **argv);  /* kscope record -- PROGRAM (cmd_record.c) */
int ks_cmd_gallery(int argc, char **argv); /* kscope gallery DIR (cmd_gallery.c) */

/* Where the recorder is and what it records (cmd_record.c): the injected library, its
 * patch fatbin, the folder of kscope_record.py ("" when not found), and the settings the
 * recorder reads ("" for a default). */
typedef struct ks_record_paths {
    char lib[4096], patches[4200], pydir[4096];
    char kernel[256], launch[32], blocks[64], threads[64], max_events[32];
    int shared; /* --shared-accesses */
    int zstd;   /* --compress */
    int fsync;  /* --fsync */
} ks_record_paths;
/* Finds the library and patches: 0, -1 no library, -2 no patches. */
int ks_record_paths_find(ks_record_paths *p);
/* In a child, before CUDA starts: the environment that injects the recorder with p's
 * settings (ctx is a ks_record_paths), writing traces into out and reporting to status. */
void ks_record_child_env(void *ctx, const char *out, const char *status);

#endif
