/* kscope memory: each memory site's warp requests, 32-byte sectors and efficiency, from a
 * trace (trace/memory.h). */
#include <stdio.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "../trace/memory.h"
#include "cli.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: kscope memory FILE.kst [--site NAME] [--worst N] [--json]\n\n"
            "What the trace's memory accesses cost: each read, sample and write site's warp\n"
            "requests (the accesses of one warp - 32 threads of a block - at one site, iteration\n"
            "and tap: one memory instruction; a bilinear sample is one request per corner), the\n"
            "distinct 32-byte sectors they touch, the ideal (distinct bytes / 32, rounded up)\n"
            "and the efficiency ideal / sectors (1: perfectly coalesced). The simulator's and\n"
            "the GPU's traces of one launch give the same numbers. A filtered trace counts the\n"
            "work items it recorded.\n\n"
            "  --site NAME  only that site\n"
            "  --worst N    list each site's N costliest requests (default 3, at most %d)\n"
            "  --json       the numbers as JSON, for scripts\n",
            KS_MEM_WORST);
}

static void print_json(const ks_trace *tr, const ks_mem_report *rep, int worst)
{
    printf("{\"trace\": \"%s\", \"op\": \"%s\", \"threads_per_block\": %d, \"sites\": [", tr->path, tr->op,
           tr->threads);
    for (int i = 0; i < rep->nsites; ++i) {
        const ks_mem_site *s = &rep->sites[i];
        const ks_site *d = &tr->sites[s->site];
        printf("%s\n  {\"name\": \"%s\", \"kind\": \"%s\", \"tensor\": \"%s\", \"atomic\": %s, \"requests\": %llu, "
               "\"accesses\": %llu, \"sectors\": %llu, \"ideal_sectors\": %llu, \"lines\": %llu, \"efficiency\": %.6f, "
               "\"worst\": [",
               i ? "," : "", d->name, ks_event_kind_name(d->kind), tr->tensors[d->tensor].name,
               s->atomic ? "true" : "false", (unsigned long long)s->requests, (unsigned long long)s->accesses,
               (unsigned long long)s->sectors, (unsigned long long)s->ideal, (unsigned long long)s->lines,
               s->sectors ? (double)s->ideal / (double)s->sectors : 1.0);
        for (int w = 0; w < s->nworst && w < worst; ++w) {
            const ks_mem_request *r = &s->worst[w];
            printf("%s{\"block\": %u, \"warp\": %u, \"iter\": %u, \"tap\": %u, \"corner\": %u, \"lanes\": %u, "
                   "\"sectors\": %u, \"ideal\": %u}",
                   w ? ", " : "", r->block, r->warp, r->iter, r->tap, r->corner, r->lanes, r->sectors, r->ideal);
        }
        printf("]}");
    }
    printf("\n]}\n");
}

static void print_table(const ks_trace *tr, const ks_mem_report *rep, int worst)
{
    printf("%s: %s on %s, %lld block(s) x %d threads (warps of 32 threads)\n\n", tr->path, tr->op, tr->device,
           (long long)tr->blocks, tr->threads);
    printf("  %-30s %-6s %10s %9s %10s %10s %8s %10s\n", "site", "kind", "requests", "lanes/req", "sectors", "ideal",
           "sec/req", "efficiency");
    for (int i = 0; i < rep->nsites; ++i) {
        const ks_mem_site *s = &rep->sites[i];
        const ks_site *d = &tr->sites[s->site];
        char kind[16];
        snprintf(kind, sizeof kind, "%s", s->atomic ? "atomic" : ks_event_kind_name(d->kind));
        printf("  %-30s %-6s %10llu %9.1f %10llu %10llu %8.2f %9.0f%%\n", d->name, kind,
               (unsigned long long)s->requests, (double)s->accesses / (double)s->requests,
               (unsigned long long)s->sectors, (unsigned long long)s->ideal, (double)s->sectors / (double)s->requests,
               100.0 * (double)s->ideal / (double)s->sectors);
    }
    for (int i = 0; i < rep->nsites && worst > 0; ++i) {
        const ks_mem_site *s = &rep->sites[i];
        printf("\n  %s: the costliest requests\n", tr->sites[s->site].name);
        for (int w = 0; w < s->nworst && w < worst; ++w) {
            const ks_mem_request *r = &s->worst[w];
            printf("    block %u warp %u (threads %u..%u) iteration %u tap %u%s: %u lanes, %u sectors (ideal %u)\n",
                   r->block, r->warp, r->warp * 32, r->warp * 32 + 31, r->iter, r->tap,
                   tr->sites[s->site].kind == KS_EV_SAMPLE
                       ? (const char *[]){" corner 00", " corner 01", " corner 10", " corner 11"}[r->corner]
                       : "",
                   r->lanes, r->sectors, r->ideal);
        }
    }
}

int ks_cmd_memory(int argc, char **argv)
{
    static ks_trace tr;
    static ks_mem_report rep;
    const char *file = NULL, *site = NULL;
    int json = 0;
    int64_t worst = 3;
    for (int i = 1; i < argc; ++i) {
        const char *v = NULL;
        int m;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return KS_EXIT_OK;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if ((m = ks_flag(argc, argv, &i, "site", &v))) {
            if (m < 0) return ks_cli_error("memory", "--site needs a site name (kscope info lists them)");
            site = v;
        } else if ((m = ks_flag(argc, argv, &i, "worst", &v))) {
            if (m < 0 || ks_parse_i64(v, &worst) || worst < 0 || worst > KS_MEM_WORST)
                return ks_cli_error("memory", "--worst takes 0..%d (got '%s')", KS_MEM_WORST, v ? v : "");
        } else if (argv[i][0] == '-') {
            return ks_cli_error("memory", "unknown flag '%s' (kscope memory --help)", argv[i]);
        } else if (!file) {
            file = argv[i];
        } else {
            return ks_cli_error("memory", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!file) return ks_cli_error("memory", "needs a trace file (kscope memory --help)");
    if (ks_trace_open(file, &tr)) return ks_cli_error("memory", "%s", ks_error_message());
    int rc = ks_memory_analyze(&tr, &rep);
    if (rc) {
        ks_trace_close(&tr);
        return ks_cli_error("memory", "%s", ks_error_message());
    }
    if (site) { /* keep the one site asked for */
        int keep = -1;
        for (int i = 0; i < rep.nsites; ++i)
            if (!strcmp(tr.sites[rep.sites[i].site].name, site)) keep = i;
        if (keep < 0) {
            ks_trace_close(&tr);
            return ks_cli_error("memory", "no memory site '%s' in %s (kscope info lists the sites)", site, file);
        }
        rep.sites[0] = rep.sites[keep], rep.nsites = 1;
    }
    if (json) print_json(&tr, &rep, (int)worst);
    else print_table(&tr, &rep, (int)worst);
    ks_trace_close(&tr);
    return KS_EXIT_OK;
}
