/* Hostile: fills its disk. 1 MiB files into /data, then /tmp, until a write fails (at most 32
 * MiB each); then one file growing past the file size limit. Reports each to stderr. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char block[1 << 20];

static void fill(const char *dir) {
    int mb = 0;
    const char *why = "its own cap of 32";
    for (; mb < 32; mb++) {
        char path[64];
        snprintf(path, sizeof path, "%s/f%d", dir, mb);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) { why = strerror(errno); break; }
        ssize_t n = write(fd, block, sizeof block);
        int err = errno;
        close(fd);
        if (n != (ssize_t)sizeof block) { why = n < 0 ? strerror(err) : "a short write"; break; }
    }
    fprintf(stderr, "%s: %d MiB then %s\n", dir, mb, why);
    for (int i = 0; i <= mb; i++) {
        char path[64];
        snprintf(path, sizeof path, "%s/f%d", dir, i);
        unlink(path);
    }
}

int main(void) {
    setvbuf(stderr, NULL, _IONBF, 0);
    memset(block, 7, sizeof block);
    fill("/data");
    fill("/tmp");
    int fd = open("/data/big", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    for (int mb = 0; mb < 6; mb++) {
        if (write(fd, block, sizeof block) != (ssize_t)sizeof block) {
            fprintf(stderr, "big file: refused at %d MiB: %s\n", mb, strerror(errno));
            return 1;
        }
    }
    fprintf(stderr, "big file: 6 MiB written\n");
    return 0;
}
