/* libFuzzer: the command line. The input is split at NUL bytes into arguments; the
 * parsers (integers, per-axis values, numbers, filters, flags, key scripts, go-to specs)
 * and then every kscope command get them, the way main() passes them. `run` gets
 * `--device cuda` appended: this build has no CUDA (KS_FUZZ forces that), so every flag
 * is parsed and every input file read, and then the run stops before any kernel. The
 * first byte picks the command. */
#include "../../cli/cli.h"
#include "../../kernels/core/ks_error.h"
#include "../../viewer/vw_script.h"
#include "fz_util.h"

#define MAX_ARGS 24

static int (*const commands[])(int, char **) = {ks_cmd_run,   ks_cmd_list,   ks_cmd_info, ks_cmd_step,
                                                ks_cmd_check, ks_cmd_export, ks_cmd_view, ks_cmd_lesson};
static const char *const names[] = {"run", "list", "info", "step", "check", "export", "view", "lesson"};

static void parsers(const char *a)
{
    int64_t v[2];
    double d[2];
    ks_filter f;
    (void)ks_parse_i64(a, v);
    (void)ks_parse_values(a, 2, v);
    (void)ks_parse_values(a, 1, v);
    (void)ks_parse_doubles(a, 2, d);
    if (ks_parse_filter(a, &f) == KS_OK && (f.every < 1 || f.index_hi < f.index_lo || f.block_hi < f.block_lo))
        abort(); /* an accepted filter is a sane one */
    vw_action *acts = NULL;
    size_t n = 0;
    if (vw_script_parse(a, &acts, &n) == KS_OK) free(acts);
}

/* Sizes are the user's to choose: `run --input-size 30000,30000` allocates gigabytes on
 * purpose. A command line with a number above 4096 (or an exponent) is parsed above but
 * not run, so the fuzzer looks for bugs, not for big requests. */
static int small_numbers(const char *a)
{
    long run = 0;
    for (const char *p = a;; ++p) {
        if (*p >= '0' && *p <= '9') {
            run = run * 10 + (*p - '0');
            if (run > 4096) return 0;
        } else {
            run = 0;
            if (*p == 'e' || *p == 'E' || *p == 'x' || *p == 'X' || *p == 'p' || *p == 'P') {
                if (p > a && ((p[-1] >= '0' && p[-1] <= '9') || p[-1] == '.')) return 0;
            }
        }
        if (!*p) return 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char buf[4096];
    char *argv[MAX_ARGS + 4];
    int argc = 0;
    if (size < 1 || size >= sizeof buf) return 0;
    const int cmd = data[0] % (sizeof commands / sizeof commands[0]);
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = '\0';
    argv[argc++] = (char *)names[cmd];
    int small = 1;
    for (char *p = buf; p < buf + size - 1 && argc < MAX_ARGS; p += strlen(p) + 1) {
        parsers(p);
        small &= small_numbers(p);
        argv[argc++] = p;
    }
    if (!small) return 0;
    if (cmd == 0) { /* no kernel runs: see above */
        static char dev[] = "--device", cuda[] = "cuda";
        argv[argc++] = dev;
        argv[argc++] = cuda;
    }
    argv[argc] = NULL;
    if (chdir(fz_dir()) != 0) abort();     /* whatever a command writes lands in the scratch folder */
    setenv("KSCOPE_LESSONS", fz_dir(), 1); /* no lessons: `lesson --check` stays quick */
    unsetenv("DISPLAY");
    unsetenv("WAYLAND_DISPLAY");
    commands[cmd](argc, argv);
    return 0;
}
