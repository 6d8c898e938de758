#include "libmkb/judge/static_audit.h"

#include <catch2/catch_test_macros.hpp>
#include <string>
#include <vector>

namespace {

std::vector<mkb::v1::AuditFinding> Audit(const std::string& source,
                                         mkb::v1::Dsl dsl = mkb::v1::DSL_UNSPECIFIED) {
  mkb::StaticAuditOptions options;
  options.dsl = dsl;
  return mkb::StaticAudit(source, options);
}

bool Has(const std::vector<mkb::v1::AuditFinding>& findings, const std::string& code,
         mkb::v1::FindingSeverity severity = mkb::v1::SEVERITY_VIOLATION) {
  for (const auto& f : findings) {
    if (f.code() == code && f.severity() == severity) return true;
  }
  return false;
}

bool AnyViolation(const std::vector<mkb::v1::AuditFinding>& findings) {
  for (const auto& f : findings) {
    if (f.severity() == mkb::v1::SEVERITY_VIOLATION) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("an honest kernel has no violations") {
  const std::string source = R"py(
import torch
import cutlass
import cutlass.cute as cute

@cute.jit
def launch(x: cute.Tensor):
    pass

def solve(x, residual, weight):
    out = torch.empty_like(x)   # allocation is glue
    return out.view(-1, 4) , x @ weight  # a library matmul is only a warning
)py";
  auto findings = Audit(source, mkb::v1::CUTEDSL);
  CHECK_FALSE(AnyViolation(findings));
  CHECK(Has(findings, "static.library_compute", mkb::v1::SEVERITY_WARNING));
}

TEST_CASE("forbidden imports, through aliases too") {
  CHECK(Has(Audit("import triton\n"), "static.forbidden_import"));
  CHECK(Has(Audit("from torch.utils import cpp_extension\n"), "static.forbidden_import"));
  CHECK(Has(Audit("import torch.utils.cpp_extension as ext\n"), "static.forbidden_import"));
  CHECK(Has(Audit("import subprocess, os\n"), "static.forbidden_import"));
  CHECK(Has(Audit("import metakernelbench\n"), "static.judge_access"));
  CHECK(Has(Audit("from . import helper\n"), "static.forbidden_import"));
  CHECK(Has(Audit("if True: import ctypes\n"), "static.forbidden_import"));
}

TEST_CASE("forbidden calls resolve import aliases") {
  CHECK(Has(Audit("import torch as t\nf = t.compile(g)\n"), "static.forbidden_call"));
  CHECK(Has(Audit("from torch import compile as c\n"), "static.forbidden_call"));
  CHECK(Has(Audit("import torch\ng = torch.cuda.CUDAGraph()\n"), "static.forbidden_call"));
  CHECK(Has(Audit("import os\nos.system('ls')\n"), "static.forbidden_call"));
  CHECK(Has(Audit("import os\nos.execvp('ls', [])\n"), "static.forbidden_call"));
  CHECK(Has(Audit("import torch\ntorch.manual_seed(0)\n"), "static.seed_access"));
  CHECK(Has(Audit("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"),
            "static.module_patch"));
  CHECK(Has(Audit("import torch\ntorch.allclose = None\n"), "static.module_patch"));
  // An annotated assignment names a type, it does not patch it (TVMScript: `x: T.let = e`).
  CHECK_FALSE(Has(Audit("from tvm.script import tirx as T\nx: T.let = 1\ny: T.float32 = 2\n"),
                  "static.module_patch"));
}

TEST_CASE("dynamic code and introspection") {
  CHECK(Has(Audit("eval('1')\n"), "static.dynamic_code"));
  CHECK(Has(Audit("x = __import__('os')\n"), "static.dynamic_import"));
  CHECK(
      Has(Audit("import torch\nf = getattr(torch, 'com' + 'pile')\n"), "static.dynamic_attribute"));
  CHECK(Has(Audit("import torch\nf = getattr(torch, 'compile')\n"), "static.forbidden_call"));
  CHECK(Has(Audit("def f(): pass\ng = f.__globals__\n"), "static.introspection"));
  CHECK(Has(Audit("x = ().__class__.__bases__[0].__subclasses__()\n"), "static.introspection"));
  CHECK(Has(Audit("import sys\nm = sys.modules\n"), "static.introspection"));
  CHECK(Has(Audit("open('/proc/self/mem')\n"), "static.forbidden_call"));
  CHECK(Has(Audit("x = f\"{__import__('os').system('id')}\"\n"), "static.dynamic_import"));
}

TEST_CASE("the problem's reference is off limits, a kernel's own names are not") {
  CHECK(Has(Audit("out = reference(x)\n"), "static.reference_access"));
  CHECK(Has(Audit("inputs = make_inputs('full')\n"), "static.reference_access"));
  CHECK_FALSE(AnyViolation(Audit("def reference(x):\n    return x\nout = reference(1)\n")));
}

TEST_CASE("strings and comments do not count") {
  CHECK_FALSE(AnyViolation(Audit("# import triton\ns = 'import subprocess; os.system(1)'\n")));
  CHECK_FALSE(AnyViolation(Audit("doc = \"\"\"\nimport ctypes\n\"\"\"\n")));
}

TEST_CASE("the variant's DSL is required, the other one forbidden") {
  auto missing = Audit("import torch\ndef solve(x): return x\n", mkb::v1::TIRX);
  CHECK(Has(missing, "static.no_dsl_import"));
  auto both = Audit("import tvm\nimport cutlass\n", mkb::v1::TIRX);
  CHECK(Has(both, "static.wrong_dsl"));
  CHECK_FALSE(AnyViolation(Audit("import tvm\nfrom tvm.script import tirx as T\n", mkb::v1::TIRX)));
  mkb::StaticAuditOptions options;
  options.dsl = mkb::v1::CUTEDSL;
  options.require_dsl = false;
  CHECK(Has(mkb::StaticAudit("import torch\n", options), "static.no_dsl_import",
            mkb::v1::SEVERITY_SKIPPED));
}

TEST_CASE("policy: permissive, allow and deny") {
  auto findings = Audit("import triton\nimport torch\ny = torch.matmul(a, b)\n");
  mkb::v1::AuditPolicy permissive;
  permissive.set_permissive(true);
  auto relaxed = findings;
  mkb::ApplyAuditPolicy(permissive, &relaxed);
  CHECK_FALSE(AnyViolation(relaxed));
  mkb::v1::AuditPolicy deny;
  deny.add_deny("static.library_compute");
  auto strict = findings;
  mkb::ApplyAuditPolicy(deny, &strict);
  CHECK(Has(strict, "static.library_compute"));
  CHECK(mkb::AuditModule("ctypes").has_value());
  CHECK_FALSE(mkb::AuditModule("torch").has_value());
  CHECK(mkb::AuditModule("torch.utils.cpp_extension").has_value());
}
