/* test_kst2.c - trace format 2 (docs/trace-format.md, "Format 2"):
 *   - every operator's default trace, and one with odd random parameters, written as
 *     version 2 reads back as the very events the simulator recorded (the sink's array
 *     is the reference), and version 1 -> 2 gives the same file as writing 2 directly;
 *   - seeded random events (any bytes, any kind, runs of one work item, chunk borders)
 *     come back bit for bit, through the compact forms or raw records;
 *   - the encoder writes the bytes the document spells out;
 *   - a 2-chunk trace's index holds each chunk's index range.
 */
#include <stdio.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "../kernels/registry.h"
#include "../trace/crc32.h"
#include "../trace/export.h"
#include "../trace/kst_codec.h"
#include "../trace/run_trace.h"
#include "test_util.h"

static char *tmp_path(void)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/ks_kst2_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    return path;
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    unsigned char *b = malloc(*n + 1);
    ck_assert_uint_eq(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

/* Writes tr as `version`, reads it back and checks the events equal tr's; returns the
 * bytes of the file and (out) the events section's length. */
static unsigned char *round_trip(const ks_trace *tr, int version, size_t *n, uint64_t *event_bytes)
{
    static ks_trace back;
    ks_trace w = *tr;
    w.version = version;
    char *path = tmp_path();
    ck_assert_msg(ks_trace_write(path, &w) == KS_OK, "%s", ks_error_message());
    ck_assert_msg(ks_trace_open(path, &back) == KS_OK, "%s", ks_error_message());
    ck_assert_msg(ks_trace_verify(&back) == KS_OK, "%s", ks_error_message());
    ck_assert_int_eq(back.version, version);
    ck_assert_int_eq(back.zstd, version == 2 && tr->zstd); /* "kst2+zstd" read back as written */
    ck_assert_uint_eq(back.nevents, tr->nevents);
    /* version 1 keeps the order given, version 2 stores by (index, seq) */
    ks_event *want = version == 1 ? NULL : tu_item_order(tr->events, tr->nevents);
    for (uint64_t i = 0; i < tr->nevents; ++i)
        ck_assert_msg(!memcmp(&back.events[i], want ? &want[i] : &tr->events[i], sizeof(ks_event)),
                      "%s v%d: event %llu differs", tr->op, version, (unsigned long long)i);
    free(want);
    *event_bytes = back.event_sec.length;
    ks_trace_close(&back);
    unsigned char *bytes = slurp(path, n);
    unlink(path);
    return bytes;
}

/* Records the encoder had to store raw: none for what the probes record (a compact form
 * that does not decode to its event, a codec bug, shows here: the file stays exact) */
static uint64_t raw_records(const ks_trace *tr)
{
    ks_kst2_ctx ctx;
    ks_kst2_ctx_make(tr, &ctx);
    unsigned char *out = malloc((size_t)KS_KST2_CHUNK * KS_KST2_MAX_RECORD);
    uint64_t raw = 0;
    for (uint64_t first = 0; first < tr->nevents; first += KS_KST2_CHUNK) {
        ks_kst2_entry e;
        const uint64_t n = tr->nevents - first < KS_KST2_CHUNK ? tr->nevents - first : KS_KST2_CHUNK;
        ks_kst2_encode(&ctx, tr->events + first, (size_t)n, out, &e);
        raw += e.raw;
    }
    free(out);
    return raw;
}

/* v1 on disk -> opened -> written as v2 must equal the v2 written from memory */
static void check_versions_agree(const ks_trace *tr, uint64_t *event_bytes)
{
    static ks_trace v1;
    size_t n2, n1, nc;
    uint64_t eb1;
    unsigned char *b2 = round_trip(tr, 2, &n2, event_bytes);
    unsigned char *b1 = round_trip(tr, 1, &n1, &eb1);
    ck_assert_uint_eq(eb1, tr->nevents * 64);
    char *p1 = tmp_path(), keep[64];
    snprintf(keep, sizeof keep, "%s", p1);
    FILE *f = fopen(keep, "wb");
    ck_assert_uint_eq(fwrite(b1, 1, n1, f), n1);
    fclose(f);
    ck_assert_int_eq(ks_trace_open(keep, &v1), KS_OK);
    v1.version = 2;
    char *pc = tmp_path();
    ck_assert_int_eq(ks_trace_write(pc, &v1), KS_OK);
    ks_trace_close(&v1);
    unsigned char *bc = slurp(pc, &nc);
    ck_assert_msg(nc == n2 && !memcmp(bc, b2, n2), "%s: version 1 converted differs from version 2 written", tr->op);
    unlink(pc), unlink(keep);
    free(b1), free(b2), free(bc);
}

START_TEST(every_operator_reads_back_its_events)
{
    uint64_t all_events = 0, all_bytes = 0, s = 77;
    for (int i = 0; i < ks_op_count(); ++i) {
        const ks_op *op = ks_op_at(i);
        for (int pass = 0; pass < 2; ++pass) { /* the defaults, then odd random sizes */
            static ks_run r;
            static ks_trace tr;
            ks_run_init(&r, op);
            if (pass) {
                if (ks_op_param(op, "input-size") >= 0)
                    tu_set2(&r, op, "input-size", tu_int(&s, 3, 9) | 1, tu_int(&s, 3, 9) | 1);
                if (ks_op_param(op, "channels") >= 0) ks_run_set(&r, "channels", tu_int(&s, 1, 3) ? "3" : "1");
                r.seed = tu_next(&s);
            }
            r.sink = ks_host_sink_create(0, ks_filter_all());
            if (ks_run_execute(&r) != KS_OK) { /* a random size the op refuses: the defaults cover it */
                ck_assert_msg(pass, "%s: the default run failed: %s", op->name, ks_error_message());
                ks_host_sink_free(r.sink);
                ks_run_free(&r);
                continue;
            }
            ks_trace_from_run(op, &r, &tr);
            ck_assert_uint_gt(tr.nevents, 0);
            uint64_t bytes;
            check_versions_agree(&tr, &bytes);
            ck_assert_msg(raw_records(&tr) == 0, "%s: %llu events stored raw", op->name,
                          (unsigned long long)raw_records(&tr));
            if (!pass) {
                all_events += tr.nevents, all_bytes += bytes;
                /* the goal for im2col: 2.5x smaller than 64 bytes an event */
                if (!strcmp(op->name, "im2col")) ck_assert_uint_le(bytes * 5, tr.nevents * 64 * 2);
            }
            ks_host_sink_free(r.sink);
            ks_run_free(&r);
        }
    }
    /* and at most 24 bytes an event over the default traces (docs: about 13) */
    ck_assert_msg(all_bytes <= all_events * 24, "%llu bytes for %llu events", (unsigned long long)all_bytes,
                  (unsigned long long)all_events);
}
END_TEST

/* A trace of random events over three tensors and five sites. */
static void random_trace(ks_trace *tr, ks_event *ev, uint64_t n, uint64_t seed)
{
    memset(tr, 0, sizeof *tr);
    snprintf(tr->op, sizeof tr->op, "crafted");
    snprintf(tr->variant, sizeof tr->variant, "traced");
    snprintf(tr->device, sizeof tr->device, "sim");
    tr->threads = 64, tr->blocks = 3, tr->block_cap = -1, tr->work_items = 100;
    tr->filter = ks_filter_all();
    static float data[3][7 * 5 * 3];
    static const int64_t shapes[3][3] = {{7, 5, 3}, {105, 1, 1}, {3, 35, 1}};
    for (int t = 0; t < 3; ++t) {
        ks_tensor *x = &tr->tensors[t];
        snprintf(x->name, sizeof x->name, "t%d", t);
        x->dtype = KS_F32;
        x->ndim = t == 1 ? 1 : 3;
        memcpy(x->shape, shapes[t], sizeof shapes[t]);
        x->data = data[t];
    }
    tr->ntensors = 3;
    static const int kinds[5] = {KS_EV_WORK, KS_EV_READ, KS_EV_WRITE, KS_EV_SAMPLE, KS_EV_REGION};
    for (int i = 0; i < 5; ++i) {
        ks_site *st = &tr->sites[i];
        snprintf(st->name, sizeof st->name, "s%d", i);
        st->kind = kinds[i];
        st->tensor = i ? i % 3 : -1;
    }
    tr->nsites = 5;
    uint64_t s = seed;
    for (uint64_t i = 0; i < n; ++i) {
        ks_event *e = &ev[i];
        const int mode = (int)tu_int(&s, 0, 9);
        if (mode == 0) { /* anything at all */
            for (size_t b = 0; b < sizeof *e; ++b) ((unsigned char *)e)[b] = (unsigned char)tu_next(&s);
            continue;
        }
        memset(e, 0, sizeof *e);
        e->kind = (uint8_t)tu_int(&s, 1, KS_EV_KINDS - 1);
        e->site = (uint16_t)tu_int(&s, 0, 6); /* 5 and 6 name no site */
        e->tensor = mode == 1 ? (uint8_t)tu_int(&s, 0, 255) : e->site < 5 ? tr->sites[e->site].tensor & 255 : 255;
        e->flags = mode == 2 ? (uint8_t)tu_next(&s) : 0;
        e->tap = mode < 5 ? (uint16_t)tu_int(&s, 0, 70000) : 0;
        if (i && mode > 4) { /* the next event of the same item */
            e->block = ev[i - 1].block, e->thread = ev[i - 1].thread, e->iter = ev[i - 1].iter;
            e->index = ev[i - 1].index, e->seq = ev[i - 1].seq + 1;
        } else {
            e->block = (uint32_t)tu_next(&s) % (mode == 3 ? 0xffffffffu : 3);
            e->thread = (uint32_t)tu_int(&s, 0, 63);
            e->iter = (uint32_t)tu_int(&s, 0, 2);
            e->index = mode == 3 ? (int64_t)tu_next(&s) : tu_int(&s, -5, 200);
            e->seq = (uint32_t)tu_int(&s, 0, 20);
        }
        switch (e->kind) {
        case KS_EV_WORK:
            for (int f = 0; f < (int)tu_int(&s, 0, 8); ++f) e->u.field[f] = (int32_t)tu_int(&s, -100000, 100000);
            break;
        case KS_EV_READ:
        case KS_EV_WRITE:
            e->u.access.offset = mode == 4 ? (int64_t)tu_next(&s) : tu_int(&s, -1, 110);
            if (mode == 3 && e->tensor == 1) /* far into the 1-D tensor: planes of 105 up to 2^30 */
                e->u.access.offset = (int64_t)(tu_next(&s) >> (64 - (int)tu_int(&s, 8, 37)));
            if (mode == 4 && tu_int(&s, 0, 1)) { /* the edges of what the compact form holds */
                static const int64_t edge[] = {((int64_t)1 << 59) - 1, (int64_t)1 << 59, ((int64_t)1 << 60) - 1,
                                               (int64_t)1 << 60,       INT64_MAX,        INT64_MIN};
                const int64_t v = edge[tu_int(&s, 0, 5)];
                e->u.access.offset = tu_int(&s, 0, 1) || v == INT64_MIN ? v : -v;
            }
            if (e->u.access.offset >= 0 && e->tensor < 3) {
                const int64_t *sh = shapes[e->tensor];
                const int64_t H = e->tensor == 1 ? 1 : sh[1], W = e->tensor == 1 ? sh[0] : sh[2];
                e->u.access.x = (int32_t)(e->u.access.offset % W);
                e->u.access.y = (int32_t)(e->u.access.offset / W % H);
                e->u.access.plane = (int32_t)(e->u.access.offset / W / H);
            } else {
                e->u.access.y = (int32_t)tu_int(&s, -3, 8), e->u.access.x = (int32_t)tu_int(&s, -3, 8);
            }
            if (mode == 6) e->u.access.plane++; /* coordinates that disagree with the offset */
            e->u.access.value = (float)tu_int(&s, -1000, 1000) / 8.0f;
            if (mode == 7) e->u.access.reserved[0] = (int32_t)tu_int(&s, 0, 9);
            if (mode == 8) e->u.access.reserved[1] = (int32_t)tu_int(&s, 0, 900);
            break;
        case KS_EV_SAMPLE:
        case KS_EV_REGION:
            for (int w = 0; w < 7; ++w) ((float *)&e->u)[1 + w] = (float)tu_int(&s, -99, 99) / 4.0f;
            e->u.sample.plane = (int32_t)tu_int(&s, 0, 4);
            if (e->kind == KS_EV_REGION) e->u.region.rows = 2, e->u.region.cols = 3, e->u.region.reserved[0] = 0;
            if (e->kind == KS_EV_REGION) e->u.region.reserved[1] = mode == 9;
            break;
        case KS_EV_BARRIER: e->u.barrier.line = (int32_t)tu_int(&s, 1, 99), e->u.barrier.phase = (uint32_t)i; break;
        case KS_EV_WARP:
            e->u.warp.line = 7, e->u.warp.mask = (uint32_t)tu_next(&s), e->u.warp.arrived = 0xffff;
            e->u.warp.op = 3, e->u.warp.lane = 31, e->u.warp.value = tu_next(&s);
            break;
        case KS_EV_FAULT: e->u.fault.line = 12, e->u.fault.code = 1, e->u.fault.address = tu_next(&s); break;
        }
    }
    tr->events = ev;
    tr->nevents = n;
}

static unsigned char *put_varint(unsigned char *p, uint64_t v)
{
    for (; v >= 0x80; v >>= 7) *p++ = (unsigned char)(v | 0x80);
    *p++ = (unsigned char)v;
    return p;
}

/* (plane, y, x) follow from an offset: chunks of reads written by hand as the document
 * gives them, none with its coordinates explicit, decoded and checked against C's
 * division: exact multiples of the row length, the largest remainders and others, for
 * many row lengths and plane heights, offsets up to 2^55 */
START_TEST(offsets_give_their_coordinates_exactly)
{
    static float data[1];
    static ks_event back[4096];
    static int64_t want[4096];
    static unsigned char chunk[4096 * 16];
    uint64_t seed = 77;
    for (int round = 0; round < 400; ++round) {
        const int64_t cols = round < 100 ? round + 1 : tu_int(&seed, 1, 1000000);
        const int64_t rows = round % 3 ? tu_int(&seed, 1, 5000) : 1;
        ks_trace tr;
        memset(&tr, 0, sizeof tr);
        tr.ntensors = 1, tr.nsites = 1;
        tr.tensors[0] = (ks_tensor){.dtype = KS_F32, .ndim = 3, .shape = {1, rows, cols}, .data = data};
        tr.sites[0].kind = KS_EV_READ, tr.sites[0].tensor = 0;
        ks_kst2_ctx ctx;
        ks_kst2_ctx_make(&tr, &ctx);
        unsigned char *p = chunk;
        for (int i = 0; i < 4096; ++i) {
            int64_t off;
            do {
                const int bits = (int)tu_int(&seed, 1, 55);
                const int64_t row = (int64_t)(tu_next(&seed) >> (64 - bits)) / cols;
                off = row * cols + (i % 3 == 0 ? 0 : i % 3 == 1 ? cols - 1 : tu_int(&seed, 0, cols - 1));
            } while (off / cols / rows > INT32_MAX); /* a plane past int32: never left to derive */
            want[i] = off;
            if (i == 0) { /* head: a read; site 0; block, thread, iter, index deltas 0; seq 0 */
                static const unsigned char first[] = {KS_EV_READ, 0, 0, 0, 0, 0, 0};
                memcpy(p, first, sizeof first), p += sizeof first;
            } else *p++ = KS_EV_READ | 0x10, *p++ = 0; /* the same item, seq + 1; site 0 */
            p = put_varint(p, (uint64_t)off * 2 << 3); /* zigzag(offset) << 3: no coordinates */
            memset(p, 0, 4), p += 4;                   /* the value 0.0f */
        }
        size_t bad = 0;
        const char *why = NULL;
        ck_assert_msg(ks_kst2_decode(&ctx, chunk, (size_t)(p - chunk), back, 4096, &bad, &why) == 0, "%s at %zu",
                      why ? why : "?", bad);
        for (int i = 0; i < 4096; ++i) {
            const ks_ev_access *a = &back[i].u.access;
            const int64_t off = want[i];
            ck_assert_msg(a->offset == off && a->plane >= 0 && a->y >= 0 && a->y < rows && a->x >= 0 && a->x < cols &&
                              ((int64_t)a->plane * rows + a->y) * cols + a->x == off,
                          "cols %lld rows %lld offset %lld: (%d, %d, %d)", (long long)cols, (long long)rows,
                          (long long)off, a->plane, a->y, a->x);
        }
    }
}
END_TEST

/* the longest records the compact forms could make (every id a large delta, tap 65535,
 * a work record's 8 fields INT32_MIN, an access's every field at its widest) fit the room
 * the format promises: at most KS_KST2_MAX_RECORD bytes each, and they come back */
START_TEST(the_longest_records_fit_their_room)
{
    enum { N = 4096 };
    static ks_event ev[N], back[N];
    static unsigned char out[N * KS_KST2_MAX_RECORD];
    static ks_trace tr;
    memset(&tr, 0, sizeof tr);
    tr.ntensors = 1, tr.nsites = 2;
    static float data[1];
    tr.tensors[0] = (ks_tensor){.dtype = KS_F32, .ndim = 1, .shape = {1}, .data = data};
    tr.sites[0].kind = KS_EV_WORK, tr.sites[0].tensor = -1;
    tr.sites[1].kind = KS_EV_READ, tr.sites[1].tensor = 0;
    ks_kst2_ctx ctx;
    ks_kst2_ctx_make(&tr, &ctx);
    for (int i = 0; i < N; ++i) {
        ks_event *e = &ev[i];
        memset(e, 0, sizeof *e);
        const int odd = i & 1; /* ids swing between the extremes: every delta is wide */
        e->kind = i % 4 < 2 ? KS_EV_WORK : KS_EV_READ;
        e->site = 65535, e->flags = 0xff, e->tensor = 200, e->tap = 65535;
        e->block = odd ? UINT32_MAX : 0, e->thread = odd ? 0 : UINT32_MAX, e->iter = odd ? UINT32_MAX : 0;
        e->index = odd ? INT64_MAX : INT64_MIN, e->seq = UINT32_MAX;
        if (e->kind == KS_EV_WORK)
            for (int f = 0; f < KS_WORK_FIELDS; ++f) e->u.field[f] = INT32_MIN;
        else {
            e->u.access.offset = odd ? ((int64_t)1 << 59) - 1 : -((int64_t)1 << 59) + 1;
            e->u.access.plane = e->u.access.y = e->u.access.x = INT32_MIN;
            e->u.access.ivalue = (int32_t)0x7f800001; /* a signalling NaN's bits: kept as they are */
            e->u.access.reserved[0] = e->u.access.reserved[1] = INT32_MIN;
        }
    }
    ks_kst2_entry ent;
    const size_t len = ks_kst2_encode(&ctx, ev, N, out, &ent);
    ck_assert_uint_le(len, sizeof out);
    ck_assert_uint_le(len, (size_t)N * (1 + sizeof(ks_event)));
    ck_assert_uint_gt(ent.raw, 0); /* the work records (80 bytes compact) went raw */
    size_t bad = 0;
    const char *why = NULL;
    ck_assert_int_eq(ks_kst2_decode(&ctx, out, len, back, N, &bad, &why), 0);
    ck_assert_int_eq(memcmp(ev, back, sizeof ev), 0);
}
END_TEST

START_TEST(random_events_come_back_bit_for_bit)
{
    static const uint64_t counts[] = {0, 1, 4095, 4096, 4097, 9001};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
        static ks_trace tr;
        ks_event *ev = calloc(counts[c] + 1, sizeof *ev);
        random_trace(&tr, ev, counts[c], 1000 + c);
        uint64_t bytes;
        size_t n;
        free(round_trip(&tr, 2, &n, &bytes));
        free(ev);
    }
}
END_TEST

START_TEST(the_encoder_writes_the_documented_bytes)
{
    /* the document's example: im2col (1, 2, 5, 5), its first work event and a read */
    static ks_trace tr;
    static ks_event ev[2];
    static float input[50];
    memset(&tr, 0, sizeof tr);
    tr.ntensors = 1;
    tr.tensors[0].ndim = 4;
    const int64_t shape[4] = {1, 2, 5, 5};
    memcpy(tr.tensors[0].shape, shape, sizeof shape);
    tr.tensors[0].data = input;
    tr.nsites = 2;
    tr.sites[0].kind = KS_EV_WORK, tr.sites[0].tensor = -1;
    tr.sites[1].kind = KS_EV_READ, tr.sites[1].tensor = 0;
    ev[0].kind = KS_EV_WORK, ev[0].tensor = 255;
    ev[1].kind = KS_EV_READ, ev[1].site = 1, ev[1].tap = 4, ev[1].seq = 1;
    ev[1].u.access.value = 1.5f;
    ks_kst2_ctx ctx;
    ks_kst2_ctx_make(&tr, &ctx);
    unsigned char out[2 * KS_KST2_MAX_RECORD];
    ks_kst2_entry ent;
    const unsigned char want[] = {0x01, 0, 0, 0, 0, 0, 0, 0, 0x92, 0x01, 0x04, 0x00, 0x00, 0x00, 0xc0, 0x3f};
    ck_assert_uint_eq(ks_kst2_encode(&ctx, ev, 2, out, &ent), sizeof want);
    ck_assert_uint_eq(ent.raw, 0);
    for (size_t i = 0; i < sizeof want; ++i)
        ck_assert_msg(out[i] == want[i], "byte %zu: %02x, documented %02x", i, out[i], want[i]);
    /* a padding read at (y, x) = (-1, 2) of plane 1, flags 1, tap 3, index 7: ids and the
     * coordinates are explicit: zigzag(-1) << 3 | 1 = 0x09, plane 1 -> 02, y -1 -> 01, x 2 -> 04 */
    memset(ev, 0, sizeof ev);
    ev[0].kind = KS_EV_READ, ev[0].site = 1, ev[0].flags = KS_FLAG_PADDING, ev[0].tap = 3, ev[0].index = 7;
    ev[0].seq = 2, ev[0].u.access.offset = -1, ev[0].u.access.plane = 1, ev[0].u.access.y = -1, ev[0].u.access.x = 2;
    const unsigned char pad[] = {0xa2, 0x01, 0x01, 0x03, 0, 0, 0, 0x0e, 0x02, 0x09, 0x02, 0x01, 0x04, 0, 0, 0, 0};
    ck_assert_uint_eq(ks_kst2_encode(&ctx, ev, 1, out, &ent), sizeof pad);
    for (size_t i = 0; i < sizeof pad; ++i)
        ck_assert_msg(out[i] == pad[i], "padding read byte %zu: %02x, documented %02x", i, out[i], pad[i]);
    ck_assert_int_eq(ent.index_lo, 7);
    ck_assert_int_eq(ent.index_hi, 7);
}
END_TEST

/* the checksum is zlib's CRC-32, whatever the length and however the data is split
 * (values from Python's zlib.crc32) */
START_TEST(crc32_is_zlibs)
{
    ck_assert_uint_eq(ks_crc32(0, "123456789", 9), 0xcbf43926u);
    unsigned char buf[771];
    for (int i = 0; i < 768; ++i) buf[i] = (unsigned char)i;
    memcpy(buf + 768, "abc", 3);
    ck_assert_uint_eq(ks_crc32(0, buf, sizeof buf), 0x9d3a9924u);
    for (size_t cut = 0; cut <= sizeof buf; cut += 37)
        ck_assert_uint_eq(ks_crc32(ks_crc32(0, buf, cut), buf + cut, sizeof buf - cut), 0x9d3a9924u);
    ck_assert_uint_eq(ks_crc32(0, buf, 0), 0u);
}
END_TEST

START_TEST(the_index_gives_each_chunk_its_range)
{
    static ks_trace tr, back;
    const uint64_t n = KS_KST2_CHUNK + 10;
    ks_event *ev = calloc(n, sizeof *ev);
    random_trace(&tr, ev, n, 5);
    for (uint64_t i = 0; i < n; ++i) ev[i].index = i < KS_KST2_CHUNK ? (int64_t)(i % 1000) - 3 : 5000 + (int64_t)i % 7;
    char *path = tmp_path();
    ck_assert_int_eq(ks_trace_write(path, &tr), KS_OK);
    ck_assert_int_eq(ks_trace_open(path, &back), KS_OK);
    ck_assert_uint_eq(back.index_sec.length, 2 * KS_KST2_ENTRY);
    const unsigned char *ix = (const unsigned char *)back.map + back.data_start + back.index_sec.offset;
    ks_kst2_entry a, b;
    ks_kst2_entry_get(ix, &a);
    ks_kst2_entry_get(ix + KS_KST2_ENTRY, &b);
    ck_assert_uint_eq(a.offset, 0);
    ck_assert_uint_eq(b.offset, a.length);
    ck_assert_uint_eq(a.length + b.length, back.event_sec.length);
    ck_assert_int_eq(a.index_lo, -3);
    ck_assert_int_eq(a.index_hi, 996);
    ck_assert_int_eq(b.index_lo, 5000);
    ck_assert_int_eq(b.index_hi, 5006);
    ks_trace_close(&back);
    unlink(path);
    free(ev);
}
END_TEST

/* A lazily opened trace decodes only the chunks that hold the items asked for, and those
 * hold every record of them, whatever order they were recorded in (a grid-stride loop
 * records index t, t + G, t + 2G, ... one thread after another). */
/* Chunks compressed with zstd: every operator's default trace and random events (odd
 * counts, every record form) read back bit for bit, as the plain file does; the
 * operators' traces take fewer bytes; one work item loads alone (a lazy range). */
START_TEST(zstd_chunks_come_back_bit_for_bit)
{
    static const uint64_t counts[] = {1, 4097, 9001};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
        static ks_trace tr;
        ks_event *ev = calloc(counts[c], sizeof *ev);
        random_trace(&tr, ev, counts[c], 2000 + c);
        tr.zstd = 1;
        uint64_t bytes;
        size_t n;
        free(round_trip(&tr, 2, &n, &bytes));
        free(ev);
    }
    uint64_t plain_bytes = 0, zstd_bytes = 0;
    for (int i = 0; i < ks_op_count(); ++i) {
        const ks_op *op = ks_op_at(i);
        static ks_run r;
        static ks_trace tr;
        ks_run_init(&r, op);
        r.sink = ks_host_sink_create(0, ks_filter_all());
        ck_assert_msg(ks_run_execute(&r) == KS_OK, "%s: %s", op->name, ks_error_message());
        ks_trace_from_run(op, &r, &tr);
        uint64_t pb, zb;
        size_t n;
        free(round_trip(&tr, 2, &n, &pb));
        tr.zstd = 1;
        free(round_trip(&tr, 2, &n, &zb));
        plain_bytes += pb, zstd_bytes += zb;
        if (!strcmp(op->name, "im2col")) { /* a lazy range of a compressed file */
            static ks_trace lazy;
            char *path = tmp_path();
            ck_assert_int_eq(ks_trace_write(path, &tr), KS_OK);
            ck_assert_int_eq(ks_trace_open_lazy(path, &lazy), KS_OK);
            ck_assert_int_eq(lazy.zstd, 1);
            const int64_t want = (int64_t)tr.work_items / 3;
            ck_assert_int_eq(ks_trace_load_range(&lazy, want, want), KS_OK);
            uint64_t seen = 0;
            for (uint64_t e = 0; e < lazy.nevents; ++e) seen += lazy.events[e].index == want;
            uint64_t expect = 0;
            for (uint64_t e = 0; e < tr.nevents; ++e) expect += tr.events[e].index == want;
            ck_assert_uint_gt(expect, 0);
            ck_assert_uint_eq(seen, expect);
            ks_trace_close(&lazy);
            unlink(path);
        }
        ks_host_sink_free(r.sink);
        ks_run_free(&r);
    }
    ck_assert_msg(zstd_bytes * 3 < plain_bytes * 2, "zstd %llu bytes against %llu", (unsigned long long)zstd_bytes,
                  (unsigned long long)plain_bytes);
}
END_TEST

/* What a reader refuses of a chunk that claims to be a zstd frame: bytes that are not
 * one, a frame cut short, a frame followed by another, a frame that inflates to more
 * than its records could take or to fewer records than the chunk holds; the good frame
 * decodes to the events. */
START_TEST(bad_zstd_frames_are_refused)
{
    static ks_trace tr;
    const uint64_t n = 3001;
    ks_event *ev = calloc(n, sizeof *ev), *back = calloc(n, sizeof *back);
    random_trace(&tr, ev, n, 31);
    ks_kst2_ctx ctx;
    ks_kst2_ctx_make(&tr, &ctx);
    const size_t room = n * KS_KST2_MAX_RECORD;
    unsigned char *raw = malloc(room), *z = malloc(ks_kst2_compress_bound(room)), *junk = malloc(room);
    ks_kst2_entry e;
    const size_t len = ks_kst2_encode(&ctx, ev, n, raw, &e);
    void *cctx = NULL;
    const size_t zlen = ks_kst2_compress(&cctx, raw, len, z, ks_kst2_compress_bound(room));
    ck_assert_uint_gt(zlen, 0);
    size_t bad;
    const char *why = NULL;
    ck_assert_int_eq(ks_kst2_decode_stored(&ctx, 1, z, zlen, NULL, back, n, &bad, &why), 0);
    ck_assert_mem_eq(back, ev, n * sizeof *ev);
    ck_assert_int_eq(ks_kst2_decode_stored(&ctx, 1, raw, len, NULL, back, n, &bad, &why), -1); /* not a frame */
    ck_assert_ptr_nonnull(why);
    ck_assert_uint_eq(bad, KS_KST2_FRAME_BAD);
    why = NULL;
    ck_assert_int_eq(ks_kst2_decode_stored(&ctx, 1, z, zlen - 3, NULL, back, n, &bad, &why), -1); /* cut short */
    ck_assert_ptr_nonnull(why);
    why = NULL; /* one record more than the frame holds */
    ck_assert_int_eq(ks_kst2_decode_stored(&ctx, 1, z, zlen, NULL, back, n + 1, &bad, &why), -1);
    ck_assert_ptr_nonnull(why);
    /* the frame followed by a skippable frame: a chunk is one frame */
    unsigned char *two = malloc(zlen + 12);
    memcpy(two, z, zlen);
    static const unsigned char skip[12] = {0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4};
    memcpy(two + zlen, skip, sizeof skip);
    why = NULL;
    ck_assert_int_eq(ks_kst2_decode_stored(&ctx, 1, two, zlen + 12, NULL, back, n, &bad, &why), -1);
    ck_assert_uint_eq(bad, KS_KST2_FRAME_BAD);
    ck_assert_ptr_nonnull(why);
    free(two);
    /* a frame of more bytes than n - 1 records can take: n * 72 zeros */
    memset(junk, 0, room);
    unsigned char *big = malloc(ks_kst2_compress_bound(room + 1));
    const size_t blen = ks_kst2_compress(&cctx, junk, room, big, ks_kst2_compress_bound(room + 1));
    why = NULL;
    ck_assert_int_eq(ks_kst2_decode_stored(&ctx, 1, big, blen, NULL, back, n - 1, &bad, &why), -1);
    ck_assert_str_eq(why, "a zstd frame whose size does not fit its records");
    ks_kst2_cctx_free(cctx);
    free(raw), free(z), free(junk), free(big), free(ev), free(back);
}
END_TEST

START_TEST(a_work_item_loads_without_the_rest)
{
    static ks_trace tr, lazy;
    const uint64_t items = 3000, per = 5, n = items * per, G = 64;
    ks_event *ev = calloc(n, sizeof *ev);
    random_trace(&tr, ev, n, 9);
    uint64_t at = 0;
    for (uint64_t t = 0; t < G; ++t) /* thread t's items in its loop order */
        for (uint64_t i = t; i < items; i += G)
            for (uint32_t q = 0; q < per; ++q) {
                ks_event *e = &ev[at++];
                memset(e, 0, sizeof *e);
                e->kind = q ? KS_EV_READ : KS_EV_WORK, e->site = q ? 1 : 0, e->tensor = q ? 1 : 255;
                e->index = (int64_t)i, e->seq = q, e->thread = (uint32_t)t, e->iter = (uint32_t)(i / G);
                e->u.access.offset = q ? (int64_t)(i % 105) : 0;
                if (q) e->u.access.x = (int32_t)(i % 105), e->u.access.value = (float)q;
            }
    char *path = tmp_path();
    ck_assert_int_eq(ks_trace_write(path, &tr), KS_OK);
    ck_assert_int_eq(ks_trace_open_lazy(path, &lazy), KS_OK);
    ck_assert_ptr_null(lazy.events);
    ck_assert_uint_eq(lazy.nevents, 0);
    ck_assert_uint_eq(lazy.file_events, n);
    for (int64_t want = 0; want < (int64_t)items; want += 997) {
        ck_assert_int_eq(ks_trace_load_range(&lazy, want, want), KS_OK);
        ck_assert_uint_le(lazy.nevents, 2 * KS_KST2_CHUNK); /* one chunk, two at a border */
        uint32_t seen = 0;
        for (uint64_t i = 0; i < lazy.nevents; ++i)
            if (lazy.events[i].index == want) ck_assert_uint_eq(lazy.events[i].seq, seen++);
        ck_assert_uint_eq(seen, per);
    }
    ck_assert_int_eq(ks_trace_load_range(&lazy, INT64_MIN, INT64_MAX), KS_OK);
    ck_assert_uint_eq(lazy.nevents, n);
    ks_trace_close(&lazy);
    /* export streams a lazy trace chunk by chunk: the same events.npy as from all of it */
    char d1[64], d2[64], cmd[320];
    snprintf(d1, sizeof d1, "/tmp/ks_kst2_x1_XXXXXX"), snprintf(d2, sizeof d2, "/tmp/ks_kst2_x2_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(d1));
    ck_assert_ptr_nonnull(mkdtemp(d2));
    ck_assert_int_eq(ks_trace_open_lazy(path, &lazy), KS_OK);
    ck_assert_int_eq(ks_trace_export_npy(&lazy, d1), KS_OK);
    ks_trace_close(&lazy);
    ck_assert_int_eq(ks_trace_open(path, &lazy), KS_OK);
    ck_assert_int_eq(ks_trace_export_npy(&lazy, d2), KS_OK);
    ks_trace_close(&lazy);
    snprintf(cmd, sizeof cmd, "cmp -s %s/events.npy %s/events.npy && rm -rf %s %s", d1, d2, d1, d2);
    ck_assert_int_eq(system(cmd), 0);
    unlink(path);
    free(ev);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kst2");
    TCase *tc = tcase_create("format2");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, every_operator_reads_back_its_events);
    tcase_add_test(tc, random_events_come_back_bit_for_bit);
    tcase_add_test(tc, the_longest_records_fit_their_room);
    tcase_add_test(tc, offsets_give_their_coordinates_exactly);
    tcase_add_test(tc, the_encoder_writes_the_documented_bytes);
    tcase_add_test(tc, crc32_is_zlibs);
    tcase_add_test(tc, the_index_gives_each_chunk_its_range);
    tcase_add_test(tc, a_work_item_loads_without_the_rest);
    tcase_add_test(tc, zstd_chunks_come_back_bit_for_bit);
    tcase_add_test(tc, bad_zstd_frames_are_refused);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
