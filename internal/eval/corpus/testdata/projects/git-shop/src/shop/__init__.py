"""shop: pricing and stock for the orders service."""
