// Talks to the warehouse API. In this checkout the API is simulated: it is
// down for maintenance and every call fails after a short delay.

const WAREHOUSE_URL = process.env.WAREHOUSE_URL ?? "http://127.0.0.1:58082/v2";

export function reserveStock(orderId, lines) {
  return new Promise((resolve, reject) => {
    setTimeout(() => {
      reject(`warehouse API ${WAREHOUSE_URL}/reservations returned 503 for order ${orderId} (${lines.length} lines)`);
    }, 20);
  });
}
