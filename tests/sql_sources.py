"""Where the SQL text handed to execute() comes from, followed back through the source (an AST check).

The property: SQL text is built only from literals written in the module. A value reaches the database
only as a bound parameter (`?`), never as part of the statement. The checker follows each execute()'s first
argument back through names, whatever they are called: an assignment, a `for` over literal statements, a
module constant made of literals (containers, or records of a class defined in the module, holding only
literals; a subscript of it picks one of them), a function parameter (then every call of that function in
the module must pass such SQL), an f-string whose every value is itself such text or an `int(...)`.
Anything else (a `%` or `.format()`, text from a parameter some caller fills from input, a name it cannot
trace) is reported.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

EXECUTE = frozenset({"execute", "executemany", "executescript"})
_CONTAINERS = frozenset({"tuple", "list", "dict", "set", "frozenset"})
_Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass
class SqlSources:
    """One module's execute() calls and the sources of their SQL text."""

    tree: ast.Module
    where: str = "<module>"
    _parents: dict[ast.AST, ast.AST] = field(default_factory=dict)
    _constants: dict[str, ast.expr] = field(default_factory=dict)
    _visiting: set[tuple[int, str]] = field(default_factory=set)
    _classes: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        for parent in ast.walk(self.tree):
            for child in ast.iter_child_nodes(parent):
                self._parents[child] = parent
        self._classes = {s.name for s in self.tree.body if isinstance(s, ast.ClassDef)} | _CONTAINERS
        for statement in self.tree.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target, value = statement.targets[0], statement.value
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                target, value = statement.target, statement.value
            else:
                continue
            if isinstance(target, ast.Name):
                self._constants[target.id] = value

    def problems(self) -> list[str]:
        """One line for each execute() whose SQL text is not traced back to literals."""
        found = []
        for node in ast.walk(self.tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in EXECUTE
                and node.args
                and not self._literal_text(node.args[0])
            ):
                found.append(f"{self.where}:{node.lineno}: SQL from {ast.unparse(node.args[0])[:80]}")
        return found

    # -- what counts as text made of literals -----------------------------------------------------------

    def _literal_text(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str | int)
        if isinstance(node, ast.JoinedStr):
            return all(
                self._literal_text(part.value) if isinstance(part, ast.FormattedValue) else True
                for part in node.values
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._literal_text(node.left) and self._literal_text(node.right)
        if isinstance(node, ast.IfExp):
            return self._literal_text(node.body) and self._literal_text(node.orelse)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):  # LITERALS.get(key)
            return node.func.attr == "get" and self._literal_source(node.func.value)
        if isinstance(node, ast.Call):  # int(...) cannot carry SQL; no other call is trusted
            return isinstance(node.func, ast.Name) and node.func.id == "int"
        if isinstance(node, ast.Subscript | ast.Attribute):  # picks a part of a literal source
            return self._literal_source(node.value)
        if isinstance(node, ast.Name):
            return self._literal_source(node)
        return False

    def _literal_source(self, node: ast.expr) -> bool:
        """`node` (a name, or what is subscripted) holds only literals written in this module."""
        if isinstance(node, ast.Subscript | ast.Attribute):
            return self._literal_source(node.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            # LITERALS.items() / .values() / .keys(): still the literals
            return node.func.attr in ("items", "values", "keys") and self._literal_source(node.func.value)
        if not isinstance(node, ast.Name):
            return self._made_of_literals(node)
        key = (id(self._enclosing_function(node)), node.id)
        if key in self._visiting:
            return False  # a cycle proves nothing
        self._visiting.add(key)
        try:
            return self._name_source(node)
        finally:
            self._visiting.discard(key)

    def _name_source(self, name: ast.Name) -> bool:
        function = self._enclosing_function(name)
        while function is not None:
            bindings = [
                b
                for b in ast.walk(function)
                if self._binds(b, name.id) and self._enclosing_function(b) is function
            ]
            parameter = _parameter_index(function, name.id)
            if bindings or parameter is not None:
                sources_ok = all(self._binding_is_literal(b) for b in bindings)
                if parameter is not None:
                    sources_ok = sources_ok and self._every_caller_passes_literal(function, *parameter)
                return sources_ok
            function = self._enclosing_function(function)
        return self._constant_of_literals(name.id)

    def _constant_of_literals(self, name: str) -> bool:
        key = (0, name)
        if name not in self._constants or key in self._visiting:
            return False
        self._visiting.add(key)
        try:
            return self._made_of_literals(self._constants[name])
        finally:
            self._visiting.discard(key)

    def _made_of_literals(self, node: ast.expr) -> bool:
        """Only literals (strings, numbers, containers of them, constructors called on them, other such
        module constants): no input can be inside."""
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return all(self._made_of_literals(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return all(self._made_of_literals(k) for k in node.keys if k is not None) and all(
                self._made_of_literals(v) for v in node.values
            )
        if isinstance(node, ast.Starred):
            return self._made_of_literals(node.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self._classes:
            # a record or container built from literals (a function's result is not: input() is a call too)
            return all(self._made_of_literals(a) for a in node.args) and all(
                self._made_of_literals(k.value) for k in node.keywords
            )
        if isinstance(node, ast.Name):
            return self._constant_of_literals(node.id)
        return False

    # -- bindings -----------------------------------------------------------------------------------------

    @staticmethod
    def _binds(node: ast.AST, name: str) -> bool:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.For | ast.AsyncFor | ast.NamedExpr):
            targets = [node.target]
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            targets = [node.optional_vars]
        return any(isinstance(t, ast.Name) and t.id == name for target in targets for t in ast.walk(target))

    def _binding_is_literal(self, node: ast.AST) -> bool:
        if isinstance(node, ast.For | ast.AsyncFor):
            return self._literal_source(node.iter) or self._made_of_literals(node.iter)
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr) and node.value is not None:
            return self._literal_text(node.value) or self._literal_source(node.value)
        return False  # +=, with … as: not traced

    def _every_caller_passes_literal(self, function: _Function, index: int, name: str) -> bool:
        is_method = bool(function.args.args) and function.args.args[0].arg in ("self", "cls")
        calls = [
            node
            for node in ast.walk(self.tree)
            if isinstance(node, ast.Call)
            and (
                (isinstance(node.func, ast.Name) and node.func.id == function.name)
                or (isinstance(node.func, ast.Attribute) and node.func.attr == function.name)
            )
        ]
        if not calls:
            return False  # called from elsewhere: what it is given cannot be seen here
        for call in calls:
            position = index - 1 if is_method and isinstance(call.func, ast.Attribute) else index
            given = next((k.value for k in call.keywords if k.arg == name), None)
            if given is None and 0 <= position < len(call.args):
                given = call.args[position]
            if given is None or not self._literal_text(given):
                return False
        return True

    def _enclosing_function(self, node: ast.AST) -> _Function | None:
        parent = self._parents.get(node)
        while parent is not None and not isinstance(parent, _Function):
            parent = self._parents.get(parent)
        return parent


def _parameter_index(function: _Function, name: str) -> tuple[int, str] | None:
    positional = [*function.args.posonlyargs, *function.args.args]
    for index, arg in enumerate(positional):
        if arg.arg == name:
            return index, name
    if any(arg.arg == name for arg in function.args.kwonlyargs):
        return len(positional) + 1000, name  # keyword only: callers must name it
    return None


def sql_problems(source: str, where: str = "<module>") -> list[str]:
    """The execute() calls in `source` whose SQL text is not made only of the module's literals."""
    return SqlSources(ast.parse(source), where).problems()
