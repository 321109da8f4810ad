// Domain types shared by the store, the pricing rules and the reports.

export type Sku = string;

export interface Item {
  sku: Sku;
  name: string;
  /** Units physically on the shelves (was `quantity` before v0.3). */
  onHand: number;
  /** Units promised to open orders but not yet picked. */
  reserved: number;
  reorderPoint: number;
  unitCost: number;
  tags: string[];
}

export interface Warehouse {
  code: string;
  city: string;
  items: Map<Sku, Item>;
}

export type MovementKind = "receipt" | "pick" | "adjustment" | "transfer";

export interface StockMovement {
  sku: Sku;
  kind: MovementKind;
  delta: number;
  at: Date;
  note?: string;
}

export interface ReorderLine {
  sku: Sku;
  name: string;
  available: number;
  suggested: number;
  cost: number;
}
