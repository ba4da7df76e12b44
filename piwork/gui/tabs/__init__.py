"""Sessions as tabs of a window: each tab its own chat and controller, the docks following the tab in
front (``front_links``, ``chat_tab``, ``strip``, ``tab_state``), the tabs of every window kept and
listed (``manager``, ``registry``) and the labels users give them (``labels``)."""
