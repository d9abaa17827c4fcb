/* Says who it is and where it runs: the sandbox's user, its working folder. */
#include <stdio.h>
#include <unistd.h>

int main(void) {
    char cwd[256];
    printf("c uid=%d cwd=%s\n", (int)getuid(), getcwd(cwd, sizeof cwd) ? cwd : "?");
    return 0;
}
