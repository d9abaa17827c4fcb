/* Hostile: prints 1 GiB to stderr (in 1 MiB writes), then "done" on stdout. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char block[1 << 20];

int main(void) {
    memset(block, 'x', sizeof block);
    for (int i = 0; i < 1024; i++) {
        size_t off = 0;
        while (off < sizeof block) {
            ssize_t n = write(2, block + off, sizeof block - off);
            if (n <= 0) return 1;
            off += (size_t)n;
        }
    }
    printf("done\n");
    return 0;
}
