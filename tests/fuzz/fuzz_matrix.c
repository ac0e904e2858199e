/* Fuzz target: the experiment matrix loader (harness/matrix_load.c: libyaml events -> positioned tree -> spec)
 * and the expansion of what it accepts (what `hsdr run --dry-run` does with a matrix file). Any input either loads
 * and expands, or is refused with a message naming the input ("fuzz.yaml:..."); never a crash, an out-of-bounds
 * access, undefined behaviour, a leak or an abort. The environment is fixed so that a finding replays anywhere: the
 * real registry (variant names and selectors of real matrices match) and 2 logical CPUs. */
#include <string.h>

#include "fuzz.h"
#include "matrix.h"

#define NAME "fuzz.yaml"
#define FUZZ_MAX_POINTS 20000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const hsdr_matrix_env env = {.registry = hsdr_registry, .registry_count = hsdr_registry_count, .logical_cpus = 2};
    hsdr_matrix_spec *spec = NULL;
    char err[1024] = "";
    if (hsdr_matrix_load_text(NAME, (const char *)data, size, &env, &spec, err, sizeof err) != 0) {
        FUZZ_REQUIRE(!spec, "refused, but a spec was returned");
        FUZZ_REQUIRE(strncmp(err, NAME ":", strlen(NAME) + 1) == 0, "refusal does not name the input: '%s'", err);
        return 0;
    }
    /* Expansion work is linear in the points, and small matrices reach all of its code: between this bound and the
     * harness's limit the target stops here, so that inputs run in milliseconds; above the limit expand must refuse
     * (cheaply, before generating anything). */
    const double points = hsdr_matrix_points(spec);
    if (points > FUZZ_MAX_POINTS && points <= HSDR_MATRIX_MAX_POINTS) {
        hsdr_matrix_spec_free(spec);
        return 0;
    }
    hsdr_matrix m;
    if (hsdr_matrix_expand(spec, &m, err, sizeof err) != 0) {
        FUZZ_REQUIRE(strncmp(err, NAME ":", strlen(NAME) + 1) == 0, "expansion refusal does not name the input: '%s'",
                     err);
        FUZZ_REQUIRE(m.ncases == 0 && m.nskipped == 0, "expansion refused but left cases");
        FUZZ_REQUIRE(points > HSDR_MATRIX_MAX_POINTS || strstr(err, "axes.K: missing"), "unexpected refusal: %s", err);
        hsdr_matrix_spec_free(spec);
        return 0;
    }
    /* every case is one the harness can build inputs for */
    for (size_t i = 0; i < m.ncases; i++) {
        const hsdr_case *c = &m.cases[i];
        char key[256];
        hsdr_case_key(c, key, sizeof key);
        FUZZ_REQUIRE(c->variant && c->K >= 128 && c->K % 128 == 0 && c->N >= 1 && c->R >= 1 && c->R <= c->N &&
                         c->threads >= 1 && c->threads <= 2,
                     "case %zu out of range: %s", i, key);
    }
    FUZZ_REQUIRE(points <= HSDR_MATRIX_MAX_POINTS, "%.0f points expanded", points);
    FUZZ_REQUIRE((double)(m.ncases + m.nskipped) <= points, "%zu cases + %zu skipped > %.0f points", m.ncases,
                 m.nskipped, points);
    for (size_t i = 0; i < m.nskipped; i++)
        FUZZ_REQUIRE(m.skipped[i].key[0] && m.skipped[i].reason[0], "skipped case %zu without key or reason", i);
    hsdr_matrix_free(&m);
    hsdr_matrix_spec_free(spec);
    return 0;
}
