"""The conversation: its rows, view, presenter, composer and footer."""
