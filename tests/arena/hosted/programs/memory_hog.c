/* Hostile: allocates (and touches) memory until killed, reporting every 8 MiB; stops by itself
 * at 256 MiB, so that a sandbox without its memory limit does not take the host down. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    setvbuf(stderr, NULL, _IONBF, 0);
    for (int mb = 1; mb <= 256; mb++) {
        char *p = malloc(1 << 20);
        if (!p) { fprintf(stderr, "malloc refused at %d MiB\n", mb); return 1; }
        memset(p, 1, 1 << 20);
        if (mb % 8 == 0) fprintf(stderr, "allocated %d MiB\n", mb);
    }
    fprintf(stderr, "allocated all 256 MiB\n");
    return 0;
}
