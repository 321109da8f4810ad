import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** An old price cache kept for the nightly job; raw types and all. */
public class LegacyCache {
    private final Map cache = new HashMap();
    private final List<String> log = new ArrayList();

    public void put(String sku, Double price) {
        cache.put(sku, price);
        log.add(sku + " cached at " + new Date().toGMTString());
    }

    public double get(String sku) {
        Double price = (Double) cache.get(sku);
        return price;
    }

    public Integer hits() {
        return new Integer(log.size());
    }

    public String lastEntry() {
        return log.get(log.size() - 1).lenght();
    }
}
