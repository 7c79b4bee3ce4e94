"""Outputs keep their shape: no JSON key or Prometheus family/label set disappears or appears
unannounced (tests/shapes.py records them; tests/data/*.shape are the reference)."""
import pytest

from shapes import DATA, compare_prom, run_shapes


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    return run_shapes(tmp_path_factory.mktemp("shapes"))


def recorded(name, kind):
    return set((DATA / f"{name}.{kind}.shape").read_text().split("\n")) - {""}


def nullable(paths):
    """Paths without the "KEY_reason" of a KEY the set has: the reason comes with KEY's null,
    which depends on the run (a cold cache gives a short command disk requests and a p99)."""
    return {p for p in paths if not (p.endswith("_reason") and p[:-len("_reason")] in paths)}


@pytest.mark.parametrize("name", ["pipeline", "single", "notime", "hooks-off", "overflow", "uring"])
def test_json_and_prometheus_shapes_unchanged(shapes, name):
    paths, families = shapes[name]
    paths, want = nullable(paths), nullable(recorded(name, "json"))
    assert not want - paths, f"JSON keys gone: {sorted(want - paths)}"
    assert not paths - want, f"new JSON keys (record them: tests/shapes.py): {sorted(paths - want)}"
    gone, new = compare_prom(recorded(name, "prom"), families)
    assert not gone, f"Prometheus families or labels gone: {sorted(gone)}"
    assert not new, f"new Prometheus families or labels: {sorted(new)}"
