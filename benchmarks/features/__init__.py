"""Loop features: the boundary trigger, the stale-list reminder, clearing old tool results.

`loop_features` and `result_clearing`, each against the plain size trigger.
"""
