"""The backends below the seam (planning_core/store.py): nothing above imports them
except `store.open_store`, which picks one from a URL."""
