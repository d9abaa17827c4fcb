/* A Sueca bot in C speaking sueca-exec/1 (docs/any-language.md): one process for every game.
 *
 * Strategy: when following, play the lowest card that wins the trick so far if there is one
 * (and, if the partner already wins, throw the cheapest card instead); when leading, lead the
 * highest non-trump card, else the lowest. Never random. Redeal: never.
 *
 * Build: cc -O2 -o bot bot.c      Run: sueca-bot selfplay --bots exec:./bot,random
 *
 * It keeps nothing between lines (each turn carries all it needs, and its game id, which the
 * answer echoes), so its hello says it takes up to 1024 games at once: one process serves a
 * whole self-play run, or every game a runner gives it, and no game waits for a process to
 * start.
 *
 * JSON is read by hand: the referee's lines are machine-written, so finding a key and reading
 * its value is all this needs. Only the keys used are read: "type", "game", "id", "kind",
 * "legal", "trick", "leader", "trump", "seat". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_BYTES (1 << 20)

static const char RANKS[] = "23456QJK7A"; /* weakest to strongest */
static const int POINTS[] = {0, 0, 0, 0, 0, 2, 3, 4, 10, 11};
static const char SUITS[] = "CDHS";

/* A card as 0..39: suit * 10 + strength; -1 if not a card. */
static int card_of(const char *s) {
    const char *r = strchr(RANKS, s[0]), *u = strchr(SUITS, s[1]);
    if (!s[0] || !s[1] || !r || !u) return -1;
    return (int)(u - SUITS) * 10 + (int)(r - RANKS);
}

/* The text right after "key": in line, or NULL. */
static const char *find(const char *line, const char *key) {
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(line, pat);
    return p ? p + strlen(pat) : NULL;
}

/* Cards of the JSON list of card texts at p ("[\"AS\",\"7H\"]"); returns how many. */
static int cards_at(const char *p, int *out, int max) {
    int n = 0;
    if (!p || *p != '[') return 0;
    for (p++; *p && *p != ']' && n < max; p++)
        if (*p == '"') { out[n++] = card_of(p + 1); p += 3; }
    return n;
}

/* Copy the JSON string value at p (with its quotes) into out. */
static void string_at(const char *p, char *out, size_t max) {
    size_t n = 0;
    if (p && *p == '"') {
        out[n++] = *p++;
        while (*p && n + 2 < max) {
            if (*p == '\\' && p[1]) out[n++] = *p++;
            else if (*p == '"') break;
            out[n++] = *p++;
        }
        out[n++] = '"';
    }
    out[n] = 0;
}

/* Whether card a beats card b (b already on the table), the led suit and trump given. */
static int beats(int a, int b, int led, int trump) {
    if (a / 10 == b / 10) return a % 10 > b % 10;
    return a / 10 == trump || (a / 10 == led && b / 10 != trump);
}

static int choose(const int *legal, int nlegal, const int *trick, int ntrick, int trump) {
    int best = -1;
    if (ntrick == 0) { /* leading: highest non-trump, else the lowest trump */
        for (int i = 0; i < nlegal; i++)
            if (legal[i] / 10 != trump && (best < 0 || legal[i] % 10 > best % 10)) best = legal[i];
        if (best >= 0) return best;
        for (int i = 0; i < nlegal; i++)
            if (best < 0 || legal[i] % 10 < best % 10) best = legal[i];
        return best;
    }
    int led = trick[0] / 10, win = 0;
    for (int i = 1; i < ntrick; i++)
        if (beats(trick[i], trick[win], led, trump)) win = i;
    int partner_wins = (ntrick - win) == 2; /* the partner played two cards before this seat */
    if (!partner_wins) /* the cheapest card that takes the trick */
        for (int i = 0; i < nlegal; i++)
            if (beats(legal[i], trick[win], led, trump) &&
                (best < 0 || (legal[i] / 10 == trump) < (best / 10 == trump) ||
                 ((legal[i] / 10 == trump) == (best / 10 == trump) && legal[i] % 10 < best % 10)))
                best = legal[i];
    if (best >= 0) return best;
    for (int i = 0; i < nlegal; i++) { /* cannot or need not win: throw the cheapest */
        int c = legal[i], key = (c / 10 == trump) * 100 + POINTS[c % 10] * 10 + c % 10;
        int bkey = best < 0 ? 1 << 30 : (best / 10 == trump) * 100 + POINTS[best % 10] * 10 + best % 10;
        if (partner_wins) key = (c / 10 == trump) * 100 - POINTS[c % 10] * 10 + c % 10; /* feed points */
        if (partner_wins && best >= 0) bkey = (best / 10 == trump) * 100 - POINTS[best % 10] * 10 + best % 10;
        if (key < bkey) best = c;
    }
    return best;
}

int main(void) {
    static char line[LINE_MAX_BYTES];
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("{\"type\":\"hello\",\"protocol\":\"sueca-exec/1\",\"games\":1024}\n");
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {
        const char *type = find(line, "type");
        if (!type || strncmp(type, "\"turn\"", 6) != 0) continue; /* hello, start, trick, ... */
        char game[256];
        string_at(find(line, "game"), game, sizeof game);
        long id = strtol(find(line, "id"), NULL, 10);
        if (strncmp(find(line, "kind"), "\"redeal\"", 8) == 0) {
            printf("{\"game\":%s,\"id\":%ld,\"redeal\":false}\n", game, id);
            continue;
        }
        int legal[10], trick[4];
        int nlegal = cards_at(find(line, "legal"), legal, 10);
        int ntrick = cards_at(find(line, "trick"), trick, 4);
        const char *t = find(line, "trump");
        int trump = t && *t == '"' ? card_of(t + 1) / 10 : 0;
        int c = choose(legal, nlegal, trick, ntrick, trump);
        printf("{\"game\":%s,\"id\":%ld,\"card\":\"%c%c\"}\n", game, id, RANKS[c % 10], SUITS[c / 10]);
    }
    return 0;
}
