"""Model providers: wire protocols, model registry, credentials and offline token counting."""
