"""Command implementations behind ``piwork``: window, headless prompt, inspect, resources."""
