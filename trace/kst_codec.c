/* kst_codec.c - format 2's compact event records: encode a chunk, decode a chunk.
 *
 * A record: head byte, site varint, then what the head announces, then the payload.
 *   head bits 0-3: the kind (1..8), or 15 for a raw 64-byte record
 *   bit 4: same item: block, thread, iter and index as the previous record, seq + 1
 *   bit 5: a flags byte follows        bit 6: a tensor byte follows (else the site's)
 *   bit 7: a tap varint follows (else 0)
 * The encoder stores a record raw when its compact form would not give the event back
 * bit for bit (reserved bytes set, a kind 0, an offset past 2^60) or would be longer than
 * the raw one: work, read and write records with |offset| < 2^59 are known exact by
 * their form (exact_by_form), the rest are decoded back.
 */
#include "kst_codec.h"

#include <string.h>

enum { HEAD_RAW = 15, HEAD_SAME = 0x10, HEAD_FLAGS = 0x20, HEAD_TENSOR = 0x40, HEAD_TAP = 0x80 };
/* the low bits of an access's offset varint */
enum { ACC_EXPLICIT = 1, ACC_RES0 = 2, ACC_RES1 = 4, ACC_BITS = 3 };

void ks_kst2_ctx_make(const ks_trace *tr, ks_kst2_ctx *c)
{
    memset(c, 0, sizeof *c);
    c->nsites = tr->nsites;
    c->ntensors = tr->ntensors;
    for (int s = 0; s < tr->nsites; ++s)
        c->site_tensor[s] = tr->sites[s].tensor < 0 ? 255 : (uint8_t)tr->sites[s].tensor;
    for (int t = 0; t < tr->ntensors; ++t) {
        const ks_tensor *x = &tr->tensors[t];
        c->rows[t] = x->ndim >= 2 ? x->shape[x->ndim - 2] : x->ndim == 1 ? 1 : 0;
        c->cols[t] = x->ndim >= 1 ? x->shape[x->ndim - 1] : 0;
    }
}

static uint8_t site_tensor(const ks_kst2_ctx *c, unsigned site)
{
    return site < (unsigned)c->nsites ? c->site_tensor[site] : 255;
}

static uint64_t zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static int64_t unzz(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }

/* (plane, y, x) of an in-bounds element offset, as the probes compute them; 0 when the
 * tensor has no planes to derive them from */
static int derive(const ks_kst2_ctx *c, unsigned tensor, int64_t off, int32_t *plane, int32_t *y, int32_t *x)
{
    if (tensor >= (unsigned)c->ntensors || off < 0 || c->rows[tensor] <= 0 || c->cols[tensor] <= 0) return 0;
    const int64_t cols = c->cols[tensor], rows = c->rows[tensor];
    const int64_t p = off / cols / rows;
    if (p > INT32_MAX) return 0;
    *plane = (int32_t)p, *y = (int32_t)(off / cols % rows), *x = (int32_t)(off % cols);
    return 1;
}

/* ---- encoding ---- */

static unsigned char *put_var(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

static unsigned char *put_f32(unsigned char *p, float f)
{
    memcpy(p, &f, 4);
    return p + 4;
}

static unsigned char *put_payload(const ks_kst2_ctx *c, const ks_event *e, unsigned char *p)
{
    switch (e->kind) {
    case KS_EV_WORK: {
        int n = KS_WORK_FIELDS;
        while (n > 0 && e->u.field[n - 1] == 0) --n;
        *p++ = (unsigned char)n;
        for (int f = 0; f < n; ++f) p = put_var(p, zz(e->u.field[f]));
        return p;
    }
    case KS_EV_READ:
    case KS_EV_WRITE: {
        const ks_ev_access *a = &e->u.access;
        int32_t pl, y, x;
        const int exp = !(derive(c, e->tensor, a->offset, &pl, &y, &x) && pl == a->plane && y == a->y && x == a->x);
        const uint64_t bits = (uint64_t)exp * ACC_EXPLICIT | (a->reserved[0] ? ACC_RES0 : 0) |
                              (a->reserved[1] ? ACC_RES1 : 0);
        p = put_var(p, zz(a->offset) << ACC_BITS | bits); /* past 2^60 it wraps: the record goes raw */
        if (exp) p = put_var(put_var(put_var(p, zz(a->plane)), zz(a->y)), zz(a->x));
        memcpy(p, &a->ivalue, 4), p += 4; /* its bits as they are (a KS_FLAG_INT value too) */
        if (a->reserved[0]) p = put_var(p, zz(a->reserved[0]));
        if (a->reserved[1]) p = put_var(p, zz(a->reserved[1]));
        return p;
    }
    case KS_EV_SAMPLE: {
        const ks_ev_sample *s = &e->u.sample;
        p = put_var(p, zz(s->plane));
        p = put_f32(put_f32(p, s->y), s->x);
        for (int k = 0; k < 4; ++k) p = put_f32(p, s->w[k]);
        return put_f32(p, s->value);
    }
    case KS_EV_REGION: {
        const ks_ev_region *r = &e->u.region;
        p = put_var(p, zz(r->plane));
        p = put_f32(put_f32(put_f32(put_f32(p, r->y0), r->x0), r->y1), r->x1);
        return put_var(put_var(p, r->rows), r->cols);
    }
    case KS_EV_BARRIER: return put_var(put_var(p, zz(e->u.barrier.line)), e->u.barrier.phase);
    case KS_EV_WARP: {
        const ks_ev_warp *w = &e->u.warp;
        p = put_var(put_var(put_var(p, zz(w->line)), w->mask), w->arrived);
        *p++ = w->op;
        *p++ = w->lane;
        return put_var(p, w->value);
    }
    case KS_EV_FAULT: return put_var(put_var(put_var(p, zz(e->u.fault.line)), e->u.fault.code), e->u.fault.address);
    default: return p;
    }
}

static unsigned char *put_record(const ks_kst2_ctx *c, const ks_event *e, const ks_event *prev, unsigned char *p)
{
    const int same = e->block == prev->block && e->thread == prev->thread && e->iter == prev->iter &&
                     e->index == prev->index && e->seq == prev->seq + 1u;
    unsigned head = e->kind | (same ? HEAD_SAME : 0) | (e->flags ? HEAD_FLAGS : 0) |
                    (e->tensor != site_tensor(c, e->site) ? HEAD_TENSOR : 0) | (e->tap ? HEAD_TAP : 0);
    *p++ = (unsigned char)head;
    p = put_var(p, e->site);
    if (e->flags) *p++ = e->flags;
    if (head & HEAD_TENSOR) *p++ = e->tensor;
    if (e->tap) p = put_var(p, e->tap);
    if (!same) { /* deltas wrap in 64 bits, so any pair of values round-trips */
        p = put_var(p, zz((int64_t)((uint64_t)e->block - prev->block)));
        p = put_var(p, zz((int64_t)((uint64_t)e->thread - prev->thread)));
        p = put_var(p, zz((int64_t)((uint64_t)e->iter - prev->iter)));
        p = put_var(p, zz((int64_t)((uint64_t)e->index - (uint64_t)prev->index)));
        p = put_var(p, e->seq);
    }
    return put_payload(c, e, p);
}

/* ---- decoding ---- */

typedef struct cursor {
    const unsigned char *p, *end;
    const char *why; /* set at the first problem */
} cursor;

static int bad(cursor *k, const char *why)
{
    if (!k->why) k->why = why;
    return -1;
}

static uint64_t get_var(cursor *k)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (k->p >= k->end) {
            bad(k, "a number runs past the end of the chunk");
            return 0;
        }
        const unsigned b = *k->p++;
        if (shift == 63 && b > 1) {
            bad(k, "a number is longer than 64 bits");
            return 0;
        }
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    bad(k, "a number is longer than 64 bits");
    return 0;
}

/* a varint that must fit [lo, hi] after un-zigzagging (signed) or as it is */
static int64_t get_s(cursor *k, int64_t lo, int64_t hi)
{
    const int64_t v = unzz(get_var(k));
    return v < lo || v > hi ? (bad(k, "a signed field is out of its range"), 0) : v;
}

static uint64_t get_u(cursor *k, uint64_t hi)
{
    const uint64_t v = get_var(k);
    return v > hi ? (bad(k, "a field is out of its range"), 0) : v;
}

static unsigned get_byte(cursor *k)
{
    return k->p < k->end ? *k->p++ : (bad(k, "a record runs past the end of the chunk"), 0u);
}

static float get_f32(cursor *k)
{
    float f = 0;
    if (k->end - k->p < 4) return bad(k, "a record runs past the end of the chunk"), 0.0f;
    memcpy(&f, k->p, 4);
    k->p += 4;
    return f;
}

static void get_payload(const ks_kst2_ctx *c, cursor *k, ks_event *e)
{
    switch (e->kind) {
    case KS_EV_WORK: {
        const unsigned n = get_byte(k);
        if (n > KS_WORK_FIELDS) bad(k, "a work record has more than 8 fields");
        for (unsigned f = 0; f < n && f < KS_WORK_FIELDS; ++f) e->u.field[f] = (int32_t)get_s(k, INT32_MIN, INT32_MAX);
        return;
    }
    case KS_EV_READ:
    case KS_EV_WRITE: {
        ks_ev_access *a = &e->u.access;
        const uint64_t v = get_var(k);
        a->offset = unzz(v >> ACC_BITS);
        if (v & ACC_EXPLICIT) {
            a->plane = (int32_t)get_s(k, INT32_MIN, INT32_MAX);
            a->y = (int32_t)get_s(k, INT32_MIN, INT32_MAX);
            a->x = (int32_t)get_s(k, INT32_MIN, INT32_MAX);
        } else if (!derive(c, e->tensor, a->offset, &a->plane, &a->y, &a->x)) {
            bad(k, "an access leaves out (plane, y, x) where its offset does not give them");
        }
        if (k->end - k->p < 4) bad(k, "a record runs past the end of the chunk");
        else memcpy(&a->ivalue, k->p, 4), k->p += 4; /* bits, not a float: no NaN quieted */
        if (v & ACC_RES0) a->reserved[0] = (int32_t)get_s(k, INT32_MIN, INT32_MAX);
        if (v & ACC_RES1) a->reserved[1] = (int32_t)get_s(k, INT32_MIN, INT32_MAX);
        return;
    }
    case KS_EV_SAMPLE: {
        ks_ev_sample *s = &e->u.sample;
        s->plane = (int32_t)get_s(k, INT32_MIN, INT32_MAX);
        s->y = get_f32(k), s->x = get_f32(k);
        for (int i = 0; i < 4; ++i) s->w[i] = get_f32(k);
        s->value = get_f32(k);
        return;
    }
    case KS_EV_REGION: {
        ks_ev_region *r = &e->u.region;
        r->plane = (int32_t)get_s(k, INT32_MIN, INT32_MAX);
        r->y0 = get_f32(k), r->x0 = get_f32(k), r->y1 = get_f32(k), r->x1 = get_f32(k);
        r->rows = (uint16_t)get_u(k, UINT16_MAX);
        r->cols = (uint16_t)get_u(k, UINT16_MAX);
        return;
    }
    case KS_EV_BARRIER:
        e->u.barrier.line = (int32_t)get_s(k, INT32_MIN, INT32_MAX);
        e->u.barrier.phase = (uint32_t)get_u(k, UINT32_MAX);
        return;
    case KS_EV_WARP: {
        ks_ev_warp *w = &e->u.warp;
        w->line = (int32_t)get_s(k, INT32_MIN, INT32_MAX);
        w->mask = (uint32_t)get_u(k, UINT32_MAX);
        w->arrived = (uint32_t)get_u(k, UINT32_MAX);
        w->op = (uint8_t)get_byte(k);
        w->lane = (uint8_t)get_byte(k);
        w->value = get_var(k);
        return;
    }
    case KS_EV_FAULT:
        e->u.fault.line = (int32_t)get_s(k, INT32_MIN, INT32_MAX);
        e->u.fault.code = (uint32_t)get_u(k, UINT32_MAX);
        e->u.fault.address = get_var(k);
        return;
    }
}

/* One record after prev; 0 or -1 (k->why says why). */
static int get_record(const ks_kst2_ctx *c, cursor *k, const ks_event *prev, ks_event *e)
{
    const unsigned head = get_byte(k);
    if (k->why) return -1;
    if ((head & 15) == HEAD_RAW) {
        if (head != HEAD_RAW) return bad(k, "a raw record's head has other bits set");
        if (k->end - k->p < (ptrdiff_t)sizeof *e) return bad(k, "a raw record runs past the end of the chunk");
        memcpy(e, k->p, sizeof *e);
        k->p += sizeof *e;
        return 0;
    }
    if ((head & 15) < KS_EV_WORK || (head & 15) >= KS_EV_KINDS) return bad(k, "a record's kind is unknown");
    memset(e, 0, sizeof *e);
    e->kind = (uint8_t)(head & 15);
    e->site = (uint16_t)get_u(k, UINT16_MAX);
    e->flags = head & HEAD_FLAGS ? (uint8_t)get_byte(k) : 0;
    e->tensor = head & HEAD_TENSOR ? (uint8_t)get_byte(k) : site_tensor(c, e->site);
    e->tap = head & HEAD_TAP ? (uint16_t)get_u(k, UINT16_MAX) : 0;
    if (head & HEAD_SAME) {
        e->block = prev->block, e->thread = prev->thread, e->iter = prev->iter, e->index = prev->index;
        e->seq = prev->seq + 1u;
    } else {
        e->block = (uint32_t)((uint64_t)prev->block + (uint64_t)unzz(get_var(k)));
        e->thread = (uint32_t)((uint64_t)prev->thread + (uint64_t)unzz(get_var(k)));
        e->iter = (uint32_t)((uint64_t)prev->iter + (uint64_t)unzz(get_var(k)));
        e->index = (int64_t)((uint64_t)prev->index + (uint64_t)unzz(get_var(k)));
        e->seq = (uint32_t)get_u(k, UINT32_MAX);
    }
    get_payload(c, k, e);
    return k->why ? -1 : 0;
}

int ks_kst2_decode(const ks_kst2_ctx *c, const unsigned char *p, size_t len, ks_event *out, size_t n, size_t *bad_at,
                   const char **why)
{
    cursor k = {p, p + len, NULL};
    ks_event zero;
    memset(&zero, 0, sizeof zero);
    for (size_t i = 0; i < n; ++i) {
        const unsigned char *at = k.p;
        if (get_record(c, &k, i ? &out[i - 1] : &zero, &out[i])) {
            *bad_at = (size_t)(at - p), *why = k.why;
            return -1;
        }
    }
    if (k.p != k.end) {
        *bad_at = (size_t)(k.p - p), *why = "the chunk holds more bytes than its records";
        return -1;
    }
    return 0;
}

/* Whether put_record gives this event back bit for bit whatever its values, so that the
 * encoder need not decode it to know (most of a recorded launch's events; the decoding
 * was 15-25 % of encoding). A work record: every field a zigzag varint of an int32, the
 * header's deltas wrap in 64 bits. A read or write: the same header; the offset's varint
 * holds it shifted by ACC_BITS, exact for |offset| < 2^60 (this takes 2^59, with room to
 * spare; the rest are decoded back); (plane, y, x) explicit unless derive gives them
 * back; the value's 4 bytes copied; a reserved word explicit when non-zero. The union has
 * no bytes an access or a work record leaves out (32 bytes each). Other kinds are decoded
 * and compared (test_kst2 checks both ways agree). */
static int exact_by_form(const ks_event *e)
{
    _Static_assert(sizeof(ks_ev_access) == sizeof(((ks_event *)0)->u), "an access fills the union");
    _Static_assert(sizeof(int32_t) * KS_WORK_FIELDS == sizeof(((ks_event *)0)->u), "the fields fill the union");
    if (e->kind == KS_EV_WORK) return 1;
    if (e->kind != KS_EV_READ && e->kind != KS_EV_WRITE) return 0;
    const int64_t off = e->u.access.offset;
    return off < ((int64_t)1 << 59) && off > -((int64_t)1 << 59);
}

/* The longest compact record: head 1, site 3, flags 1, tensor 1, tap 3, the five ids 30
 * (block, thread, iter and seq 5 each, index 10), a work record's 8 fields 41: 80 bytes.
 * One longer than a raw record (1 + 64) is stored raw, so no record takes more than
 * KS_KST2_MAX_RECORD. */
enum { WORST_COMPACT = 96, MOST_COMPACT = 1 + (int)sizeof(ks_event) };

size_t ks_kst2_encode(const ks_kst2_ctx *c, const ks_event *ev, size_t n, unsigned char *out, ks_kst2_entry *entry)
{
    ks_event zero, back;
    memset(&zero, 0, sizeof zero);
    unsigned char *p = out, tmp[WORST_COMPACT];
    const size_t room = n * KS_KST2_MAX_RECORD; /* what out holds */
    entry->index_lo = entry->index_hi = n ? ev[0].index : 0;
    entry->raw = 0;
    for (size_t i = 0; i < n; ++i) {
        const ks_event *e = &ev[i], *prev = i ? &ev[i - 1] : &zero;
        if (e->index < entry->index_lo) entry->index_lo = e->index;
        if (e->index > entry->index_hi) entry->index_hi = e->index;
        int fits = e->kind >= KS_EV_WORK && e->kind < KS_EV_KINDS && !e->reserved;
        if (fits) {
            /* written in place where out has room for the longest, else aside and copied */
            unsigned char *at = (size_t)(p - out) + WORST_COMPACT <= room ? p : tmp;
            unsigned char *end = put_record(c, e, prev, at);
            const size_t len = (size_t)(end - at);
            if (len > MOST_COMPACT) fits = 0;
            else if (!exact_by_form(e)) {
                cursor k = {at, end, NULL};
                fits = !get_record(c, &k, prev, &back) && k.p == end && !memcmp(&back, e, sizeof back);
            }
            if (fits) {
                if (at == tmp) memcpy(p, tmp, len);
                p += len;
            }
        }
        if (!fits) {
            entry->raw++;
            *p++ = HEAD_RAW;
            memcpy(p, e, sizeof *e);
            p += sizeof *e;
        }
    }
    entry->length = (uint32_t)(p - out);
    return (size_t)(p - out);
}

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

void ks_kst2_entry_put(unsigned char *p, const ks_kst2_entry *e)
{
    put_le(p, e->offset, 8);
    put_le(p + 8, e->length, 4);
    put_le(p + 12, e->crc32, 4);
    put_le(p + 16, (uint64_t)e->index_lo, 8);
    put_le(p + 24, (uint64_t)e->index_hi, 8);
}

void ks_kst2_entry_get(const unsigned char *p, ks_kst2_entry *e)
{
    e->offset = get_le(p, 8);
    e->length = (uint32_t)get_le(p + 8, 4);
    e->crc32 = (uint32_t)get_le(p + 12, 4);
    e->index_lo = (int64_t)get_le(p + 16, 8);
    e->index_hi = (int64_t)get_le(p + 24, 8);
}
