"""Plans as text for people and models: the board and plan.md (render), a task's row (rows), a
plan written as text (plan_text), Mermaid (mermaid) and the history as lines (timeline)."""
