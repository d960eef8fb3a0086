"""Pictures drawn offscreen with Qt, for the window and the command line alike.

The heatmap plot (heatmap.py, token_axis.py), heatmap figures as PNG/SVG (render.py), the
step-through's stages and their GIF/MP4/PDF (stages.py, steps.py) and activation-patching grids
(patch_figure.py). The package sits beside ``app`` and ``cli`` and imports neither: the command line
draws its images without the window's code, and the window draws its exports with the same
functions, so both write the same picture for the same request. Nothing here imports Qt at import
time of this marker.
"""
