/* The CLI's one table of commands and the getopt_long conventions (cli.h). Depends on libc only. */
#include "cli.h"

#include <string.h>

#include "util.h"

#ifndef HSDR_VERSION
#define HSDR_VERSION "dev"
#endif

const hsdr_command hsdr_commands[] = {
    {"run",
     "run [MATRIX] [--filter GLOB] [--out DIR] [--shard i/n] [--set AXIS=VALUES]... "
     "[--stages both|alone|ablation|none] [--gguf FILE [--activations DIR [--token T]]] [--resume] [--dry-run] "
     "[--quiet]",
     "expand the experiment matrix (default matrix.yaml), validate every case against the reference,\n"
     "time it hot or cold with per-stage attribution; JSON Lines + CSV under DIR (results/latest).\n"
     "The cases of one configuration (inputs, threads, mode) run in rounds, each variant beside its\n"
     "backend's production variant (paired ratios), over `visits` visits spread across the run.\n"
     "SIGINT/SIGTERM: stop at the end of the current pass; DIR/results.jsonl + .csv hold the finished\n"
     "rows, each marked \"partial\" (exit 130/143). --resume (same arguments): keep the rows finished\n"
     "in DIR, refuse rows of other cases, seeds or settings, run only the missing cases\n",
     "  MATRIX              the matrix file (default matrix.yaml)\n"
     "  --filter GLOB       keep the cases whose key matches GLOB (comma-separated: any of them)\n"
     "  --out DIR           the results directory (default results/latest)\n"
     "  --shard i/n         keep case j of the expanded order when j mod n = i\n"
     "  --set AXIS=VALUES   override an axis or setting of the matrix (repeatable)\n"
     "  --stages S          per-stage timing: both (default), alone, ablation or none\n"
     "  --gguf FILE         real weights: the file's PTQ1_0/PQ2_0 tensors (the matrix's gguf_tensors\n"
     "                      globs) are the cases `shapes: gguf` names, shape \"gguf:TENSOR\"; a matrix\n"
     "                      without gguf in its shapes runs those tensors only\n"
     "  --activations DIR   real activations for the gguf cases: DIR/TENSOR.npy, (T, K) float arrays\n"
     "                      (docs/real-model.md); every kept tensor needs its set\n"
     "  --token T           the row of each set used as x (default 0)\n"
     "  --resume            keep the rows an interrupted run left in DIR, run only the missing cases\n"
     "  --dry-run           print the case keys, run nothing\n"
     "  --quiet             no skip reasons, progress lines or summary table\n"},
    {"profile",
     "profile --model bonsai2-27b|bonsai-8b|bonsai-4b | --gguf FILE [--tensors GLOBS] [--tokens 128] [--layers 4] "
     "[--variants LIST] [--threads N|cores] [--split all|auto|tune] [--no-head] [--hot] [--dist D] [--seed S] "
     "[--json FILE]",
     "every GEMV of decode tokens on real shapes (random weights) or a GGUF file's own ternary tensors:\n"
     "ms/token, GEMV-only tokens/s, per-tensor share. The token is cold: its weights rotate over enough\n"
     "copies to cycle more than 4x the last-level cache (HSDR_LLC_BYTES replaces its size), or it says why not\n",
     "  --model M           the model whose shapes are run (this or --gguf)\n"
     "  --gguf FILE         the GEMVs and weights of a GGUF file's PTQ1_0 / PQ2_0 tensors instead\n"
     "  --tensors GLOBS     with --gguf: keep the tensors matching these comma-separated globs\n"
     "  --tokens N          decode tokens (default 128)\n"
     "  --layers N          layers measured, the rest extrapolated (default 4; --gguf: every layer\n"
     "                      when the kept tensors total at most 256 MiB)\n"
     "  --variants LIST     comma-separated names or globs (default: every timed variant available here)\n"
     "  --threads N|cores   threads of the CPU variants (default 1)\n"
     "  --split all|auto|tune  every GEMV on all the threads (default); auto: on the threads the split\n"
     "                      rule picks from the measured hand-off and one thread's bare read (hsdr bandwidth\n"
     "                      --handoff); tune: per variant and GEMV shape, the thread count (1, 2, 4 .. all) of\n"
     "                      least time measured before the tokens\n"
     "  --no-head           leave out the output head\n"
     "  --hot               read the token's weights in place, one copy (not cold unless over 4x the cache)\n"
     "  --dist D            activation distribution (default bonsai)\n"
     "  --seed S            seed of the weights and activations (default 1)\n"
     "  --json FILE         also write the results as JSON\n"},
    {"quality",
     "quality [--model M] [--layers 2] [--seeds 4] [--tokens 2] [--vocab V] [--variants LIST] [--threads N] "
     "[--flns F,b] [--seed S] [--gguf FILE [--tensors GLOBS] [--activations PATH]] [--json FILE]",
     "SYNTHETIC model-shaped accuracy study: ternary FFN layers + head on real shapes, exact activations\n"
     "vs production Q8_0 vs each HSDR path: per-layer and final cosine, NMSE, KL of the softmax head.\n"
     "--gguf: per GEMV on a model file's ternary tensors x real activations (--activations; without it\n"
     "modelled bonsai ones, --tokens per tensor): NMSE, max relative error, cosine per tensor and path\n",
     "  --model M           the model's shapes (default bonsai2-27b)\n"
     "  --layers N          FFN layers (default 2)\n"
     "  --seeds N           weight seeds (default 4)\n"
     "  --tokens N          tokens per seed (default 2)\n"
     "  --vocab V           rows of the head (default the model's vocabulary)\n"
     "  --variants LIST     comma-separated names or globs (default one variant per numeric family)\n"
     "  --threads N         threads (default every core)\n"
     "  --flns F,b          the fLNS variants' fraction bits F and bias b (default 8,12)\n"
     "  --seed S            first seed (default 1)\n"
     "  --gguf FILE         real weights: the file's PTQ1_0 / PQ2_0 tensors (docs/real-model.md)\n"
     "  --tensors GLOBS     with --gguf: keep the tensors matching these comma-separated globs\n"
     "  --activations PATH  with --gguf: a directory of TENSOR.npy files (T x K), or one .npy file\n"
     "  --json FILE         also write the results as JSON\n"},
    {"bandwidth",
     "bandwidth [--threads 1,2] [--sizes 32K,4M,256M] [--mode hot|cold|both] [--backend cpu|cuda|vulkan] "
     "[--handoff] [--json]",
     "measured read bandwidth per thread count and working set (the roofline ceiling); --backend cuda or\n"
     "vulkan: the device's streaming read per launch (CUDA events, Vulkan timestamps); --handoff: the\n"
     "thread pool's cost of one call of an empty task per thread count, back to back and after a gap, held\n"
     "or not, and of a barrier (what every GEMV of a token pays on top of its reads)\n",
     "  --threads LIST      thread counts (default 1 up to the logical CPUs)\n"
     "  --sizes LIST        working sets in bytes, K/M/G suffixes (default half of each cache level, and 256M)\n"
     "  --mode M            hot, cold or both (default both)\n"
     "  --backend B         cpu (default), cuda or vulkan\n"
     "  --handoff           the pool's hand-off cost instead (with --threads only; JSON: hsdr-handoff/1)\n"
     "  --json              one JSON row per measurement\n"},
    {"compare",
     "compare A.jsonl B.jsonl [--threshold 0.02] [--confidence 0.95] [--raw] [--json]",
     "per case FASTER / SLOWER / SAME / AMBIGUOUS for B against A: each time over its own run's\n"
     "production (paired per round) or ceiling, so that drift between the runs cancels; --raw: times\n",
     "  --threshold T       SAME when the interval lies within 1 +- T (default 0.02)\n"
     "  --confidence C      of the bootstrap interval (default 0.95)\n"
     "  --raw               compare the raw times\n"
     "  --json              one JSON row per key, then the counts\n"},
    {"schema",
     "schema [--json | --markdown | --csv]",
     "the fields of a result row (hsdr-results/2): type, unit, presence, meaning\n",
     "  --json              as JSON (plots/results_schema.json is this output)\n"
     "  --markdown          the field table of docs/results-schema.md\n"
     "  --csv               the CSV mirror's header line\n"},
    {"merge",
     "merge OUT_DIR IN.jsonl... [--base results]",
     "join result files (e.g. shards of one matrix) into OUT_DIR/results.jsonl + .csv\n"
     "and the break-even fits of the joined rows (OUT_DIR/breakeven.json)\n",
     "  --base NAME         the output files' base name (default results; no breakeven.json otherwise)\n"},
    {"check",
     "check [--backend B] [--variant GLOB] [-v] PATH... | check --gguf FILE [--tensors GLOBS] [--seed S] "
     "[--dist D] [--rows N] [--backend B] [--variant GLOB] [-v]",
     "check every implementation against JSON test vectors (schema hsdr-vectors/1); a PATH may be a\n"
     "directory (its *.json files). Prints failing pairs, then 'N passed, M failed'.\n"
     "--gguf: every variant validated on each PTQ1_0/PQ2_0 tensor of a model file (real weights) as\n"
     "`hsdr run` validates a case, with a fresh random activation per tensor under a printed seed\n",
     "  --backend B         only the variants of backend B\n"
     "  --variant GLOB      only the variants whose name matches GLOB\n"
     "  -v, --verbose       a line per passing pair too\n"
     "  --gguf FILE         check on the ternary tensors of this GGUF file instead of vector files\n"
     "  --tensors GLOBS     comma-separated globs of GGUF tensor names (default all ternary ones)\n"
     "  --seed S            activation seed (default fresh, printed)\n"
     "  --dist D            activation distribution (default gaussian; bonsai needs K % 1024 == 0)\n"
     "  --rows N            check the first N rows of each tensor (default all)\n"},
    {"list",
     "list [--json]",
     "the registry: every variant, its backend, family, outputs, stages, and why it cannot run here\n",
     "  --json              one JSON object per variant\n"},
    {"encode",
     "encode [--prescale E|auto] X...",
     "LNS8 codes of the fp32 values X (spec/lns8.md section 2); X may be negative\n",
     "  --prescale E|auto   the power-of-two prescale exponent, or chosen from the values (default 0)\n"},
    {"states",
     "states [--K N] [--vectors N] [--seed S] [--activations PATH] [--json]",
     "occupied LNS8 states per tile and activation quantization error, per distribution; --activations:\n"
     "on real captured activations (docs/real-model.md), per set and overall, beside the modelled\n"
     "bonsai distribution at each set's width\n",
     "  --K N               vector length (default 5120)\n"
     "  --vectors N         vectors per distribution (default 64)\n"
     "  --seed S            seed (default 1)\n"
     "  --activations PATH  a directory of NAME.npy files (T x K float arrays) or one .npy file\n"
     "  --json              the whole histogram as JSON\n"},
    {"inspect",
     "inspect FILE.gguf [--json]",
     "a GGUF model file: its metadata, every tensor's type, shape and bytes, and per PTQ1_0 / PQ2_0 tensor\n"
     "the share of zero weights and of all-zero blocks and the distribution of the blocks' fp16 scales; a\n"
     "malformed file is refused (exit 2) with the byte offset and the field\n",
     "  --json              one JSON document (with each tensor's data_hash)\n"},
    {"help",
     "help [COMMAND]",
     "this overview, or COMMAND's help (as `hsdr COMMAND --help`)\n",
     ""},
};
const size_t hsdr_command_count = sizeof hsdr_commands / sizeof hsdr_commands[0];

static const char exit_status_text[] =
    "exit status: 0 success, 1 a check failed, 2 bad usage or malformed input; run stopped by a signal:\n"
    "128 + its number (130 SIGINT, 143 SIGTERM)\n";

const hsdr_command *hsdr_command_find(const char *name)
{
    for (size_t i = 0; i < hsdr_command_count; i++)
        if (strcmp(hsdr_commands[i].name, name) == 0)
            return &hsdr_commands[i];
    return NULL;
}

const char *hsdr_version(void)
{
    return "hsdr " HSDR_VERSION;
}

/* TEXT's lines, each after INDENT spaces. */
static void put_indented(FILE *f, const char *text, int indent)
{
    for (const char *line = text; *line;) {
        const char *eol = strchr(line, '\n');
        const int len = eol ? (int)(eol - line) : (int)strlen(line);
        fprintf(f, "%*s%.*s\n", len ? indent : 0, "", len, line);
        line += len + (eol != NULL);
    }
}

/* The synopsis wrapped before column 112 at spaces outside brackets, continuation lines indented by 6. */
static void put_synopsis(FILE *f, const char *synopsis)
{
    int column = 2;
    fputs("  ", f);
    for (const char *word = synopsis; *word;) {
        int len = 0, depth = 0; /* a word: up to a space outside [...] */
        for (; word[len] && (word[len] != ' ' || depth > 0); len++)
            depth += (word[len] == '[') - (word[len] == ']');
        if (column > 2 && column + 1 + len > 112) {
            fputs("\n      ", f);
            column = 6;
        } else if (column > 2) {
            fputc(' ', f);
            column++;
        }
        fprintf(f, "%.*s", len, word);
        column += len;
        word += len;
        word += *word == ' ';
    }
    fputc('\n', f);
}

void hsdr_usage_overview(FILE *f)
{
    fputs("Usage: hsdr COMMAND [OPTION]... [ARGUMENT]...\n"
          "  or:  hsdr help [COMMAND] | hsdr COMMAND --help\n"
          "  or:  hsdr --help | --version\n"
          "The hsdr-bench harness: ternary (PTQ1_0) GEMV kernels validated against the scalar reference, then timed.\n"
          "\n"
          "Commands:\n",
          f);
    for (size_t i = 0; i < hsdr_command_count; i++) {
        put_synopsis(f, hsdr_commands[i].synopsis);
        put_indented(f, hsdr_commands[i].description, 8);
    }
    fputs("\n"
          "Options:\n"
          "  -h, --help          this overview (COMMAND --help: the command's options)\n"
          "      --version       the version\n"
          "\n",
          f);
    fputs(exit_status_text, f);
}

void hsdr_usage_command(const hsdr_command *c, FILE *f)
{
    fprintf(f, "usage: hsdr %s\n", c->synopsis);
    put_indented(f, c->description, 0);
    fprintf(f, "\noptions:\n%s  -h, --help          this help\n\n", c->options);
    fputs(exit_status_text, f);
}

int hsdr_getopt_exit(int c)
{
    return c == HSDR_GETOPT_HELP ? HSDR_EXIT_OK : HSDR_EXIT_USAGE;
}

int hsdr_getopt(const char *cmd, int argc, char **argv, const char *optstring, const struct option *longopts)
{
    opterr = 0; /* the messages below name the command */
    const int c = getopt_long(argc, argv, optstring, longopts, NULL);
    const hsdr_command *command = hsdr_command_find(cmd);
    if (c == 'h') {
        if (command)
            hsdr_usage_command(command, stdout);
        return HSDR_GETOPT_HELP;
    }
    if (c != '?' && c != ':')
        return c;
    /* A short option is named by optopt when it is one of optstring's; a long one by its argv element. */
    const char *element = optind > 0 && optind <= argc ? argv[optind - 1] : "";
    const int is_short = optopt > 0 && optopt < 128 && optopt != ':' && strchr(optstring, optopt) &&
                         strncmp(element, "--", 2) != 0;
    char name[64];
    if (is_short || (c == '?' && optopt > 0 && optopt < 128 && strncmp(element, "--", 2) != 0))
        snprintf(name, sizeof name, "-%c", optopt);
    else
        snprintf(name, sizeof name, "%.*s", (int)strcspn(element, "="), element);
    if (c == ':')
        fprintf(stderr, "hsdr %s: %s needs a value\n", cmd, name);
    else if (strncmp(element, "--", 2) == 0 && strchr(element, '=') && optopt != 0)
        fprintf(stderr, "hsdr %s: %s takes no value ('%s')\n", cmd, name, element);
    else
        fprintf(stderr, "hsdr %s: unknown option '%s'\n", cmd, name);
    if (command)
        fprintf(stderr, "usage: hsdr %s\n(hsdr %s --help: every option)\n", command->synopsis, cmd);
    return HSDR_GETOPT_BAD;
}
