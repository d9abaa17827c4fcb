/* Hostile: the example C bot (sdk/examples/c/bot.c, copied beside it), playing fair, with a
 * thread spinning a CPU for as long as it runs. */
#include <pthread.h>

static void *spin(void *arg) {
    volatile unsigned long n = 0;
    for (;;) n++;
    return arg;
}

#define main fair_main
#include "bot.c"
#undef main

int main(void) {
    pthread_t thread;
    pthread_create(&thread, NULL, spin, NULL);
    return fair_main();
}
