/*
 * Fuzz `duet bench-plot` (cli/bench_plot.c) on its input, a bench's JSON file: the command either
 * draws the picture (exit 0, an SVG document written) or refuses the file as bad input (exit 2,
 * nothing written); never anything else.
 */
#include <string.h>

#include "cli/cli.h"
#include "duet/duet.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char in[512], out[512];
    fz_write("bench.json", data, size, in, sizeof(in));
    fz_path("bench.svg", out, sizeof(out));
    char *argv[] = {"bench-plot", in, "--svg", out, NULL};
    int rc = cmd_bench_plot(4, argv);
    FZ_ASSERT(rc == CLI_EXIT_OK || rc == CLI_EXIT_USAGE);
    FILE *f = fopen(out, "rb");
    if (rc == CLI_EXIT_OK) {
        char head[5] = "";
        FZ_ASSERT(f != NULL && fread(head, 1, 4, f) == 4);
        FZ_ASSERT(memcmp(head, "<svg", 4) == 0 || memcmp(head, "<?xm", 4) == 0);
    } else {
        FZ_ASSERT(f == NULL);
    }
    if (f != NULL)
        fclose(f);
    fz_clean();
    return 0;
}
