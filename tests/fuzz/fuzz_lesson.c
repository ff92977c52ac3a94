/* libFuzzer: a lesson file through the parser, the session (the operator runs on the
 * simulator), the checker, the text player answering itself, and the slides.
 *
 * Harness limit, for speed: a session refuses more than 2^20 work items before it runs,
 * but a run just under that still takes a second or two under the sanitizers, so lessons
 * whose parameters hold a number above 64 (or a product above 4096) are skipped. */
#include <cJSON.h>

#include "../../kernels/core/ks_error.h"
#include "../../lessons/engine/ls_lesson.h"
#include "../../lessons/engine/ls_slides.h"
#include "fz_util.h"

/* 1 when every number under v is at most 64 and their product (of those >= 2) <= 4096. */
static int small_numbers(const cJSON *v, double *product)
{
    if (cJSON_IsNumber(v)) {
        double x = v->valuedouble;
        if (!(x >= -64 && x <= 64)) return 0;
        if (x >= 2) *product *= x;
        return *product <= 4096;
    }
    for (const cJSON *c = v ? v->child : NULL; c; c = c->next)
        if (!small_numbers(c, product)) return 0;
    return 1;
}

static int small_launch(const uint8_t *data, size_t size)
{
    cJSON *root = cJSON_ParseWithLength((const char *)data, size);
    if (!root) return 1; /* the parser's problem: nothing runs */
    double product = 1;
    int ok = small_numbers(cJSON_GetObjectItemCaseSensitive(root, "params"), &product);
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(root, "inputs");
    for (const cJSON *in = inputs ? inputs->child : NULL; in && ok; in = in->next) {
        double p = 1;
        ok = small_numbers(cJSON_GetObjectItemCaseSensitive(in, "size"), &p) &&
             small_numbers(cJSON_GetObjectItemCaseSensitive(in, "shape"), &p);
    }
    for (const char *const *k = (const char *const[]){"threads", "block_cap", NULL}; *k && ok; ++k) {
        double p = 1;
        ok = small_numbers(cJSON_GetObjectItemCaseSensitive(root, *k), &p);
    }
    cJSON_Delete(root);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ls_lesson L;
    static ls_session S;
    if (size > (1u << 16) || !small_launch(data, size)) return 0;
    const char *path = fz_file("lesson.json", data, size);
    ls_report rep = {NULL, path, 0, 0};
    if (ls_load(&L, path, &rep)) {
        ls_free(&L);
        return 0;
    }
    if (ls_session_open(&S, &L, &rep) == 0) {
        if (ls_check(&S, &rep) == 0) {
            static FILE *in;
            if (!in && !(in = fopen("/dev/null", "r"))) abort();
            ls_play_text(&S, in, fz_null(), 1, 0);
            vw_slide *slides = NULL;
            int n = ls_slides_make(&S, &slides);
            if (n > 0) ls_slides_free(slides, n);
        }
        ls_session_close(&S);
    }
    ls_free(&L);
    return 0;
}
