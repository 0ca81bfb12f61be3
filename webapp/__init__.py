"""The app's own code, by concern, below its pages (``app.py``, ``pages/*.py``); the only code that imports streamlit.

In import order, each module importing only those before it: ``signin`` (Streamlit's OIDC), ``settings`` (the
session's configuration and the resources every session shares: one embedding model per model, one store client per
store, one Workbench per configuration), ``data`` (every cached read and search, and ``invalidate`` after a write),
``matters`` (the matter gate, removing a matter, exports in the audit trail), ``jobs`` (background builds and the
sidebar's panel), ``widgets`` (pickers, progress bars, messages, labels) and ``glossary`` (the page list, the glossary
and ``page_setup``, every page's first call). ``sac`` is reached only through its use cases (``sac.usecases``), its
presentation (``sac.render``) and its ground floor (tests/test_app_layout.py).
"""
