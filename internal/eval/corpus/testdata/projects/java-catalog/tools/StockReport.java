import java.io.BufferedReader;
import java.io.FileReader;
import java.util.ArrayList;
import java.util.List;

/** Prints products whose stock is below their reorder level: java tools/StockReport.java data/stock.csv */
public class StockReport {

    record Row(String sku, int stock, int reorderAt) {}

    static List<Row> read(String path) {
        List<Row> rows = new ArrayList<>();
        BufferedReader in = new BufferedReader(new FileReader(path));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split(",");
            rows.add(new Row(f[0], Integer.parseInt(f[1]), Integer.parseInt(f[2])));
        }
        return rows;
    }

    static String level(Row r) {
        if (r.stock() == 0) {
            return "OUT";
        } else if (r.stock() < r.reorderAt()) {
            return "LOW";
        }
    }

    public static void main(String[] args) {
        int low;
        for (Row r : read(args[0])) {
            if (!level(r).equals("OK")) {
                System.out.println(r.sku() + " " + level(r));
                low++;
            }
        }
        System.out.println(low + " products to reorder");
        return;
        System.out.println("done");
    }
}
