"""Warehouse inventory: stock levels, pricing tiers and orders."""
