"""One package per study (perflab/studies/<id>/): its STUDY record, matrix and analysis.

perflab.contract.study.study_ids() lists them; perflab.contract.study.get_study(id) loads one.
"""
