#include "libmkb/judge/detail/audit_codes.h"

namespace mkb::audit_detail {

std::vector<std::pair<std::string, std::string>> CodeDescriptions() {
  return {
      {kImport,
       "imports or reaches a module SPEC §2 forbids (other compilers, raw CUDA, kernel "
       "libraries, processes, threads, network, files), also inside a chain (torch.ctypes)"},
      {kCall,
       "calls or references a forbidden function (torch.compile, CUDA Graphs, os.system, "
       "open, ...), through any alias or module"},
      {kDynamicImport,
       "imports modules at run time (__import__, importlib, pkgutil, a library helper that "
       "imports or resolves by a name given as text)"},
      {kDynamicCode, "runs code built at run time (eval, exec, compile, code objects)"},
      {kDynamicAttribute,
       "reaches attributes by computed name (getattr / setattr with a non-literal name, getattr "
       "passed as a value, operator.attrgetter)"},
      {kIntrospection, "reaches interpreter internals (frames, globals, sys.modules, gc)"},
      {kModuleEscape,
       "passes a module object (bound by import) where the audit cannot follow it: to a "
       "function it does not see, into a container, *args, a yield or raise"},
      {kModulePatch,
       "assigns to attributes of imported modules (patching torch, changing backends), through "
       "any alias"},
      {kJudge, "touches the judge, its profilers or its numerics settings"},
      {kReference, "uses the problem's reference or make_inputs"},
      {kSeed, "reads or sets random seeds"},
      {kSourceEncoding,
       "declares a source encoding other than UTF-8 (Python would run other text than the "
       "audited one)"},
      {kUnparsable,
       "source the audit's parser cannot read the way CPython does (C++ front end only)"},
      {kTooComplex,
       "module aliasing beyond what the audit follows (more than 4096 paths for one name)"},
      {kWrongDsl, "imports the other variant's DSL"},
      {kNoDslImport, "does not import the variant's DSL"},
      {kLibraryCompute, "calls library / ATen compute (warning: the runtime audit weighs it)"},
      {kSideStream, "uses side streams (warning: the judge checks outputs on the current stream)"},
  };
}

}  // namespace mkb::audit_detail
