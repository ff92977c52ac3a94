/* perfetto.c - a trace's schedule as Chrome trace-event JSON (perfetto.h). */
#include "perfetto.h"

#include <stdio.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "ks_file.h"

/* s as the inside of a JSON string (quotes, backslashes and control characters escaped) */
static const char *json_text(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    for (; *s && k + 7 < n; ++s) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') buf[k++] = '\\', buf[k++] = (char)c;
        else if (c < 0x20) k += (size_t)snprintf(buf + k, n - k, "\\u%04x", c);
        else buf[k++] = (char)c;
    }
    buf[k] = 0;
    return buf;
}

/* appends text to the output; the first failure sticks */
static int put(ks_out_file *o, int rc, const char *text) { return rc ? rc : ks_out_write(o, text, strlen(text)); }

int ks_trace_export_perfetto(const ks_trace *tr, const char *path)
{
    const int t = ks_trace_tensor(tr, "schedule");
    if (t < 0 || tr->tensors[t].dtype != KS_I64 || tr->tensors[t].ndim != 2 || tr->tensors[t].shape[1] != 4)
        return ks_fail(KS_EINVAL, "%s has no schedule (record one: kscope run OP --trace FILE --schedule)", tr->path);
    const int64_t *s = tr->tensors[t].data, blocks = tr->tensors[t].shape[0];
    const int virtual_clock = strstr(tr->params, "\"virtual\"") != NULL;
    int64_t t0 = INT64_MAX;
    for (int64_t b = 0; b < blocks; ++b)
        if (s[4 * b] >= 0 && s[4 * b + 2] < t0) t0 = s[4 * b + 2];
    ks_out_file o;
    int rc = ks_out_open(&o, path);
    if (rc) return rc;
    char line[2048], op[200], dev[300];
    json_text(tr->op, op, sizeof op), json_text(tr->device, dev, sizeof dev);
    snprintf(line, sizeof line,
             "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"op\": \"%s\", \"device\": \"%s\", \"clock\": \"%s\"},\n"
             " \"traceEvents\": [\n  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, "
             "\"args\": {\"name\": \"%s %s: blocks on SMs\"}}",
             op, dev, virtual_clock ? "virtual (thread bodies run before; one simulated SM)" : "globaltimer (ns)", op,
             dev);
    rc = put(&o, rc, line);
    int seen[1024] = {0}; /* SM ids named so far (the simulator's -1 is track 0) */
    for (int64_t b = 0; b < blocks && !rc; ++b) {
        const int64_t *r = s + 4 * b;
        if (r[0] < 0) continue; /* a block that did not run (or was not recorded) */
        const int64_t sm = r[1] < 0 ? 0 : r[1];
        if (sm < 1024 && !seen[sm]) {
            seen[sm] = 1;
            snprintf(
                line, sizeof line,
                ",\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %lld, \"args\": {\"name\": \"%s %lld\"}}",
                (long long)sm, r[1] < 0 ? "simulator" : "SM", (long long)sm);
            rc = put(&o, rc, line);
        }
        /* microseconds: the unit of ts and dur; a virtual tick shows as one */
        const double scale = virtual_clock ? 1.0 : 1e-3;
        snprintf(line, sizeof line,
                 ",\n  {\"name\": \"block %lld\", \"cat\": \"block\", \"ph\": \"X\", \"pid\": 1, \"tid\": %lld, "
                 "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"block\": %lld, \"sm\": %lld}}",
                 /* in double: a crafted clock's differences would overflow int64 */
                 (long long)r[0], (long long)sm, ((double)r[2] - (double)t0) * scale,
                 ((double)r[3] - (double)r[2]) * scale, (long long)r[0], (long long)r[1]);
        rc = put(&o, rc, line);
    }
    rc = put(&o, rc, "\n]}\n");
    if (rc) {
        ks_out_abort(&o);
        return rc;
    }
    return ks_out_commit(&o);
}
