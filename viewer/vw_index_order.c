/* vw_index_order.c - the thread-major and iteration-major orders over the work items
 * (see vw_index.h). An order's key of an item is (a, b, c), ties by item id:
 *   thread-major:    (global thread, iteration, index)
 *   iteration-major: (iteration, global thread, index)
 * so every item has one rank, found again by a binary search over ord (no inverse). */
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "vw_index_int.h"

typedef struct order_key {
    int64_t a, b, c;
    uint32_t id;
} order_key;

static order_key key_of(const vw_index *idx, vw_order which, uint32_t i)
{
    const vw_item *it = &idx->items[i];
    const int64_t g = vw_gthread(idx->tr, it->block, it->thread);
    order_key k = {which == VW_ORDER_THREAD ? g : it->iter, which == VW_ORDER_THREAD ? it->iter : g, it->index, i};
    return k;
}

static int by_order_key(const void *pa, const void *pb)
{
    const order_key *x = pa, *y = pb;
    if (x->a != y->a) return x->a < y->a ? -1 : 1;
    if (x->b != y->b) return x->b < y->b ? -1 : 1;
    if (x->c != y->c) return x->c < y->c ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static int cmp_items(const vw_index *idx, vw_order which, uint32_t x, uint32_t y)
{
    const order_key p = key_of(idx, which, x), q = key_of(idx, which, y);
    return by_order_key(&p, &q);
}

uint32_t vw_order_rank(const vw_index *idx, vw_order o, uint32_t item)
{
    if (o <= VW_ORDER_RECORDED || o >= VW_NORDERS || !idx->orders[o].built || item >= idx->nitems) return VW_NONE;
    const uint32_t *ord = idx->orders[o].ord;
    if (!ord) return item;
    uint32_t lo = 0, hi = idx->nitems;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (cmp_items(idx, o, ord[mid], item) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Items stably by their first key into ord, when its range is below n values. Returns
 * 1 when sorted, 0 when the range is wider, -1 when out of memory. */
static int counting_sort(const vw_index *idx, vw_order which, uint32_t *ord)
{
    const uint32_t n = idx->nitems;
    int64_t lo = key_of(idx, which, 0).a, hi = lo;
    for (uint32_t i = 1; i < n; ++i) {
        const int64_t a = key_of(idx, which, i).a;
        lo = a < lo ? a : lo, hi = a > hi ? a : hi;
    }
    if ((uint64_t)(hi - lo) >= n) return 0;
    const uint32_t m = (uint32_t)(hi - lo) + 1;
    uint32_t *count = calloc(m, sizeof *count);
    if (!count) return -1;
    for (uint32_t i = 0; i < n; ++i) count[key_of(idx, which, i).a - lo]++;
    for (uint32_t v = 0, at = 0; v < m; ++v) {
        const uint32_t c = count[v];
        count[v] = at, at += c;
    }
    for (uint32_t i = 0; i < n; ++i) ord[count[key_of(idx, which, i).a - lo]++] = i;
    free(count);
    return 1;
}

static int build_order(vw_index *idx, vw_order which)
{
    vw_item_order *o = &idx->orders[which];
    const uint32_t n = idx->nitems;
    /* items come sorted by index: the iteration-major keys of a grid-stride loop are in
     * order already (no ord), and the thread-major ones are once stably sorted by thread
     * (a counting sort). Either is checked against the full key, else the keys are
     * sorted (32 bytes an item of scratch, only then). */
    int done = 1;
    for (uint32_t i = 1; i < n && done; ++i) done = cmp_items(idx, which, i - 1, i) < 0;
    if (!done) {
        o->ord = malloc((size_t)n * sizeof *o->ord);
        if (!o->ord) return ks_fail(KS_ENOMEM, "out of memory for the replay orders");
        int rc = counting_sort(idx, which, o->ord);
        if (rc < 0) return ks_fail(KS_ENOMEM, "out of memory for the replay orders");
        for (uint32_t r = 1; r < n && rc; ++r) rc = cmp_items(idx, which, o->ord[r - 1], o->ord[r]) < 0;
        if (!rc) {
            order_key *keys = malloc((size_t)n * sizeof *keys);
            if (!keys) return ks_fail(KS_ENOMEM, "out of memory for the replay orders");
            for (uint32_t i = 0; i < n; ++i) keys[i] = key_of(idx, which, i);
            qsort(keys, n, sizeof *keys, by_order_key);
            for (uint32_t r = 0; r < n; ++r) o->ord[r] = keys[r].id;
            free(keys);
        }
    }
    o->built = 1;
    /* the items' own order covering every event in file order: positions are event ids */
    if (!o->ord && !idx->ev_perm && !idx->by_start && !idx->orphans) {
        o->by_event = 1;
        return KS_OK;
    }
    o->cum = malloc(((size_t)n + 1) * sizeof *o->cum);
    if (!o->cum) return ks_fail(KS_ENOMEM, "out of memory for the replay orders");
    o->cum[0] = 0;
    for (uint32_t r = 0; r < n; ++r) o->cum[r + 1] = o->cum[r] + idx->items[o->ord ? o->ord[r] : r].count;
    return KS_OK;
}

int vw_orders_build(vw_index *idx)
{
    int rc = build_order(idx, VW_ORDER_THREAD);
    return rc ? rc : build_order(idx, VW_ORDER_ITER);
}
