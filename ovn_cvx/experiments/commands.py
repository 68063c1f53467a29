"""``ovn-cvx reproduce``: the paper's experiment tables and figures (see :mod:`ovn_cvx.experiments`)."""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from ..cli import output_directory, positive_int, scheduler_address, solver_name, summary
from .tables import DATASETS, TABLES, ReproduceConfig

#: numpy's and scikit-learn's seeds are 32-bit
MAX_SEED = 2**32 - 1
#: the smallest --max-samples: the smallest class of glass (6 classes) then keeps about one pattern
MIN_SAMPLES = 30


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be in [0, {MAX_SEED}], got {value}")
    return value


def _max_samples(text: str) -> int:
    value = positive_int(text)
    if value < MIN_SAMPLES:
        raise argparse.ArgumentTypeError(f"must be >= {MIN_SAMPLES} (the nested 3-fold CV needs a few patterns "
                                         f"of every class), got {value}")
    return value


def _usage_error(message: str) -> int:
    print(f"ovn-cvx reproduce: error: {message}", file=sys.stderr)
    return 2


def _run(args) -> int:
    from .reproduce import reproduce, verdict_summary

    config = ReproduceConfig.quick_config() if args.quick else ReproduceConfig()
    overrides = {"seed": args.seed, "n_jobs": args.n_jobs, "nested": not args.no_nested,
                 "raw": args.raw}
    if args.band_seeds is not None:
        overrides["band_seeds"] = args.band_seeds
    if args.tables:
        overrides["tables"] = tuple(args.tables)
    if args.datasets:
        overrides["datasets"] = tuple(args.datasets)
    if args.solver is not None:
        overrides["ovn_solver"] = args.solver
    if args.max_samples is not None:
        overrides["max_samples"] = args.max_samples
    config = replace(config, **overrides)
    reuse = tuple(args.reuse or ())
    if not set(reuse) <= set(config.tables):
        return _usage_error(f"--reuse {' '.join(reuse)}: every reused table must be one of the run's tables "
                            f"{list(config.tables)}")
    options = {"reuse": reuse} if reuse else {}
    try:
        if args.scheduler is not None:  # scikit-learn's joblib loops (n_jobs) on the Dask cluster
            from .._parallel import dask_backend
            with dask_backend(args.scheduler):
                out = reproduce(config, args.out, **options)
        else:
            out = reproduce(config, args.out, **options)
    except ValueError as error:
        if not reuse or "reuse" not in str(error):
            raise
        return _usage_error(f"--reuse: {error}")
    failed = sum(int(df.drop_duplicates(["dataset", "kernel", "method", "seed"])["failed_fits"].sum())
                 for df in out["tables"].values() if len(df))
    print(f"\n{verdict_summary(out['verdicts'], out['claims'])}")
    print(f"report: {out['report']}  ({out['seconds']:.1f} s)")
    if isinstance(out["figures"], list):
        print(f"figures: {len(out['figures'])} PNG files in {args.out}/figures")
    if failed:
        print(f"{failed} fits failed (scored NaN); see the report")
    return 1 if failed else 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "reproduce", help=summary("reproduce"), formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Recompute the paper's four experiment tables (OvN next to the scikit-learn baselines it used)\n"
                    "under its protocol and nested cross-validation, put the paper's numbers beside ours with a\n"
                    "verdict each, and write the report, tables and figures to --out. Takes about 45 min with\n"
                    "--n-jobs 2 on a 2-core machine; --quick (small grids and data) a few minutes.",
        epilog="exit status:\n  0  every fit ran\n  1  some fits failed (scored NaN; the report says which)\n"
               "  2  usage error: a bad argument, --out not writable, a --scheduler that does not answer")
    p.add_argument("--quick", action="store_true",
                   help="small grids, at most 90 patterns per data set, two seeds for the band")
    p.add_argument("--out", type=output_directory, default="reproduce-out",
                   help="output directory (default: %(default)s)")
    p.add_argument("--n-jobs", type=positive_int, default=1, help="joblib workers (default: %(default)s)")
    p.add_argument("--scheduler", type=scheduler_address, metavar="ADDRESS",
                   help="run the cross-validation loops on the Dask cluster at this dask.distributed scheduler "
                        "address (e.g. tcp://127.0.0.1:8786): scikit-learn's joblib loops under the Dask backend, "
                        "on all the cluster's workers (--n-jobs is then ignored); "
                        'needs the extra \'dask\': pip install "ovn-cvx[dask]"')
    p.add_argument("--seed", type=_seed, default=0, help="seed of the splits and subsamples (default: %(default)s)")
    p.add_argument("--tables", nargs="+", choices=TABLES, help="only these tables")
    p.add_argument("--datasets", nargs="+", choices=[d.name for d in DATASETS], metavar="DATASET",
                   help="only these data sets: %(choices)s")
    p.add_argument("--solver", type=solver_name, help="OvN solver: 'mm' or a CVXPY solver name (default: mm)")
    p.add_argument("--max-samples", type=_max_samples,
                   help=f"subsample every data set to this many patterns (at least {MIN_SAMPLES}: the nested "
                        f"3-fold CV needs a few patterns of every class)")
    p.add_argument("--raw", action="store_true",
                   help="no StandardScaler (default: every data set but the 2-D toys is standardised inside each "
                        "training part, as the paper 'normalized' its data)")
    p.add_argument("--band-seeds", type=positive_int,
                   help="shuffle seeds for the band of the small data sets (default: 5; --quick: 2)")
    p.add_argument("--no-nested", action="store_true", help="skip the nested-CV protocol")
    p.add_argument("--reuse", nargs="+", choices=TABLES, metavar="TABLE",
                   help="take these tables from the earlier run in --out (same configuration, but for --n-jobs and "
                        "the selection) instead of refitting them; the verdicts, the claims' measurements and the "
                        "report are computed anew: %(choices)s")
    p.set_defaults(run=_run)
