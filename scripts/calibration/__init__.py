"""The PopLibs calibration harness's case families (scripts/poplibs_calibration.py): per
codelet family, the builder of its vertex state and data, its reference and PopLibs' estimator."""
