"""The worker's hold on items the interpreter compares by borrowed pointer (worker._hold_compared_items,
_core.hold_compared_items): list comparison, OrderedDict equality, deque's index / count / remove /
`in`, functools.cmp_to_key's key comparison, weak proxies' comparison, itertools.groupby. Each
runs in a fresh interpreter, since the hold is process-wide.

Without the hold, a comparison that empties the containers leaves the item it compares owned by
nothing but the comparison's own frame: it is freed when that comparison returns NotImplemented, and
the reflected comparison gets the freed object (raw memory in pure Python; tests/adversarial cases
*_uaf*, stdlib_compare_deque_uaf). The probes below count the references to the item right after the
containers were emptied, and return a plain answer (no reflected call): one more reference with the
hold than without, and the comparisons' results unchanged."""

import json
import subprocess
import sys
import textwrap

import pytest

PROBE = textwrap.dedent(
    """
    import collections, json, sys
    if sys.argv[1] == "held":
        from metakernelbench.judge import worker
        worker._hold_compared_items()

    refs = {}

    class Emptier:
        # Empties the containers in the comparison `on` (list_richcompare's loop compares its
        # pairs for equality with references of its own; its final comparison, `<` here, does not).
        def __init__(self, name, on, *containers):
            self.name, self.on, self.containers = name, on, containers
        def __eq__(self, other):
            return self._empty(other) if self.on == "eq" else False
        def __lt__(self, other):
            return self._empty(other) if self.on == "lt" else False
        def __hash__(self):
            return 7
        def _empty(self, other):
            for c in self.containers:
                c.clear()
            refs[self.name] = sys.getrefcount(other)
            return False

    class Item:
        def __hash__(self):
            return 7
        def __eq__(self, other):
            return NotImplemented  # the probe's reflected __eq__ runs with this item as `other`

    a, b = [None], [Item()]
    a[0] = Emptier("list", "lt", a, b)
    a < b
    d = collections.deque([Item()])
    probe = Emptier("deque", "eq", d)
    try:
        d.index(probe)
    except (RuntimeError, ValueError):
        pass
    o1, o2 = collections.OrderedDict(), collections.OrderedDict()
    o1[Emptier("OrderedDict", "eq", o1, o2)] = 1
    o2[Item()] = 1
    try:
        o1 == o2
    except (RuntimeError, KeyError):
        pass
    import functools

    def emptying_cmp(a, b):
        kb.obj = None  # the other key lets go of its object while the comparison runs
        refs["KeyWrapper"] = sys.getrefcount(b)
        return 0

    key = functools.cmp_to_key(emptying_cmp)
    ka, kb = key(Item()), key(Item())
    ka < kb

    import weakref

    class Target:
        def __eq__(self, other):
            return NotImplemented  # the probe's reflected __eq__ runs with the referent

    class ProxyProbe:
        def __eq__(self, other):
            del box[:]  # the last strong reference to the proxy's referent
            refs["ProxyType"] = sys.getrefcount(other)
            return False

    box = [Target()]
    proxy = weakref.proxy(box[0])
    proxy == ProxyProbe()
    print(json.dumps(refs))
    """
)


def _refs(mode: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_compared_item_is_held_while_the_containers_are_emptied():
    bare, held = _refs("bare"), _refs("held")
    # Unheld: the comparison's own frame is all that keeps the item (freed once it returns).
    for kind in ("list", "deque", "KeyWrapper", "ProxyType"):
        assert held[kind] == bare[kind] + 1, (kind, bare, held)
    # OrderedDict: dict equality compares held values and keys first; the keys' order is then a
    # comparison of tuples, which hold their items. The node walk that compared borrowed keys
    # never runs.
    assert "OrderedDict" in held


SEMANTICS = textwrap.dedent(
    """
    import collections, json, sys
    from metakernelbench.judge import worker
    OD = collections.OrderedDict

    class L(list):
        pass

    def cases():
        out = []
        out.append([[1, 2] < [1, 3], [1, 2] == [1, 2], [1, 2] != [1, 2, 3], [2] > [1, 9], [] <= [],
                    [1, [2]] >= [1, [1]], L([1]) == [1], [1] == L([1]), list.__eq__([1], 5) is NotImplemented,
                    [1, 2].__lt__([1, 3]), L([3]).__gt__([2]), ([1] == (1,)),
                    [float("nan")] == [float("nan")]])
        out.append([OD(a=1, b=2) == OD(a=1, b=2), OD(a=1, b=2) == OD(b=2, a=1), OD(a=1) != OD(a=2),
                    OD(a=1, b=2) == dict(b=2, a=1), dict(b=2, a=1) == OD(a=1, b=2), OD(a=1).__eq__(OD(a=1)),
                    OD(a=1).__ne__(OD(a=1))])
        import functools
        key = functools.cmp_to_key(lambda a, b: (a > b) - (a < b))
        out.append([sorted([3, 1, 2], key=key), key(1) < key(2), key(2) == key(2), key(3) >= key(4)])
        import itertools, weakref
        out.append([(k, list(g)) for k, g in itertools.groupby("aabccc")])
        out.append([k for k, _ in itertools.groupby([1, 1, 2, 3, 3], key=lambda v: v % 2)])
        out.append([list(itertools.accumulate([1, 2, 3])), list(itertools.accumulate([1, 2, 3], initial=10)),
                    list(itertools.accumulate([3, 1, 2], max))])
        class T:
            pass
        t1, t2 = T(), T()
        out.append([weakref.proxy(t1) == weakref.proxy(t1), weakref.proxy(t1) != t2])
        d = collections.deque([1, 2, 3, 2])
        out.append([d.index(2), d.index(2, 2), d.count(2), 3 in d, 9 in d, d.__contains__(1)])
        d.remove(2)
        out.append(list(d))
        try:
            d.index(9)
        except ValueError as error:
            out.append(str(error))
        return out

    before = cases()
    worker._hold_compared_items()
    print(json.dumps([before, cases()]))
    """
)


def test_comparisons_answer_as_before():
    done = subprocess.run([sys.executable, "-c", SEMANTICS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = json.loads(done.stdout.strip().splitlines()[-1])
    assert after == before
    assert before[0][:5] == [True, True, True, True, True]


@pytest.mark.parametrize("kind", ["list", "deque", "OrderedDict"])
def test_the_reflected_comparison_gets_a_live_object(kind):
    """The attack's own shape, held: the first comparison empties the containers and returns
    NotImplemented; the reflected one must get the item alive (its slot value intact)."""
    code = textwrap.dedent(
        f"""
        import collections
        from metakernelbench.judge import worker
        worker._hold_compared_items()
        seen = []

        class First:
            def __eq__(self, other):
                for c in containers:
                    c.clear()
                return NotImplemented
            __lt__ = __eq__
            def __hash__(self):
                return 7

        class Second:
            __slots__ = ("mark",)
            def __init__(self):
                self.mark = 0x5EED
            def __eq__(self, other):
                seen.append(self.mark)
                return False
            __gt__ = __eq__
            def __hash__(self):
                return 7

        kind = "{kind}"
        if kind == "list":
            a, b = [First()], [Second()]
            containers = (a, b)
            a < b
        elif kind == "deque":
            d = collections.deque([Second()])
            containers = (d,)
            try:
                d.index(First())
            except (RuntimeError, ValueError):
                pass
        else:
            a, b = collections.OrderedDict(), collections.OrderedDict()
            containers = (a, b)
            a[First()] = 1
            b[Second()] = 1
            try:
                a == b
            except (RuntimeError, KeyError):
                pass
        assert all(m == 0x5EED for m in seen), seen
        print("ok", len(seen))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("ok")


def test_a_groupby_advanced_from_inside_its_own_next_is_refused():
    """The fourth red team's route: a comparison inside groupby's next advanced the same groupby,
    which replaced and freed the key being compared. Refused (RuntimeError) with the hold; the
    comparison's code sees the refusal, and the groupby goes on."""
    code = textwrap.dedent(
        """
        import itertools
        from metakernelbench.judge import worker
        worker._hold_compared_items()
        seen = []

        class Key:
            def __init__(self, n):
                self.n = n
            def __eq__(self, other):
                try:
                    next(gb)
                    seen.append("advanced")
                except RuntimeError as error:
                    seen.append(str(error))
                return self.n == getattr(other, "n", None)
            __hash__ = object.__hash__

        keys = [Key(0), Key(0), Key(1)]
        gb = itertools.groupby(range(3), lambda i: keys[i])
        groups = [k.n for k, _ in gb]
        print(groups, seen[:1])
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "advanced from inside its own" in done.stdout, done.stdout


def test_an_accumulate_advanced_from_inside_its_own_next_is_refused():
    """The fifth red team's route: the running total's __add__ advanced the same accumulate, which
    freed the total that the item's reflected __radd__ then got. Refused with the hold."""
    code = textwrap.dedent(
        """
        import itertools
        from metakernelbench.judge import worker
        worker._hold_compared_items()
        seen = []

        class Total:
            def __add__(self, other):
                try:
                    next(acc)
                    seen.append("advanced")
                except RuntimeError as error:
                    seen.append(str(error))
                return 0

        acc = itertools.accumulate([Total(), 1, 2])
        print(list(acc), seen[:1])
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "itertools.accumulate advanced from inside its own next" in done.stdout, done.stdout
