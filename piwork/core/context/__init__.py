"""Context governance: the layered context order, the manifest, the budget and the governor."""
