/* libFuzzer: the .cu front end's text passes (kernels/cuda_c/cu_scan.c) on any text: the
 * kernel scan (names, parameters, namespaces, why a kernel cannot run) and the rewrite of
 * __shared__ declarations. This is what a student's puzzle stub and a user's .cu file
 * reach first, after the preprocessor. Properties: no signal and no sanitizer report; the
 * counts stay within their bounds; every name is terminated; the same text gives the
 * same answer twice. */
#include "../../kernels/cuda_c/cu_build.h"
#include "fz_util.h"

#define MAXK 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char text[1 << 16];
    static ks_cu_kernel k1[MAXK], k2[MAXK];
    if (size >= sizeof text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    const int n1 = ks_cu_scan_kernels(text, k1, MAXK), n2 = ks_cu_scan_kernels(text, k2, MAXK);
    if (n1 != n2 || n1 < 0 || n1 > MAXK) abort();
    for (int i = 0; i < n1; ++i) {
        if (!memchr(k1[i].name, 0, sizeof k1[i].name) || !memchr(k1[i].bad, 0, sizeof k1[i].bad) ||
            !memchr(k1[i].ns, 0, sizeof k1[i].ns))
            abort();
        if (k1[i].nparams < 0 || k1[i].nparams > KS_CU_MAX_PARAMS || strcmp(k1[i].name, k2[i].name)) abort();
        for (int p = 0; p < k1[i].nparams; ++p)
            if (!memchr(k1[i].params[p], 0, sizeof k1[i].params[p])) abort();
    }
    char dyn[32];
    ks_cu_sharr shared[KS_CU_MAX_SHARED];
    int nshared = -1;
    char *out = ks_cu_rewrite(text, dyn, sizeof dyn, shared, KS_CU_MAX_SHARED, &nshared);
    if (out) {
        if (nshared < 0 || nshared > KS_CU_MAX_SHARED || !memchr(dyn, 0, sizeof dyn)) abort();
        for (int i = 0; i < nshared; ++i)
            if (!memchr(shared[i].name, 0, sizeof shared[i].name)) abort();
        free(out);
    }
    return 0;
}
