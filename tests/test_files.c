/* Files (issue 15): outputs never replace a FIFO, directory or link (a link's file is
 * written, the link stays), new files get the umask's mode, SIGINT/SIGTERM/SIGHUP remove
 * the temporary of an unfinished write, readers refuse a FIFO instead of waiting on it,
 * and an export that fails part-way leaves none of its files. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../trace/export.h"
#include "../trace/image.h"
#include "../trace/ks_file.h"
#include "../trace/npy.h"
#include "crafted_trace.h"

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/ks_files.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static const char *in_dir(const char *name)
{
    static char path[4][160];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

/* The names in dir (sorted, space-separated). */
static const char *listing(const char *d)
{
    static char out[1024];
    struct dirent **names;
    int n = scandir(d, &names, NULL, alphasort);
    out[0] = '\0';
    for (int i = 0; i < n; ++i) {
        if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
            snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", out[0] ? " " : "", names[i]->d_name);
        free(names[i]);
    }
    free(names);
    return out;
}

/* A random f32 tensor of n elements (seeded). */
static void random_tensor(ks_tensor *t, uint64_t seed, int64_t n)
{
    uint64_t s = seed;
    memset(t, 0, sizeof *t);
    t->dtype = KS_F32;
    t->ndim = 1;
    t->shape[0] = n;
    ck_assert_int_eq(ks_tensor_alloc(t), KS_OK);
    float *r = tu_random(&s, n);
    memcpy(t->data, r, (size_t)n * 4);
    free(r);
}

START_TEST(outputs_refuse_fifos_directories_and_dangling_links)
{
    ks_tensor t;
    random_tensor(&t, 5, 17);
    ck_assert_int_eq(mkfifo(in_dir("fifo"), 0600), 0);
    ck_assert_int_eq(mkdir(in_dir("sub"), 0700), 0);
    ck_assert_int_eq(symlink("missing.npy", in_dir("dangling")), 0);
    const char *names[] = {"fifo", "sub", "dangling"};
    const char *why[] = {"not a regular file", "is a directory", "symbolic link to a missing file"};
    for (int i = 0; i < 3; ++i) {
        ck_assert_int_ne(ks_npy_write(in_dir(names[i]), &t), KS_OK);
        ck_assert_msg(strstr(ks_error_message(), why[i]), "%s", ks_error_message());
    }
    struct stat st;
    ck_assert_int_eq(lstat(in_dir("fifo"), &st), 0);
    ck_assert(S_ISFIFO(st.st_mode));
    ck_assert_int_eq(lstat(in_dir("dangling"), &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    ck_assert_str_eq(listing(dir), "dangling fifo sub");
    ks_tensor_free(&t);
}
END_TEST

START_TEST(a_link_is_followed_and_kept)
{
    ks_tensor a, b, got;
    random_tensor(&a, 11, 9);
    random_tensor(&b, 12, 23);
    ck_assert_int_eq(ks_npy_write(in_dir("real.npy"), &a), KS_OK);
    ck_assert_int_eq(symlink("real.npy", in_dir("link.npy")), 0);
    ck_assert_int_eq(ks_npy_write(in_dir("link.npy"), &b), KS_OK);
    struct stat st;
    ck_assert_int_eq(lstat(in_dir("link.npy"), &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    ck_assert_int_eq(ks_npy_read(in_dir("real.npy"), &got), KS_OK);
    ck_assert_int_eq(got.shape[0], 23);
    ck_assert(!memcmp(got.data, b.data, 23 * 4));
    ck_assert_str_eq(listing(dir), "link.npy real.npy");
    ks_tensor_free(&a), ks_tensor_free(&b), ks_tensor_free(&got);
}
END_TEST

/* Each umask gives 0666 without its bits: 022 -> 0644, 027 -> 0640, 0 -> 0666. */
START_TEST(new_files_get_the_mode_the_umask_allows)
{
    const mode_t masks[] = {022, 027, 0, 077};
    ks_tensor t;
    random_tensor(&t, 21, 4);
    umask(masks[_i]);
    char name[32];
    snprintf(name, sizeof name, "m%d.npy", _i);
    ck_assert_int_eq(ks_npy_write(in_dir(name), &t), KS_OK);
    struct stat st;
    ck_assert_int_eq(stat(in_dir(name), &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0666 & ~masks[_i]);
    ks_tensor_free(&t);
}
END_TEST

/* A child opens an output, writes part of it and waits; the signal kills it and its
 * temporary is gone. */
START_TEST(a_signal_removes_the_unfinished_temporary)
{
    const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        ks_out_file o;
        char buf[4096];
        memset(buf, 7, sizeof buf);
        /* as kscope starts: default actions (Check's runner forwards these signals, and a
         * background shell ignores SIGINT; ks_file keeps a handler it finds) */
        signal(SIGTERM, SIG_DFL), signal(SIGINT, SIG_DFL), signal(SIGHUP, SIG_DFL);
        if (ks_out_open(&o, in_dir("big.kst")) || ks_out_write(&o, buf, sizeof buf) || fflush(o.f)) _exit(3);
        if (write(fds[1], "x", 1) != 1) _exit(4);
        for (;;) pause();
    }
    char c;
    ck_assert_int_eq(read(fds[0], &c, 1), 1);
    ck_assert_str_ne(listing(dir), ""); /* the temporary is there */
    kill(pid, sigs[_i]);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == sigs[_i]); /* it still dies of the signal */
    ck_assert_str_eq(listing(dir), "");
    close(fds[0]), close(fds[1]);
}
END_TEST

/* A Fortran-order .npy (numpy writes them for transposes and np.argwhere) reads as the C
 * order array it stands for: a 2 x 3 i32 and a 2 x 3 x 2 f32, against their elements
 * worked out from the first-index-fastest layout */
START_TEST(fortran_order_npy_is_read_in_c_order)
{
    static const struct {
        const char *dict;
        int ndim;
        int64_t shape[3];
    } cases[] = {{"{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", 2, {2, 3, 1}},
                 {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 2), }", 3, {2, 3, 2}}};
    const int c = _i;
    const int64_t n = cases[c].shape[0] * cases[c].shape[1] * cases[c].shape[2];
    unsigned char buf[512] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    const size_t len = strlen(cases[c].dict), pad = (64 - (10 + len + 1) % 64) % 64;
    memcpy(buf + 10, cases[c].dict, len);
    memset(buf + 10 + len, ' ', pad);
    buf[10 + len + pad] = '\n';
    buf[8] = (unsigned char)(len + pad + 1);
    unsigned char *data = buf + 10 + len + pad + 1;
    for (int64_t f = 0; f < n; ++f) { /* the file's f-th value is 7 f + 3 */
        int32_t iv = (int32_t)(7 * f + 3);
        float fv = (float)(7 * f + 3);
        memcpy(data + 4 * f, c == 0 ? (void *)&iv : (void *)&fv, 4);
    }
    FILE *out = fopen(in_dir("f.npy"), "wb");
    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(fwrite(buf, 1, (size_t)(data - buf) + 4 * (size_t)n, out), (size_t)(data - buf) + 4 * (size_t)n);
    fclose(out);
    ks_tensor t;
    ck_assert_msg(ks_npy_read(in_dir("f.npy"), &t) == KS_OK, "%s", ks_error_message());
    ck_assert_int_eq(t.ndim, cases[c].ndim);
    const int64_t *S = cases[c].shape;
    for (int64_t i = 0; i < S[0]; ++i)
        for (int64_t j = 0; j < S[1]; ++j)
            for (int64_t k = 0; k < S[2]; ++k) {
                const int64_t f = i + S[0] * (j + S[1] * k), at = (i * S[1] + j) * S[2] + k;
                const double got = c == 0 ? ((int32_t *)t.data)[at] : ((float *)t.data)[at];
                ck_assert_msg(got == (double)(7 * f + 3), "case %d (%lld, %lld, %lld): %g, not %lld", c, (long long)i,
                              (long long)j, (long long)k, got, (long long)(7 * f + 3));
            }
    ks_tensor_free(&t);
}
END_TEST

START_TEST(readers_refuse_a_fifo_instead_of_waiting)
{
    ks_tensor t;
    static ks_trace tr;
    alarm(10); /* a reader that blocks fails the test instead of hanging it */
    ck_assert_int_eq(mkfifo(in_dir("pipe"), 0600), 0);
    ck_assert_int_ne(ks_npy_read(in_dir("pipe"), &t), KS_OK);
    ck_assert_ptr_nonnull(strstr(ks_error_message(), "not a regular file"));
    ck_assert_int_ne(ks_trace_open(in_dir("pipe"), &tr), KS_OK);
    ck_assert_ptr_nonnull(strstr(ks_error_message(), "not a regular file"));
    memset(&t, 0, sizeof t);
    ck_assert_int_ne(ks_image_read(in_dir("pipe"), 1, 0, 0, &t), KS_OK);
    ck_assert_ptr_nonnull(strstr(ks_error_message(), "not a regular file"));
    alarm(0);
}
END_TEST

/* events.npy cannot be written (a directory is in its place): no tensor .npy and no
 * header.json appear. A write that fails in a folder the export made: the folder is gone. */
START_TEST(an_export_that_fails_part_way_leaves_no_file)
{
    static ct_trace c;
    static ks_trace tr;
    const int64_t shape[3] = {1, 2, 3}, out[3] = {1, 2, 2};
    ct_init(&c, 2, 2, 4);
    ct_tensor(&c, 0, "input", KS_ROLE_INPUT, 3, shape);
    ct_tensor(&c, 1, "output", KS_ROLE_OUTPUT, 3, out);
    for (int i = 0; i < 4; ++i) ct_event(&c, KS_EV_WORK, 0, i, (uint32_t)(i / 2), (uint32_t)(i % 2), 0);
    ck_assert_int_eq(ct_roundtrip(&c, in_dir("t.kst"), &tr), KS_OK);
    ck_assert_int_eq(mkdir(in_dir("ex"), 0700), 0);
    ck_assert_int_eq(mkdir(in_dir("ex/events.npy"), 0700), 0);
    ck_assert_int_ne(ks_trace_export_npy(&tr, in_dir("ex")), KS_OK);
    ck_assert_str_eq(listing(in_dir("ex")), "events.npy");
    ks_trace_close(&tr);
    ck_assert_int_eq(rmdir(in_dir("ex/events.npy")), 0);
    ck_assert_int_eq(ks_trace_open(in_dir("t.kst"), &tr), KS_OK);
    ck_assert_int_eq(ks_trace_export_npy(&tr, in_dir("ex")), KS_OK); /* and whole when it can */
    ck_assert_str_eq(listing(in_dir("ex")), "events.npy header.json input.npy output.npy");
    ks_trace_close(&tr);
    /* files may not grow past 100 bytes (EFBIG, even for root): the export fails after it
     * made its folder, and the folder goes too */
    ck_assert_int_eq(ks_trace_open(in_dir("t.kst"), &tr), KS_OK);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = {100, 100};
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
    ck_assert_int_ne(ks_trace_export_npy(&tr, in_dir("new")), KS_OK);
    ck_assert_int_ne(access(in_dir("new"), F_OK), 0);
    ks_trace_close(&tr);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("files");
    TCase *tc = tcase_create("files");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, outputs_refuse_fifos_directories_and_dangling_links);
    tcase_add_test(tc, a_link_is_followed_and_kept);
    tcase_add_loop_test(tc, new_files_get_the_mode_the_umask_allows, 0, 4);
    tcase_add_loop_test(tc, a_signal_removes_the_unfinished_temporary, 0, 3);
    tcase_add_test(tc, readers_refuse_a_fifo_instead_of_waiting);
    tcase_add_loop_test(tc, fortran_order_npy_is_read_in_c_order, 0, 2);
    tcase_add_test(tc, an_export_that_fails_part_way_leaves_no_file);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
