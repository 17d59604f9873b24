"""``userdp audit module:callable``: the current directory on the import path, and
``--relation`` validated and checked on the pairs.

The audits here run a Laplace mechanism at its claim (pairs at distance 1, scale 1/eps):
"no violation found" is asserted at confidence 1 - 1e-5, so a false failure has
probability <= 1e-5 (the harness's guarantee for a correct mechanism).
"""

import sys
import textwrap

import pytest

from userdp.audits.cli import main as cli
from userdp.reference.neighbours import RELATIONS

MODULE = textwrap.dedent("""
    import numpy as np
    from userdp.reference.data import EMPTY, UserDataset

    def _mech(D, rng, size):
        values = D.values if hasattr(D, "values") else np.asarray(D, float)
        return float(np.sum(values)) + rng.laplace(0.0, 1.0, size)       # sensitivity 1 on [0, 1] records

    def records():
        D = UserDataset([0.5, 1.0], [0, 1])
        return _mech, [(D, D.take(np.array([0]))), (EMPTY, UserDataset([1.0], [7]))]

    def users():
        D = UserDataset([0.5, 0.25, 1.0], [0, 0, 1])
        return _mech, [(D, D.without_user(0))]

    def sequences():
        return _mech, [([1.0, 0.0, 1.0], [1.0, 1.0]), ([0.0, 1.0], [0.0, 0.0], "replaced")]

    def objects():
        return (lambda D, rng, size: D["x"] + rng.laplace(0.0, 1.0, size)), [({"x": 0.0}, {"x": 1.0})]
""")


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A module written to a fresh directory that becomes the current one, with sys.path and
    sys.modules restored afterwards (the module name is unique to this file)."""
    (tmp_path / "userdp_cwd_mod12.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "userdp_cwd_mod12", raising=False)
    yield tmp_path
    sys.modules.pop("userdp_cwd_mod12", None)


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


AUDIT = ("--claim", "pure:epsilon=1", "--samples", "4000", "--confidence", "0.99999")


def test_module_in_the_current_directory_imports_without_pythonpath(capsys, here):
    code, out, err = run(capsys, "audit", "userdp_cwd_mod12:records", *AUDIT)
    assert code == 0, err
    assert "no violation found" in out


def test_help_says_the_current_directory_is_on_the_path(capsys):
    code, out, _ = run(capsys, "audit", "--help")
    assert code == 0 and "current directory" in " ".join(out.split())


def test_unknown_relation_is_refused_with_the_known_names(capsys, here):
    code, out, err = run(capsys, "audit", "userdp_cwd_mod12:records", "--relation", "bogus", *AUDIT)
    assert code == 2 and not out
    assert "'bogus' is not a known relation" in err
    assert all(name in err for name in RELATIONS)
    assert "userdp_cwd_mod12" not in sys.modules  # refused before any user code ran


def test_record_pairs_with_an_empty_side_are_checked_and_accepted(capsys, here):
    code, out, err = run(capsys, "audit", "userdp_cwd_mod12:records", "--relation", "add-remove-record", *AUDIT)
    assert code == 0, err
    assert "2 pair(s) checked to be neighbours" in err


@pytest.mark.parametrize("relation", ["replace-record", "replace-user"])
def test_a_pair_that_is_not_a_neighbour_is_refused_naming_it(capsys, here, relation):
    """Pair 0 removes a record: no replace pair (n and the owners change)."""
    code, out, err = run(capsys, "audit", "userdp_cwd_mod12:records", "--relation", relation, *AUDIT)
    assert code == 2 and not out
    assert "'pair 0: dataset of 2 records, 2 users vs dataset of 1 records, 1 users' is not a pair of neighbours" in err


def test_add_remove_user_accepts_the_empty_partition_vs_one_user(capsys, here):
    """Pair 0 removes user 1 (its only record); pair 1 is EMPTY vs user 7."""
    code, _, err = run(capsys, "audit", "userdp_cwd_mod12:records", "--relation", "add-remove-user", *AUDIT)
    assert code == 0, err
    assert "2 pair(s) checked to be neighbours" in err


def test_user_relation_refuses_a_planted_non_neighbour(capsys, here):
    code, _, err = run(capsys, "audit", "userdp_cwd_mod12:users", "--relation", "add-remove-user", *AUDIT)
    assert code == 0, err
    code, out, err = run(capsys, "audit", "userdp_cwd_mod12:users", "--relation", "add-remove-record", *AUDIT)
    assert code == 2 and not out and "must differ by exactly one record" in err  # user 0 owns two records


def test_raw_sequences_are_checked_under_the_record_relations(capsys, here):
    code, out, err = run(capsys, "audit", "userdp_cwd_mod12:sequences", "--relation", "add-remove-record", *AUDIT)
    assert code == 2 and "'replaced' is not a pair of neighbours" in err  # pair 1 replaces a record
    code, out, err = run(capsys, "audit", "userdp_cwd_mod12:sequences", "--relation", "replace-record", *AUDIT)
    assert code == 2 and "pair 0: [1, 0, 1] vs [1, 1]" in err and "replace-record keeps" in err
    code, out, err = run(capsys, "audit", "userdp_cwd_mod12:sequences", "--relation", "replace-user", *AUDIT)
    assert code == 0, err
    assert "2 pair(s) NOT checked" in err and "replace-user defines neighbours of UserDatasets only" in err


def test_pairs_of_other_objects_are_reported_as_not_checked(capsys, here):
    code, out, err = run(capsys, "audit", "userdp_cwd_mod12:objects", "--relation", "add-remove-record", *AUDIT)
    assert code == 0, err
    assert "0 pair(s) checked" in err and "1 pair(s) NOT checked" in err and "not UserDatasets or sequences" in err
