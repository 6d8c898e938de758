"""The `mkb` command line: problems list/show, version, demo, and its errors."""

import json
import subprocess
import sys


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "metakernelbench.cli", *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def test_problems_list_json_has_families_and_roofline():
    code, out, _ = run("problems", "list", "--json")
    assert code == 0
    problems = json.loads(out)
    by_number = {p["number"]: p for p in problems}
    assert {2, 25, 28} <= set(by_number)
    assert by_number[28]["family"] == "mlp_norm"
    assert by_number[28]["workloads"]["full"]["flops"] == 297144320
    assert by_number[25]["workloads"]["full"]["min_bytes"] == 67112960


def test_problems_list_filters_by_family():
    code, out, _ = run("problems", "list", "--json", "--family", "attention")
    assert code == 0
    assert {p["family"] for p in json.loads(out)} == {"attention"}


def test_problems_list_table():
    code, out, _ = run("problems", "list")
    assert code == 0 and "fused_add_rmsnorm" in out


def test_problems_show():
    code, out, _ = run("problems", "show", "25")
    assert code == 0
    assert "batched_kv_cache_block_copy_remap_uint8" in out and "updated in place" in out


def test_unknown_problem_is_one_line_error_exit_2():
    code, out, err = run("problems", "show", "fused_add_rmsnorm")
    assert code == 2
    assert err.startswith("error: no problem 'fused_add_rmsnorm'")
    assert "Traceback" not in err


def test_bad_suite_folder_names_it(tmp_path):
    code, _, err = run("--suite", str(tmp_path / "nowhere"), "problems", "list")
    assert code == 2 and "nowhere" in err


def test_version():
    code, out, _ = run("version")
    assert code == 0 and out.startswith("metakernelbench 0.1.0")
