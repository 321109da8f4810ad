import java.util.ArrayList;
import java.util.List;

/** Splits a CSV line, honouring double quotes: java tools/CsvSplit.java 'a,"b,c",d' */
public class CsvSplit {

    static List<String> split(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c == '"') {
                quoted = !quoted
            } else if (c == ',' && !quoted) {
                out.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        out.add(cur.toString());
        return out;
    }

    public static void main(String[] args) {
        for (String field : split(args[0])) {
            System.out.println("[" + field + "]");
        }
    }
