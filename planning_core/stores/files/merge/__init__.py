"""git merges of committed plans: the merge driver, hooks and strategy (gitmerge), one task
file merged field by field (taskmerge), and the plan put right after a merge (mergefixup).
git starts them through `python -m planning_core.stores.files` (its __main__)."""
