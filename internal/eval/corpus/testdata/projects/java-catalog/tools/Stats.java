import java.util.ArrayList;
import java.util.Collections;
import java.util.Date;
import java.util.List;

/** Summary statistics of a price list: java tools/Stats.java 19.99 4.90 249.00 ... */
public class Stats {

    @SuppressWarnings("rawtypes")
    static List parse(String[] args) {
        List values = new ArrayList();
        for (String a : args) {
            values.add(Double.valueOf(a));
        }
        return values;
    }

    public static void main(String[] args) {
        List<Double> values = parse(args);
        Collections.sort(values);
        double sum = 0;
        for (double v : values) {
            sum += v;
        }
        System.out.printf("n=%d min=%.2f max=%.2f mean=%.2f median=%.2f%n", values.size(), values.get(0),
                values.get(values.size() - 1), sum / values.size(), values.get(values.size() / 2));
        System.out.println("generated " + new Date(0).toGMTString());
    }
}
