"""What the explorer needs of a state: which resources an action touches (its footprint), and
copies that share what an action leaves untouched."""
