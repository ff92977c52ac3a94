/* kscope diff: two traces of the same work compared work item by work item, and a
 * trace's stored outputs against reference .npy files (trace/diff.h). */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "../trace/diff.h"
#include "../trace/npy.h"
#include "../trace/reads.h"
#include "../trace/step.h"
#include "cli.h"

#define MAX_AGAINST 8
#define COLUMN 58 /* width of the left column of a side-by-side listing */

static void usage(FILE *out)
{
    fprintf(out, "usage: kscope diff A.kst B.kst [--tol T] [--max N] [--summary] [--access-sets]\n"
                 "       kscope diff A.kst B.kst --reads-by OUTPUT|item [--reads-of T,T...] [--max N]\n"
                 "       kscope diff A.kst [B.kst] --against NAME=REF.npy [--against ...] [--tol T]\n\n"
                 "Compares two traces of the same work (the same sites and tensor shapes: the same\n"
                 "operator on the same sizes, in another launch, on another device, or a variant of\n"
                 "the kernel), aligned by work item index: every read, sample, write and region of\n"
                 "each work item, in order - offsets and coordinates exactly, values, sample\n"
                 "coordinates and weights within --tol (relative, default 1e-5). Prints how many work\n"
                 "items differ, then the first --max (default 3) of them: both index decompositions\n"
                 "side by side and the first differing event.\n\n"
                 "  --summary        events compared and differing per site\n"
                 "  --access-sets    compare each work item's reads and writes as a multiset (element, count,\n"
                 "                   value), not in order: two compilers order independent loads apart\n"
                 "                   (kscope run FILE.cu --device cuda against the simulator)\n"
                 "  --reads-by OUT   traces of different kinds (a recorded upstream kernel against an\n"
                 "                   operator of ours): for each element of tensor OUT, the elements\n"
                 "                   read to compute it (a work item's reads since its previous write\n"
                 "                   of OUT), with their counts; a sample counts as the corners it\n"
                 "                   reads. 'item' keys the reads by work item index instead. Values\n"
                 "                   are not compared. Tensors match by name and shape\n"
                 "  --reads-of T,..  only these tensors' reads (default: every tensor both name)\n"
                 "  --against N=F    the trace's stored tensor N (A's) against F (same shape; float32,\n"
                 "                   int32 or int64): the first element off by more than --tol, and\n"
                 "                   the work items that wrote it\n\n"
                 "exit: 0 everything matches, 1 something differs, 2 bad input (unreadable files,\n"
                 "traces of different work, a reference of another shape)\n");
}

/* Everything fprintf'd into *text by fn(out, ...), as one string (caller frees). */
static char *capture_work(const ks_trace *tr, const ks_event *e)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) return NULL;
    if (e) ks_step_print_work(m, tr, e);
    fclose(m);
    return text;
}

/* Two blocks of text side by side, line by line; a line longer than COLUMN continues on
 * the next rows of its own column, so the bar stays straight. */
static void side_by_side(const char *left, const char *right)
{
    const char *l = left ? left : "", *r = right ? right : "";
    while (*l == '\n') ++l;
    while (*r == '\n') ++r;
    while (*l || *r) {
        const char *le = strchr(l, '\n'), *re = strchr(r, '\n');
        int ln = le ? (int)(le - l) : (int)strlen(l), rn = re ? (int)(re - r) : (int)strlen(r);
        const char *lp = l, *rp = r;
        do { /* COLUMN characters of each side a row */
            const int lc = ln < COLUMN ? ln : COLUMN, rc = rn < COLUMN ? rn : COLUMN;
            printf("  %-*.*s | %.*s\n", COLUMN, lc, lp, rc, rp);
            lp += lc, ln -= lc, rp += rc, rn -= rc;
        } while (ln > 0 || rn > 0);
        l = le ? le + 1 : l + strlen(l);
        r = re ? re + 1 : r + strlen(r);
    }
}

static void print_item(const ks_diff *d, const char *na, const char *nb, int64_t index, uint64_t at)
{
    const ks_diff_item x = ks_diff_find(d, 0, index), y = ks_diff_find(d, 1, index);
    printf("\nwork item %lld: ", (long long)index);
    if (!x.n || !y.n) {
        printf("recorded in %s only\n", x.n ? na : nb);
    } else {
        printf("first difference at its event %llu\n", (unsigned long long)at);
    }
    char *lw = x.n ? capture_work(d->a, x.ev[0]->kind == KS_EV_WORK ? x.ev[0] : NULL) : NULL;
    char *rw = y.n ? capture_work(d->b, y.ev[0]->kind == KS_EV_WORK ? y.ev[0] : NULL) : NULL;
    printf("  %-*s | %s\n", COLUMN, na, nb);
    side_by_side(lw, rw);
    free(lw), free(rw);
    if (!x.n || !y.n) return;
    printf("  first differing event:\n");
    printf("    %s:", na);
    if (at < x.n) ks_step_print_event(stdout, d->a, x.ev[at]);
    else printf("  (no event: the work item ends here)\n");
    printf("    %s:", nb);
    if (at < y.n) ks_step_print_event(stdout, d->b, y.ev[at]);
    else printf("  (no event: the work item ends here)\n");
}

static double element(const ks_tensor *t, int64_t i) { return ks_tensor_value(t, i); }

/* A's tensor NAME against REF.npy: 0 equal, 1 differs, 2 bad input. */
static int against(const ks_trace *tr, const char *spec, double tol)
{
    char name[KS_NAME_LEN];
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof name || !eq[1])
        return ks_cli_error("diff", "--against takes NAME=REF.npy (got '%s')", spec);
    snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
    const int t = ks_trace_tensor(tr, name);
    if (t < 0) return ks_cli_error("diff", "--against %s: the trace has no tensor '%s'", name, name);
    ks_tensor ref;
    memset(&ref, 0, sizeof ref);
    if (ks_npy_read(eq + 1, &ref)) return ks_cli_error("diff", "%s", ks_error_message());
    const ks_tensor *x = &tr->tensors[t];
    char sx[96], sr[96];
    int same = x->ndim == ref.ndim;
    for (int k = 0; same && k < x->ndim; ++k) same = x->shape[k] == ref.shape[k];
    if (!same) {
        ks_tensor_free(&ref);
        return ks_cli_error("diff", "--against %s: the trace's %s is %s, %s is %s", name, name,
                            ks_shape_str(x->ndim, x->shape, sx, sizeof sx), eq + 1,
                            ks_shape_str(ref.ndim, ref.shape, sr, sizeof sr));
    }
    const int64_t n = ks_tensor_numel(x);
    int64_t wrong = 0, first = -1;
    for (int64_t i = 0; i < n; ++i) {
        const double a = element(x, i), b = element(&ref, i);
        if (a == b || (isnan(a) && isnan(b)) || fabs(a - b) <= tol * (1.0 + fabs(b))) continue;
        if (first < 0) first = i;
        wrong++;
    }
    if (!wrong) {
        printf("%s: equal to %s (%lld elements)\n", name, eq + 1, (long long)n);
        ks_tensor_free(&ref);
        return KS_EXIT_OK;
    }
    /* the element's coordinates, and who wrote it */
    char where[160];
    const int64_t w = x->ndim >= 1 ? x->shape[x->ndim - 1] : 1, h = x->ndim >= 2 ? x->shape[x->ndim - 2] : 1;
    ks_format_element(tr, t, first / (w * h), first / w % h, first % w, where, sizeof where);
    printf("%s: %lld of %lld elements differ from %s; the first is %s = %.9g, reference %.9g\n", name, (long long)wrong,
           (long long)n, eq + 1, where, element(x, first), element(&ref, first));
    int writers = 0;
    int64_t writer = -1;
    for (uint64_t e = 0; e < tr->nevents; ++e) {
        const ks_event *ev = &tr->events[e];
        if (ev->kind != KS_EV_WRITE || ev->tensor != t || ev->u.access.offset != first) continue;
        if (writer < 0) writer = ev->index;
        if (writers++ < 5) {
            char v[32];
            ks_format_real(v, sizeof v, ks_access_value(&ev->u.access, ev->flags));
            printf("  written by work item %lld (block %u, thread %u, tap %u): %s%s\n", (long long)ev->index, ev->block,
                   ev->thread, ev->tap, v, ev->flags & KS_FLAG_ATOMIC ? " (atomicAdd)" : "");
        }
    }
    if (!writers) printf("  no recorded event writes it (never written, or its writer was not recorded)\n");
    else if (writers > 5) printf("  ... %d writes in all\n", writers);
    if (writer >= 0) printf("  kscope step %s --index %lld shows the first of them\n", tr->path, (long long)writer);
    ks_tensor_free(&ref);
    return KS_EXIT_VIOLATIONS;
}

/* --reads-by: 0 every key's reads equal, 1 some differ, 2 bad input */
static int reads_diff(const ks_trace *a, const ks_trace *b, const char *const files[2], const char *by,
                      const char *of_spec, int64_t max_keys)
{
    char buf[KS_MAX_TENSORS * KS_NAME_LEN], *save = NULL;
    const char *of[KS_MAX_TENSORS];
    int nof = 0;
    if (of_spec) {
        if (strlen(of_spec) >= sizeof buf) return ks_cli_error("diff", "--reads-of: too long");
        strcpy(buf, of_spec);
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (nof == KS_MAX_TENSORS) return ks_cli_error("diff", "--reads-of: at most %d tensors", KS_MAX_TENSORS);
            of[nof++] = tok;
        }
        if (!nof) return ks_cli_error("diff", "--reads-of takes tensor names, comma separated");
    }
    ks_reads r;
    if (ks_reads_compare(&r, a, b, strcmp(by, "item") ? by : NULL, of, nof))
        return ks_cli_error("diff", "%s", ks_error_message());
    printf("reads of");
    for (int k = 0; k < r.ntensors; ++k) printf("%s %s", k ? "," : "", r.names[k]);
    printf(" by %s%s: %llu of %llu differ", r.by[0] >= 0 ? "element of " : "", r.by[0] >= 0 ? by : "work item",
           (unsigned long long)r.differing, (unsigned long long)(r.compared + r.only[0] + r.only[1]));
    if (r.only[0] || r.only[1])
        printf(" (%llu with reads in %s only, %llu in %s only)", (unsigned long long)r.only[0], files[0],
               (unsigned long long)r.only[1], files[1]);
    printf("\n  %s: %llu reads; %s: %llu reads\n", files[0], (unsigned long long)r.n[0], files[1],
           (unsigned long long)r.n[1]);
    for (int s = 0; s < 2; ++s)
        if (r.unattributed[s])
            printf("  %s: %llu reads after a work item's last write of %s, not counted\n", files[s],
                   (unsigned long long)r.unattributed[s], by);
    for (int k = 0; k < r.nfirst && k < max_keys; ++k)
        ks_reads_print_key(stdout, &r, a, b, files[0], files[1], r.first[k], 6);
    if (r.differing > (uint64_t)max_keys && max_keys > 0)
        printf("\n... %llu more (--max N lists more)\n", (unsigned long long)(r.differing - (uint64_t)max_keys));
    const int rc = r.differing ? KS_EXIT_VIOLATIONS : KS_EXIT_OK;
    ks_reads_free(&r);
    return rc;
}

int ks_cmd_diff(int argc, char **argv)
{
    static ks_trace a, b;
    const char *files[2] = {NULL, NULL}, *against_spec[MAX_AGAINST];
    const char *reads_by = NULL, *reads_of = NULL;
    int nfiles = 0, nagainst = 0, summary = 0, sets = 0;
    double tol = 1e-5;
    int64_t max_items = 3;
    for (int i = 1; i < argc; ++i) {
        const char *v = NULL;
        int m;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return KS_EXIT_OK;
        } else if (!strcmp(argv[i], "--summary")) {
            summary = 1;
        } else if (!strcmp(argv[i], "--access-sets")) {
            sets = 1;
        } else if ((m = ks_flag(argc, argv, &i, "reads-by", &v))) {
            if (m < 0 || !*v) return ks_cli_error("diff", "--reads-by takes a tensor name or 'item'");
            reads_by = v;
        } else if ((m = ks_flag(argc, argv, &i, "reads-of", &v))) {
            if (m < 0 || !*v) return ks_cli_error("diff", "--reads-of takes tensor names, comma separated");
            reads_of = v;
        } else if ((m = ks_flag(argc, argv, &i, "tol", &v))) {
            char *end;
            if (m < 0 || !(tol = strtod(v, &end), *end == '\0' && end != v && tol >= 0 && isfinite(tol)))
                return ks_cli_error("diff", "--tol takes a number >= 0 (got '%s')", v ? v : "");
        } else if ((m = ks_flag(argc, argv, &i, "max", &v))) {
            if (m < 0 || ks_parse_i64(v, &max_items) || max_items < 0)
                return ks_cli_error("diff", "--max takes a count >= 0 (got '%s')", v ? v : "");
        } else if ((m = ks_flag(argc, argv, &i, "against", &v))) {
            if (m < 0) return ks_cli_error("diff", "--against needs NAME=REF.npy");
            if (nagainst == MAX_AGAINST) return ks_cli_error("diff", "at most %d --against", MAX_AGAINST);
            against_spec[nagainst++] = v;
        } else if (argv[i][0] == '-') {
            return ks_cli_error("diff", "unknown flag '%s' (kscope diff --help)", argv[i]);
        } else if (nfiles < 2) {
            files[nfiles++] = argv[i];
        } else {
            return ks_cli_error("diff", "unexpected argument '%s' (two traces at most)", argv[i]);
        }
    }
    if (nfiles == 0 || (nfiles == 1 && !nagainst))
        return ks_cli_error("diff", "needs two traces, or a trace and --against (kscope diff --help)");
    if (reads_of && !reads_by) return ks_cli_error("diff", "--reads-of goes with --reads-by");
    if (reads_by && (nfiles != 2 || nagainst || sets))
        return ks_cli_error("diff", "--reads-by compares two traces, without --against or --access-sets");
    if (ks_trace_open(files[0], &a)) return ks_cli_error("diff", "%s", ks_error_message());
    if (reads_by) {
        int rc;
        if (ks_trace_open(files[1], &b)) {
            rc = ks_cli_error("diff", "%s", ks_error_message());
        } else {
            rc = reads_diff(&a, &b, files, reads_by, reads_of, max_items);
            ks_trace_close(&b);
        }
        ks_trace_close(&a);
        return rc;
    }
    int rc = KS_EXIT_OK;
    for (int k = 0; k < nagainst && rc != KS_EXIT_ERROR; ++k) {
        const int r = against(&a, against_spec[k], tol);
        if (r > rc) rc = r;
    }
    if (nfiles == 2 && rc != KS_EXIT_ERROR) {
        ks_diff d;
        if (ks_trace_open(files[1], &b)) {
            rc = ks_cli_error("diff", "%s", ks_error_message());
        } else if (ks_diff_compatible(&a, &b)) {
            rc = ks_cli_error("diff", "%s and %s: %s", files[0], files[1], ks_error_message());
        } else if ((sets ? ks_diff_run_sets(&d, &a, &b, tol) : ks_diff_run(&d, &a, &b, tol))) {
            rc = ks_cli_error("diff", "%s", ks_error_message());
        } else {
            printf("%s and %s: %llu of %llu work items differ", files[0], files[1], (unsigned long long)d.differing,
                   (unsigned long long)(d.compared + d.only[0] + d.only[1]));
            if (d.only[0] || d.only[1])
                printf(" (%llu recorded in %s only, %llu in %s only)", (unsigned long long)d.only[0], files[0],
                       (unsigned long long)d.only[1], files[1]);
            printf("\n");
            if (summary) {
                printf("\n  %-32s %12s %12s\n", "site", "events", "differing");
                for (int s = 0; s < a.nsites; ++s)
                    printf("  %-32s %12llu %12llu\n", a.sites[s].name, (unsigned long long)d.site_events[s],
                           (unsigned long long)d.site_differing[s]);
            }
            for (int k = 0; k < d.nfirst && k < max_items; ++k)
                print_item(&d, files[0], files[1], d.first[k], d.first_event[k]);
            if (d.differing > (uint64_t)max_items && max_items > 0)
                printf("\n... %llu more (--max N lists more)\n",
                       (unsigned long long)(d.differing - (uint64_t)max_items));
            if (d.differing && rc == KS_EXIT_OK) rc = KS_EXIT_VIOLATIONS;
            ks_diff_free(&d);
        }
        ks_trace_close(&b);
    }
    ks_trace_close(&a);
    return rc;
}
