// The static audit's finding codes (SPEC §2), each defined once here with its one-line
// description. Internal to static_audit.cc, its rule tables and its passes.
#ifndef LIBMKB_JUDGE_DETAIL_AUDIT_CODES_H_
#define LIBMKB_JUDGE_DETAIL_AUDIT_CODES_H_

#include <string>
#include <utility>
#include <vector>

namespace mkb::audit_detail {

inline constexpr char kImport[] = "static.forbidden_import";
inline constexpr char kCall[] = "static.forbidden_call";
inline constexpr char kDynamicImport[] = "static.dynamic_import";
inline constexpr char kDynamicCode[] = "static.dynamic_code";
inline constexpr char kDynamicAttribute[] = "static.dynamic_attribute";
inline constexpr char kIntrospection[] = "static.introspection";
inline constexpr char kModuleEscape[] = "static.module_escape";
inline constexpr char kModulePatch[] = "static.module_patch";
inline constexpr char kJudge[] = "static.judge_access";
inline constexpr char kReference[] = "static.reference_access";
inline constexpr char kSeed[] = "static.seed_access";
inline constexpr char kSourceEncoding[] = "static.source_encoding";
inline constexpr char kUnparsable[] = "static.unparsable";
inline constexpr char kTooComplex[] = "static.too_complex";
inline constexpr char kWrongDsl[] = "static.wrong_dsl";
inline constexpr char kNoDslImport[] = "static.no_dsl_import";
inline constexpr char kLibraryCompute[] = "static.library_compute";
inline constexpr char kSideStream[] = "static.side_stream";

// Every code above with its description, in the order docs and --help list them
// (StaticAuditCodes in static_audit.h).
std::vector<std::pair<std::string, std::string>> CodeDescriptions();

}  // namespace mkb::audit_detail

#endif  // LIBMKB_JUDGE_DETAIL_AUDIT_CODES_H_
