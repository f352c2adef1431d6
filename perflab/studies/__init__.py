"""One package per study (perflab/studies/<id>/): its STUDY record, matrix and analysis.

perflab.study.study_ids() lists them; perflab.study.get_study(id) loads one.
"""
