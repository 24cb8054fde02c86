"""Fewer driver-to-JVM round trips: the session's JVM view remembers what it has looked up, and Python lists cross
to the JVM in a few calls instead of one per element.

Why: on the driver every py4j call is a round trip over a local socket, ~0.5-0.9 ms on the 2-core VMs measured
(docs/benchmarks.md, session 30), and a warm devsample nightly made ~38,600 of them. Two kinds did no work:

- **look-ups** (~11,000): PySpark finds ``functions``, ``PythonUtils``, ``SparkSession`` ... by name through
  ``sc._jvm`` on every use, and each static method by name again (``functions.col`` alone 2,600 times), each a
  reflection call that gives the same answer every time;
- **list building** (~5,600): py4j turns a Python list into an ``ArrayList`` with one ``add`` call per element
  (a 15-column ``select``: 17 calls).

What changes is only how many calls carry the same requests: the view still asks the JVM the first time, a
static field is read anew each time (its value may change), and a list holds the same elements in the same order
in a mutable ``ArrayList``. ``spark.fewer_gateway_calls: false`` turns both off.
"""
from __future__ import annotations

import threading
import weakref
from typing import Any

from py4j.java_gateway import JavaClass, JavaMember, JavaPackage, JVMView
from py4j.protocol import register_input_converter

_ELEMENTS_PER_CALL = 10  # java.util.List.of has fixed-arity overloads up to ten elements


class _RememberingView(JVMView):
    """A JVM view that keeps each class and package it found (in the instance, so Python finds it next time
    without calling ``__getattr__``)."""

    def __getattr__(self, name: str) -> Any:
        return _kept(self, name, super().__getattr__(name))


class _RememberingPackage(JavaPackage):
    def __getattr__(self, name: str) -> Any:
        return _kept(self, name, super().__getattr__(name))


class _RememberingClass(JavaClass):
    """A class that keeps its static methods and nested classes once found; a static field is read every time."""

    def __getattr__(self, name: str) -> Any:
        found = super().__getattr__(name)
        if isinstance(found, (JavaMember, JavaClass)):
            found = _kept(self, name, found)
        return found


def _kept(holder: Any, name: str, found: Any) -> Any:
    if isinstance(found, JavaClass) and not isinstance(found, _RememberingClass):
        found = _RememberingClass(found._fqn, found._gateway_client)
    elif isinstance(found, JavaPackage) and not isinstance(found, _RememberingPackage):
        found = _RememberingPackage(found._fqn, found._gateway_client, found._jvm_id)
    if isinstance(found, (JavaClass, JavaPackage, JavaMember)):
        holder.__dict__[name] = found
    return found


class _ListInFewCalls:
    """py4j input converter for a list or tuple of two or more elements, none of them None: ``new ArrayList(
    List.of(first ten))`` plus ``addAll(List.of(next ten))`` per further ten, instead of ``new ArrayList()`` and an
    ``add`` per element. ``List.of`` refuses nulls, so a list holding None is left to py4j's own converter."""

    def __init__(self) -> None:
        self._list_of: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()

    def can_convert(self, value: Any) -> bool:
        # `is None`, not `None in value`: == on a JavaObject element would be a JVM call of its own
        return (isinstance(value, (list, tuple)) and len(value) > 1
                and not any(element is None for element in value))

    def convert(self, value: Any, gateway_client: Any) -> Any:
        list_of = self._list_of.get(gateway_client)
        if list_of is None:
            list_of = self._list_of[gateway_client] = JavaClass("java.util.List", gateway_client).of
        java_list = JavaClass("java.util.ArrayList", gateway_client)(list_of(*value[:_ELEMENTS_PER_CALL]))
        for start in range(_ELEMENTS_PER_CALL, len(value), _ELEMENTS_PER_CALL):
            java_list.addAll(list_of(*value[start:start + _ELEMENTS_PER_CALL]))
        return java_list


_installed = {"converter": False}
_lock = threading.Lock()


def install(enabled: bool = True) -> bool:
    """Make the active SparkContext's JVM view remember its look-ups and register the list converter (once per
    process). A session without a py4j JVM view (Spark Connect) is left alone. Returns whether they are in place."""
    from pyspark import SparkContext

    if not enabled:
        return False
    view = getattr(SparkContext, "_jvm", None)
    if type(view) is not JVMView and not isinstance(view, _RememberingView):
        return False
    with _lock:
        if type(view) is JVMView:
            remembering = _RememberingView(view._gateway_client, view._jvm_name, id=view._id)
            if "_jvm_object" in view.__dict__:  # a view made for a JVM-side object lives as long as it
                remembering._jvm_object = view.__dict__["_jvm_object"]
            SparkContext._jvm = remembering
        if not _installed["converter"]:
            register_input_converter(_ListInFewCalls(), prepend=True)
            _installed["converter"] = True
    return True
