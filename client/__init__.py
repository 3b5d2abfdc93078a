"""Castell terminal client: connects, renders the view, sends actions."""
