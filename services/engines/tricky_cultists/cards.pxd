# Cython's augmenting declarations for cards.py (pure-Python mode: the .py stays the one
# source). An agenda's kind in C: rules.pxd cimports it, so the draft asks it without a
# Python call per agenda card.

cpdef long agenda_kind(long agenda) except? -1
