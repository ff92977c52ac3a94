/* A table of damaged .kst files, of both format versions: each is rejected with
 * "FILE: offset N: problem", one line, never a crash (Check runs every test in a child
 * process, so a crash fails it). */
#include <stdio.h>
#include <unistd.h>

#include "../trace/crc32.h"
#include "test_util.h"

static unsigned char *good; /* a valid trace file of the version under test */
static size_t good_len;
static char *good_json;   /* its header */
static size_t data_start; /* where its sections begin */

/* outside any test (each loop test forks, so this runs in the child): abort() on failure */
static void make_good(int version)
{
    static ks_run r;
    static ks_trace tr;
    char path[] = "/tmp/ks_good_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    const ks_op *op = ks_op_find("im2col");
    ks_run_init(&r, op);
    r.sink = ks_host_sink_create(0, ks_filter_all());
    if (ks_run_execute(&r) != KS_OK) abort();
    ks_trace_from_run(op, &r, &tr);
    tr.version = version;
    if (ks_trace_write(path, &tr) != KS_OK) abort();
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    good_len = (size_t)ftell(f);
    rewind(f);
    good = malloc(good_len);
    if (fread(good, 1, good_len, f) != good_len) abort();
    fclose(f);
    unlink(path);
    uint32_t hlen;
    memcpy(&hlen, good + 12, 4);
    good_json = calloc(hlen + 1, 1);
    memcpy(good_json, good + 24, hlen);
    data_start = (24 + hlen + 63) / 64 * 64;
    ks_host_sink_free(r.sink);
    ks_run_free(&r);
}

/* Writes bytes to a temp file, opens (and verifies) it, expects failure whose message
 * names the file, an offset and `fragment`. */
static void expect_rejected(const unsigned char *bytes, size_t n, const char *fragment)
{
    static ks_trace tr;
    char path[] = "/tmp/ks_bad_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_eq(write(fd, bytes, n), (ssize_t)n);
    close(fd);
    int rc = ks_trace_open(path, &tr);
    if (rc == KS_OK) {
        rc = ks_trace_verify(&tr);
        ks_trace_close(&tr);
    }
    unlink(path);
    const char *msg = ks_error_message();
    ck_assert_msg(rc == KS_EFORMAT, "accepted a file that should fail with '%s'", fragment);
    ck_assert_msg(strstr(msg, path) == msg, "message does not start with the file: %s", msg);
    ck_assert_msg(strstr(msg, ": offset "), "message has no offset: %s", msg);
    ck_assert_msg(strstr(msg, fragment), "expected '%s' in: %s", fragment, msg);
    ck_assert_msg(!strchr(msg, '\n'), "message is not one line: %s", msg);
}

/* The good file with its header text edited: replace the first `from` with `to`, then
 * rebuild the preamble (length, checksum) and re-align the data area. */
static void expect_header_rejected(const char *from, const char *to, const char *fragment)
{
    const char *at = strstr(good_json, from);
    ck_assert_msg(at != NULL, "test bug: '%s' not in the header", from);
    size_t hlen = strlen(good_json) - strlen(from) + strlen(to);
    char *json = malloc(hlen + 1);
    snprintf(json, hlen + 1, "%.*s%s%s", (int)(at - good_json), good_json, to, at + strlen(from));
    size_t start = (24 + hlen + 63) / 64 * 64;
    size_t n = start + (good_len - data_start);
    unsigned char *b = calloc(n, 1);
    memcpy(b, good, 24);
    uint32_t len32 = (uint32_t)hlen, crc = ks_crc32(0, json, hlen);
    memcpy(b + 12, &len32, 4);
    memcpy(b + 16, &crc, 4);
    memcpy(b + 24, json, hlen);
    memcpy(b + start, good + data_start, good_len - data_start);
    expect_rejected(b, n, fragment);
    free(b), free(json);
}

START_TEST(the_good_file_is_accepted)
{
    static ks_trace tr;
    make_good(_i);
    char path[] = "/tmp/ks_ok_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_eq(write(fd, good, good_len), (ssize_t)good_len);
    close(fd);
    ck_assert_int_eq(ks_trace_open(path, &tr), KS_OK);
    ck_assert_int_eq(ks_trace_verify(&tr), KS_OK);
    ks_trace_close(&tr);
    unlink(path);
    /* and the header editor rebuilds a valid file from an edit that changes nothing */
    ck_assert_ptr_nonnull(strstr(good_json, "\"op\""));
}
END_TEST

START_TEST(byte_level_damage_is_rejected)
{
    make_good(_i);
    unsigned char *b = malloc(good_len);
    expect_rejected(good, 0, "too short");  /* 1 empty */
    expect_rejected(good, 10, "too short"); /* 2 shorter than the preamble */
    memcpy(b, good, good_len);
    b[0] = 'X';
    expect_rejected(b, good_len, "bad magic"); /* 3 */
    memcpy(b, good, good_len);
    b[8] = 9;
    expect_rejected(b, good_len, "unsupported version"); /* 4 */
    memcpy(b, good, good_len);
    b[15] = 0x7f;
    expect_rejected(b, good_len, "header length"); /* 5 */
    memcpy(b, good, good_len);
    b[30] ^= 0x20;
    expect_rejected(b, good_len, "header checksum");       /* 6 */
    expect_rejected(good, good_len - 100, "past the end"); /* 7 truncated in the events */
    expect_rejected(good, data_start + 8, "past the end"); /* 8 truncated in a tensor */
    memcpy(b, good, good_len);
    b[good_len - (_i == 1 ? 5 : 100)] ^= 1;          /* version 2: in the one chunk, before the padding and the index */
    expect_rejected(b, good_len, "events checksum"); /* 9 */
    if (_i == 2) {
        memcpy(b, good, good_len);
        b[good_len - 5] ^= 1;
        expect_rejected(b, good_len, "index checksum"); /* 9b: the chunk index */
    }
    memcpy(b, good, good_len);
    b[data_start + 3] ^= 1;
    expect_rejected(b, good_len, "tensor input checksum"); /* 10 */
    uint64_t s = 5;
    for (size_t i = 0; i < good_len; ++i) b[i] = (unsigned char)tu_next(&s);
    expect_rejected(b, good_len, "bad magic"); /* 11 garbage */
    memcpy(b, good, 24);
    expect_rejected(b, good_len, "header checksum"); /* 12 good preamble, garbage after */
    free(b);
}
END_TEST

START_TEST(header_damage_is_rejected)
{
    make_good(_i);
    expect_header_rejected("{", "[", "not valid JSON");                                                    /* 13 */
    expect_header_rejected("\"op\"", "\"oq\"", "op is missing");                                           /* 14 */
    expect_header_rejected("\"f32\"", "\"f16\"", "dtype");                                                 /* 15 */
    expect_header_rejected("\"shape\":\t[1", "\"shape\":\t[-1", "shape");                                  /* 16 */
    expect_header_rejected("\"shape\":\t[1", "\"shape\":\t[4000000000000, 4000000000000, 1", "overflows"); /* 17 */
    expect_header_rejected("\"length\":\t200", "\"length\":\t204", "does not match its shape");            /* 18 */
    expect_header_rejected("\"offset\":\t0", "\"offset\":\t640000", "past the end");                       /* 19 */
    if (_i == 1) {
        expect_header_rejected("\"record_size\":\t64", "\"record_size\":\t32", "record_size"); /* 20 */
        expect_header_rejected("\"count\":\t950", "\"count\":\t951", "count * 64");            /* 21 */
    } else {
        expect_header_rejected("\"encoding\":\t\"kst2\"", "\"encoding\":\t\"kst3\"", "encoding"); /* 20 */
        expect_header_rejected("\"count\":\t950", "\"count\":\t951", "chunk 0");                  /* 21 */
        expect_header_rejected("\"count\":\t950", "\"count\":\t9500000", "section's bytes");      /* 21b */
        expect_header_rejected("\"chunk_events\":\t4096", "\"chunk_events\":\t100", "index length");
        expect_header_rejected("\"chunk_events\":\t4096", "\"chunk_events\":\t0", "chunk_events");
        expect_header_rejected("\"version\":\t2", "\"version\":\t1", "differs from the preamble");
    }
    expect_header_rejected("\"tensor\":\t1", "\"tensor\":\t9", "tensor");                                    /* 22 */
    expect_header_rejected("\"threads_per_block\":\t512", "\"threads_per_block\":\t0", "threads_per_block"); /* 23 */
    expect_header_rejected("\"stride\":\t1,", "\"stride\":\t0,", "stride");                                  /* 24 */
    expect_header_rejected(_i == 1 ? "\"version\":\t1" : "\"version\":\t2", "\"version\":\t1.5",
                           "not an integer");                                            /* 25 */
    expect_header_rejected("\"offset\":\t256", "\"offset\":\t64", "overlaps");           /* 26 */
    expect_header_rejected("\"format\":\t\"kscope-trace\"", "\"format\":\t7", "format"); /* 27 */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kst_corrupt");
    TCase *tc = tcase_create("reader");
    /* the loop value is the format version */
    tcase_add_loop_test(tc, the_good_file_is_accepted, 1, 3);
    tcase_add_loop_test(tc, byte_level_damage_is_rejected, 1, 3);
    tcase_add_loop_test(tc, header_damage_is_rejected, 1, 3);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
