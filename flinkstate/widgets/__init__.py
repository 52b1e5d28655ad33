"""ipywidgets controllers: they read the model and redraw figures in place."""
