import express from "express";
import { MemoryStore } from "./store.js";
import { totals, validate } from "./orders.js";

export function createApp(store = new MemoryStore()) {
  const app = express();
  app.use(express.json());

  app.post("/v1/orders", (req, res) => {
    const order = validate(req.body);
    store.save(order);
    res.status(201).json({ id: order.id, ...totals(order) });
  });

  app.get("/v1/orders/:id", (req, res) => {
    const order = store.get(req.params.id);
    if (!order) return res.status(404).json({ error: `order ${req.params.id} not found` });
    res.json(order);
  });

  app.use((err, req, res, _next) => {
    res.status(err.name === "ValidationError" ? 422 : 500).json({ error: err.message });
  });
  return app;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.env.PORT ?? 8080);
  createApp().listen(port, "127.0.0.1", () => console.log(`orders listening on 127.0.0.1:${port}`));
}
