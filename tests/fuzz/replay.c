/* Corpus replay without libFuzzer: runs a fuzz target's LLVMFuzzerTestOneInput once on every file given, or on every
 * file of every directory given (sorted by name), so the committed corpus -- seeds and the inputs of every bug the
 * fuzzers found -- runs in the normal ctest suite with any compiler. An input that breaks an invariant aborts with
 * its path printed first. Usage: fuzz_NAME_replay PATH... */
#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            uint8_t *grown = realloc(buf, cap *= 2);
            if (!grown)
                free(buf);
            buf = grown;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        fprintf(stderr, "%s: %s\n", path, buf ? "read error" : "out of memory");
        free(buf);
        return -1;
    }
    fprintf(stderr, "replay %s (%zu bytes)\n", path, n); /* names the input before a finding aborts */
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of dir, in name order; *count is incremented per input. */
static int replay_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    bool listed = true;
    for (struct dirent *e; listed && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            char **grown = realloc(names, (cap ? 2 * cap : 64) * sizeof *names);
            listed = grown != NULL;
            if (!listed)
                break;
            names = grown;
            cap = cap ? 2 * cap : 64;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        listed = (names[n] = malloc(len)) != NULL;
        if (listed)
            snprintf(names[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (!listed)
        fprintf(stderr, "%s: out of memory listing the directory\n", dir);
    if (n)
        qsort(names, n, sizeof *names, cmp_name);
    int rc = listed ? 0 : -1;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (rc == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            rc = replay_file(names[i]);
            ++*count;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE_OR_DIRECTORY...\n", argv[0]);
        return 2;
    }
    int count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 2;
        }
        if (S_ISDIR(st.st_mode) ? replay_dir(argv[i], &count) : (count++, replay_file(argv[i])))
            return 2;
    }
    if (count == 0) {
        fprintf(stderr, "no inputs: an empty corpus tests nothing\n");
        return 2;
    }
    printf("%d inputs replayed\n", count);
    return 0;
}
