"""Report: the benchmark run, its Markdown report and charts, and the README's figures.

`results_report` runs the suite (``harness bench``), `report_sections`, `fair_report`,
`headline_table` and the charts write it up, `readme_figures` regenerates the README's numbers.
"""
