"""The plan as a graph: which tasks block which, derived and checked for cycles (graph), and the
order ready work is offered in (ranking)."""
