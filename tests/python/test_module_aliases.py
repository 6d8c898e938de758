"""The modules held under another name (metakernelbench/module_aliases.py, the static audit's
module_aliases): what the list holds, and when its cache is read again."""

import importlib
import sys

from metakernelbench import module_aliases as aliases_module
from metakernelbench.module_aliases import module_aliases


def test_the_list_holds_modules_under_other_names():
    import enum  # noqa: F401  (enum.bltns is builtins)

    assert ("enum.bltns", "builtins") in module_aliases()
    assert all(not alias.startswith("metakernelbench") for alias, _ in module_aliases())


def test_an_import_of_the_judges_own_package_keeps_the_list_and_any_other_renews_it(monkeypatch):
    first = module_aliases()
    # A forked host imports judge.template after its template listed them: the same list, not
    # a new walk over every module (about 0.1 s of every evaluation on an H200).
    monkeypatch.delitem(sys.modules, "metakernelbench.judge.template", raising=False)
    importlib.import_module("metakernelbench.judge.template")
    assert module_aliases() is first
    # Another module changes what may be held: listed again.
    monkeypatch.setitem(sys.modules, "mkb_test_fresh_module", type(sys)("mkb_test_fresh_module"))
    sys.modules["mkb_test_fresh_module"].os_alias = importlib.import_module("os")
    again = module_aliases()
    assert again is not first
    assert ("mkb_test_fresh_module.os_alias", "os") in again
    assert len(aliases_module._CACHE) == 1
