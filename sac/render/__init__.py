"""Render: safe HTML for untrusted text, plotly figures and tables, the wording of a search trace; no Streamlit.

Import the modules themselves (``from sac.index import store``): this package exports nothing.
"""
