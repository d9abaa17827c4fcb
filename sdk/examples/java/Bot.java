// A Sueca bot in Java speaking sueca-exec/1 (docs/any-language.md), run from its source with no
// build step: `java Bot.java`. Its hello says it takes many games at once, so one JVM (slow to
// start) plays every game of a session.
//
// Strategy: when following, play the cheapest card that takes the trick, unless the partner
// already takes it (then give it the most points that cost no trump); when it cannot take the
// trick, throw its cheapest card; when leading, lead its strongest non-trump card. Never random.
//
// Run: sueca-bot selfplay --bots "exec:java sdk/examples/java/Bot.java",random
//
// JSON is read by hand (no packages): the referee's lines are machine-written, so finding a
// key and reading its value is all this needs.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

public class Bot {
    static final String RANKS = "23456QJK7A"; // weakest to strongest
    static final int[] POINTS = {0, 0, 0, 0, 0, 2, 3, 4, 10, 11};
    static final String SUITS = "CDHS";

    /** A card as suit * 10 + strength, from its text ("AS"). */
    static int card(String text) {
        return SUITS.indexOf(text.charAt(1)) * 10 + RANKS.indexOf(text.charAt(0));
    }

    static String text(int c) {
        return "" + RANKS.charAt(c % 10) + SUITS.charAt(c / 10);
    }

    /** Where the value of "key": starts in line, or -1. */
    static int find(String line, String key) {
        int at = line.indexOf("\"" + key + "\":");
        return at < 0 ? -1 : at + key.length() + 3;
    }

    /** The cards of the JSON list of card texts at the value of key. */
    static List<Integer> cards(String line, String key) {
        List<Integer> out = new ArrayList<>();
        int at = find(line, key);
        if (at < 0 || line.charAt(at) != '[') return out;
        for (int i = at + 1; i < line.length() && line.charAt(i) != ']'; i++) {
            if (line.charAt(i) == '"') {
                out.add(card(line.substring(i + 1, i + 3)));
                i += 3;
            }
        }
        return out;
    }

    /** The raw JSON value (a string with its quotes, or a number) at key. */
    static String raw(String line, String key) {
        int at = find(line, key);
        if (line.charAt(at) == '"') {
            int end = at + 1;
            while (line.charAt(end) != '"') end += line.charAt(end) == '\\' ? 2 : 1;
            return line.substring(at, end + 1);
        }
        int end = at;
        while (end < line.length() && "-0123456789".indexOf(line.charAt(end)) >= 0) end++;
        return line.substring(at, end);
    }

    static boolean beats(int a, int b, int led, int trump) {
        if (a / 10 == b / 10) return a % 10 > b % 10;
        return a / 10 == trump || (a / 10 == led && b / 10 != trump);
    }

    static int cost(int c, int trump) {
        return (c / 10 == trump ? 1000 : 0) + POINTS[c % 10] * 10 + c % 10;
    }

    static int choose(List<Integer> legal, List<Integer> trick, int trump) {
        List<Integer> plain = new ArrayList<>();
        for (int c : legal) if (c / 10 != trump) plain.add(c);
        List<Integer> pool = plain.isEmpty() ? legal : plain;
        if (trick.isEmpty()) {
            int best = pool.get(0);
            for (int c : pool) if (c % 10 > best % 10) best = c;
            return best;
        }
        int led = trick.get(0) / 10, win = 0;
        for (int i = 1; i < trick.size(); i++) if (beats(trick.get(i), trick.get(win), led, trump)) win = i;
        if (trick.size() - win == 2) { // the partner takes the trick: give it points
            int best = pool.get(0);
            for (int c : pool)
                if (POINTS[c % 10] > POINTS[best % 10] || (POINTS[c % 10] == POINTS[best % 10] && c % 10 < best % 10)) best = c;
            return best;
        }
        int best = -1;
        for (int c : legal)
            if (beats(c, trick.get(win), led, trump) && (best < 0 || cost(c, trump) < cost(best, trump))) best = c;
        if (best >= 0) return best;
        for (int c : legal) if (best < 0 || cost(c, trump) < cost(best, trump)) best = c;
        return best;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        out.print("{\"type\":\"hello\",\"protocol\":\"sueca-exec/1\",\"games\":1024}\n");
        out.flush();
        String line;
        while ((line = in.readLine()) != null) {
            if (!line.startsWith("{\"type\":\"turn\"") && !line.contains("\"type\":\"turn\"")) continue;
            String head = "{\"game\":" + raw(line, "game") + ",\"id\":" + raw(line, "id");
            if (raw(line, "kind").equals("\"redeal\"")) {
                out.print(head + ",\"redeal\":false}\n");
            } else {
                int trump = card(raw(line, "trump").substring(1, 3)) / 10;
                int c = choose(cards(line, "legal"), cards(line, "trick"), trump);
                out.print(head + ",\"card\":\"" + text(c) + "\"}\n");
            }
            out.flush();
        }
    }
}
