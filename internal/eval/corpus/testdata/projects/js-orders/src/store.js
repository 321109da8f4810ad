export class MemoryStore {
  #orders = new Map();

  save(order) {
    this.#orders.set(order.id, structuredClone(order));
  }

  get(id) {
    return this.#orders.get(id);
  }

  all() {
    return [...this.#orders.values()];
  }

  get size() {
    return this.#orders.size;
  }
}
