"""Seat backends behind one async interface (see base.py)."""
