import type { Item, MovementKind, Sku, StockMovement, Warehouse } from "./models.js";

export class InsufficientStockError extends Error {
  constructor(
    readonly sku: Sku,
    readonly wanted: number,
    readonly available: number,
  ) {
    super(`insufficient stock for ${sku}: wanted ${wanted}, available ${available}`);
    this.name = "InsufficientStockError";
  }
}

export class InventoryStore {
  private readonly movements: StockMovement[] = [];

  constructor(private readonly warehouse: Warehouse) {}

  get code(): string {
    return this.warehouse.code;
  }

  find(sku: Sku): Item | undefined {
    return this.warehouse.items.get(sku);
  }

  add(item: Item): void {
    if (this.warehouse.items.has(item.sku)) {
      throw new Error(`duplicate sku ${item.sku}`);
    }
    this.warehouse.items.set(item.sku, item);
  }

  available(sku: Sku): number {
    const item = this.require(sku);
    return item.quantity - item.reserved;
  }

  receive(sku: Sku, units: number, note?: string): Item {
    const item = this.require(sku);
    item.onHand += units;
    this.record(sku, "receipt", units, note);
    return item;
  }

  reserve(sku: Sku, units: number): void {
    const free = this.available(sku);
    if (units > free) {
      throw new InsufficientStockError(sku, units, free);
    }
    this.require(sku).reserved += units;
  }

  pick(sku: Sku, units: number): void {
    const item = this.require(sku);
    if (units > item.reserved) {
      throw new InsufficientStockError(sku, units, item.reserved);
    }
    item.reserved -= units;
    item.onHand -= units;
    this.record(sku, "pick", -units);
  }

  adjust(sku: Sku, counted: number, reason: string): number {
    const item = this.require(sku);
    const delta = counted - item.onHand;
    item.onHand = counted;
    this.record(sku, "adjustment", delta, reason, new Date());
    return delta;
  }

  history(sku?: Sku): StockMovement[] {
    return sku ? this.movements.filter((m) => m.sku === sku) : [...this.movements];
  }

  private require(sku: Sku): Item {
    const item = this.find(sku);
    if (!item) {
      throw new Error(`unknown sku ${sku} in warehouse ${this.code}`);
    }
    return item;
  }

  private record(sku: Sku, kind: MovementKind, delta: number, note?: string): void {
    this.movements.push({ sku, kind, delta, at: new Date(), note });
  }
}
