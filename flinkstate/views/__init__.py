"""Figures: plain functions from model values to plotly figures, usable without a notebook."""
