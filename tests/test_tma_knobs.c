/* The streamed CUDA kernels' knobs (kernels/cuda/tma_knobs.h, HSDR_TMA): what the parser takes, every bound, and that
 * each refusal names the text, the field and its offset, and leaves the defaults; the environment is read once. No
 * device needed. */
#include <stdlib.h>
#include <string.h>

#include "../kernels/cuda/tma_knobs.h"
#include "testing.h"

static void accepts(const char *text, int s, int r, int t, int c, int e)
{
    hsdr_tma_knobs k;
    char err[256] = "";
    CHECK(hsdr_tma_knobs_parse(text, &k, err, sizeof err) == 0, "'%s' refused: %s", text ? text : "(null)", err);
    CHECK(k.stages == s && k.rows_per_thread == r && k.threads == t && k.ctas_per_sm == c && k.early == e,
          "'%s' -> %d,%d,%d,%d,%d; want %d,%d,%d,%d,%d", text ? text : "(null)", k.stages, k.rows_per_thread,
          k.threads, k.ctas_per_sm, k.early, s, r, t, c, e);
}

static void refuses(const char *text, int field, int offset)
{
    hsdr_tma_knobs k;
    char err[256] = "", want[64];
    CHECK(hsdr_tma_knobs_parse(text, &k, err, sizeof err) == -1, "'%s' accepted", text);
    const hsdr_tma_knobs d = hsdr_tma_knobs_default();
    CHECK(memcmp(&k, &d, sizeof k) == 0, "'%s': refused but the knobs are not the defaults", text);
    CHECK(strstr(err, text) != NULL, "'%s': the message does not name the text: %s", text, err);
    snprintf(want, sizeof want, "field %d ", field);
    CHECK(strstr(err, want) != NULL, "'%s': the message does not name field %d: %s", text, field, err);
    snprintf(want, sizeof want, "at offset %d:", offset);
    CHECK(strstr(err, want) != NULL, "'%s': the message does not give offset %d: %s", text, offset, err);
}

/* hsdr_tma_knobs_of reads HSDR_TMA once: a later change of the environment does not reach the launches. */
static void env_read_once(void)
{
    hsdr_tma_knobs k;
    char err[256] = "";
    setenv("HSDR_TMA", "3,1,64,2", 1);
    CHECK(hsdr_tma_knobs_of(&k, err, sizeof err) == 0, "HSDR_TMA=3,1,64,2 refused: %s", err);
    CHECK(k.stages == 3 && k.rows_per_thread == 1 && k.threads == 64 && k.ctas_per_sm == 2,
          "HSDR_TMA=3,1,64,2 -> %d,%d,%d,%d", k.stages, k.rows_per_thread, k.threads, k.ctas_per_sm);
    setenv("HSDR_TMA", "9", 1);
    CHECK(hsdr_tma_knobs_of(&k, NULL, 0) == 0 && k.stages == 3, "the knobs changed after the first read");
    unsetenv("HSDR_TMA");
}

int main(void)
{
    env_read_once();
    const hsdr_tma_knobs d = hsdr_tma_knobs_default();
    accepts(NULL, d.stages, d.rows_per_thread, d.threads, d.ctas_per_sm, d.early);
    accepts("", d.stages, d.rows_per_thread, d.threads, d.ctas_per_sm, d.early);
    accepts("4,2,256", 4, 2, 256, d.ctas_per_sm, d.early);
    accepts("4,2,256,3", 4, 2, 256, 3, d.early);
    accepts("1,1,32,0", 1, 1, 32, 0, d.early);
    accepts("8,8,512,32", 8, 8, 512, 32, d.early);
    accepts("4,2,256,0,0", 4, 2, 256, 0, 0);
    accepts("4,2,256,0,1", 4, 2, 256, 0, 1);
    refuses("0,1,256", 1, 0);
    refuses("9,1,256", 1, 0);
    refuses("x", 1, 0);
    refuses("4,0,256", 2, 2);
    refuses("4,9,256", 2, 2);
    refuses("4,2", 2, 2);       /* the third field is required */
    refuses("4,2,31", 3, 4);
    refuses("4,2,513", 3, 4);
    refuses("4,2,256,", 4, 8);  /* a comma promises a fourth field */
    refuses("4,2,256,33", 4, 8);
    refuses("4,2,256,-1", 4, 8);
    refuses("4,2,256,1,", 5, 10); /* and a fifth */
    refuses("4,2,256,1,2", 5, 10);
    refuses("4,2,256,1,-1", 5, 10);
    refuses("4,2,256,1,0,1", 5, 10); /* nothing after the fifth */
    refuses("4, 2,256", 2, 2);
    refuses("4,+2,256", 2, 2);
    refuses("4,2,256x", 3, 4);
    refuses("99999999999999999999,2,256", 1, 0);
    hsdr_tma_knobs k;
    CHECK(hsdr_tma_knobs_parse("9", &k, NULL, 0) == -1, "a refusal without an error buffer");
    return test_finish("test_tma_knobs");
}
